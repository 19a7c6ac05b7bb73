"""Everyday English sentences: the English side of Ding, the German-English dictionary.

Debian's trans-de-en package ships Ding's word list as one text file (/usr/share/trans/de-en):
each line is "German :: English", the entries of a line separated by " | ", alternatives by "; ".
Besides words and phrases it holds tens of thousands of example sentences of ordinary spoken and
written English ("Is there any milk left?", "I'd better write this down, otherwise I'll forget it."),
which is the register a student types into a fill-mask box and the one WordNet's definitions lack.
Only whole English sentences are kept: a capital first letter, a full stop, question or exclamation
mark at the end, at least MIN_WORDS words, no dictionary shorthand (sth., sb., <>, slashes).
Licence: Ding, (c) Frank Richter, GPL-2+ (NOTICE). The text is read where Debian installs it and is
not copied into the repository.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

DING_ENV = "ENCODER_LAB_DING"
DEFAULT_DING_FILE = Path("/usr/share/trans/de-en")
INSTALL_HINT = "apt-get install trans-de-en (or set ENCODER_LAB_DING to Ding's de-en file)"
MIN_WORDS = 4
MAX_WORDS = 30

_NOTES = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\([^)]*\)")  # {n}, [coll.], (of sth.)
_SHORTHAND = re.compile(r"\bsth\b|\bsb\b|<>|/|~|\betw\b|\.\.\.|…")
_SENTENCE = re.compile(r"^[A-Z\"'‘“][^\n]*[.?!][\"'’”]?$")


class DingUnavailable(RuntimeError):
    """Ding's de-en file is not on this machine."""


def ding_file() -> Path:
    """Ding's de-en file: $ENCODER_LAB_DING, else Debian's location."""
    path = Path(os.environ.get(DING_ENV) or DEFAULT_DING_FILE)
    if not path.is_file():
        raise DingUnavailable(f"Ding's de-en file not found at {path}; {INSTALL_HINT}")
    return path


def english_sentences_of(line: str) -> list[str]:
    """The whole English sentences on one line of the dictionary (none for a comment or a word entry)."""
    if line.startswith("#") or "::" not in line:
        return []
    out = []
    for entry in line.split("::", 1)[1].split("|"):
        for alternative in entry.split(";"):
            text = " ".join(_NOTES.sub(" ", alternative).replace("’", "'").replace("‘", "'").split())
            text = text.replace(" ,", ",").replace(" .", ".").replace(" ?", "?").replace(" !", "!")
            if (
                _SENTENCE.match(text)
                and not _SHORTHAND.search(text)
                and MIN_WORDS <= len(text.split()) <= MAX_WORDS
                and not text.lower().startswith("to ")
            ):
                out.append(text)
    return out


def read_ding(path: Path | None = None) -> list[str]:
    """Every distinct English example sentence of Ding, lower-cased as the lab's models read, in file order."""
    path = ding_file() if path is None else path
    seen: dict[str, None] = {}
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            for sentence in english_sentences_of(line.rstrip("\n")):
                seen.setdefault(sentence.lower(), None)
    return list(seen)
