"""Real English sentences for the small MLM: WordNet 3.0's example sentences and glosses.

Debian's wordnet-base package ships the database as plain text (/usr/share/wordnet/data.noun,
data.verb, data.adj, data.adv). Each synset line ends with " | " and its gloss: a definition,
often followed by quoted example sentences ("she put her money in the bank" style usage).
The examples are ordinary English sentences written by lexicographers; the definitions are
English too, in a dictionary's register. Licence: WordNet 3.0, Princeton University (NOTICE).

The held-out set is chosen by a hash of each sentence, not by its place in a file, so it
does not move when the files or the reading order change.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path

WORDNET_ENV = "ENCODER_LAB_WORDNET"
DEFAULT_WORDNET_DIR = Path("/usr/share/wordnet")
DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
INSTALL_HINT = "apt-get install wordnet-base (or set ENCODER_LAB_WORDNET to a folder holding data.noun ...)"
HELD_OUT_PERCENT = 5  # of the distinct example sentences, by hash
MIN_WORDS = 3

_QUOTED = re.compile(r'"([^"]*)"')
# Words the held-out test never hides: a guess of "the" there says nothing about context.
FUNCTION_WORDS = frozenset(
    """a an the and or but if of to in on at by for with from into onto over under about as than
    then so not no nor is are was were be been being am do does did has have had will would can
    could shall should may might must it its it's he him his she her hers they them their theirs
    we us our you your i me my this that these those there here who whom whose which what when
    where why how all any some each every one up out off""".split()
)


class WordNetUnavailable(RuntimeError):
    """WordNet's data files are not on this machine."""


def wordnet_dir() -> Path:
    """The folder with WordNet's data.* files: $ENCODER_LAB_WORDNET, else Debian's location."""
    directory = Path(os.environ.get(WORDNET_ENV) or DEFAULT_WORDNET_DIR)
    missing = [name for name in DATA_FILES if not (directory / name).is_file()]
    if missing:
        raise WordNetUnavailable(f"WordNet's {', '.join(missing)} not found in {directory}; {INSTALL_HINT}")
    return directory


@dataclass(frozen=True)
class WordNetText:
    examples: list[str]  # distinct example sentences, in file order
    glosses: list[str]  # distinct definitions (the gloss without its examples), in file order


def _clean(text: str) -> str:
    return " ".join(text.replace("`", "'").split()).strip(" ;")


def read_wordnet(directory: Path | str | None = None) -> WordNetText:
    """Every distinct example sentence (at least MIN_WORDS words) and definition in the data files."""
    directory = wordnet_dir() if directory is None else Path(directory)
    examples: dict[str, None] = {}
    glosses: dict[str, None] = {}
    for name in DATA_FILES:
        with open(directory / name, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" ") or " | " not in line:  # the licence header, indented
                    continue
                gloss = line.split(" | ", 1)[1]
                for quoted in _QUOTED.findall(gloss):
                    sentence = _clean(quoted)
                    if len(sentence.split()) >= MIN_WORDS:
                        examples.setdefault(sentence, None)
                definition = _clean(_QUOTED.sub("", gloss))
                if len(definition.split()) >= MIN_WORDS:
                    glosses.setdefault(definition, None)
    return WordNetText(list(examples), list(glosses))


def is_held_out(sentence: str) -> bool:
    """True for about HELD_OUT_PERCENT % of sentences, fixed by the sentence's own text."""
    digest = hashlib.sha256(sentence.lower().encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % 100 < HELD_OUT_PERCENT


def split_examples(examples: list[str]) -> tuple[list[str], list[str]]:
    """(train, held_out) by is_held_out."""
    train = [s for s in examples if not is_held_out(s)]
    held = [s for s in examples if is_held_out(s)]
    return train, held


@dataclass(frozen=True)
class HiddenWord:
    text: str  # the sentence with one word replaced by [MASK]
    answer: str  # the hidden word, lower case; a single piece of the vocabulary


def hide_one_word(sentences: list[str], tokenizer, seed: int = 0) -> list[HiddenWord]:
    """One example per sentence: a content word that is one whole piece of the vocabulary, hidden.

    Function words are never chosen, nor words the vocabulary splits (one [MASK] could not
    stand for several pieces); sentences with no such word are skipped.
    """
    rng = random.Random(seed)
    out = []
    for sentence in sentences:
        words = sentence.split()
        candidates = [
            i
            for i, w in enumerate(words)
            if w.isalpha() and w.lower() not in FUNCTION_WORDS and w.lower() in tokenizer.token_to_id
        ]
        if not candidates:
            continue
        i = rng.choice(candidates)
        out.append(HiddenWord(" ".join(words[:i] + ["[MASK]"] + words[i + 1 :]), words[i].lower()))
    return out
