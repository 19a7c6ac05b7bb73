"""A word-level tokenizer for the small model, with BERT's special tokens and input format.

Words outside the vocabulary become [UNK] and are reported as such, so a page can
show exactly what the model sees. Special tokens typed by hand ("[MASK]") are kept
as those tokens: that is how a student asks for a fill-mask prediction.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import torch

from .lexicon import SPECIAL_TOKENS, default_vocabulary

PAD, UNK, CLS, SEP, MASK = SPECIAL_TOKENS
_SPECIAL_RE = "|".join(re.escape(t.lower()) for t in SPECIAL_TOKENS)
# A special token, or a run of letters/digits/apostrophe-free word chars, or one other symbol.
_TOKEN_RE = re.compile(rf"{_SPECIAL_RE}|[^\W_]+|[^\w\s]|_", re.UNICODE)


@dataclass
class Encoding:
    """One sequence: tokens as the model sees them, their ids, and segment ids (0 = A, 1 = B)."""

    tokens: list[str]
    ids: list[int]
    segments: list[int]
    words: list[str]  # the text piece each token came from ("" for added specials)
    unknown: list[str] = field(default_factory=list)  # words that became [UNK]
    truncated: int = 0  # how many tokens were cut to fit

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def split_words(self) -> list[tuple[str, list[str]]]:
        """The words cut into several word pieces, each with its pieces, in order: ("doormat", ["door", "##mat"]).

        WordPiece marks a piece that continues a word with ##; a word tokenizer never splits, so this is empty.
        """
        groups: list[tuple[str, list[str]]] = []
        for i, token in enumerate(self.tokens):
            continues = token.startswith("##") and i > 0 and self.words[i - 1] != "" and groups
            if continues:
                groups[-1][1].append(token)
            else:
                groups.append((self.words[i], [token]))
        return [(word, pieces) for word, pieces in groups if len(pieces) > 1]


@dataclass
class Batch:
    """Sequences padded at the end to one width. key_padding_mask: True = ignore (PyTorch's convention)."""

    ids: torch.Tensor  # (B, T) long
    segments: torch.Tensor  # (B, T) long
    key_padding_mask: torch.Tensor  # (B, T) bool
    tokens: list[list[str]]
    lengths: list[int]


def clean_text(text: str) -> str:
    """Normalise what a student typed: NFKC, no control or zero-width characters, lower case."""
    text = unicodedata.normalize("NFKC", str(text))
    # Whitespace controls (tab, newline) separate words; other controls and zero-width
    # characters are dropped, not spaced, so "ca\u200bt" stays one word (as BERT does).
    kept = [" " if ch.isspace() else "" if unicodedata.category(ch)[0] == "C" else ch for ch in text]
    return "".join(kept).lower()


class WordTokenizer:
    def __init__(self, vocabulary: list[str] | None = None):
        vocab = list(vocabulary) if vocabulary is not None else default_vocabulary()
        if vocab[: len(SPECIAL_TOKENS)] != list(SPECIAL_TOKENS):
            raise ValueError(f"vocabulary must start with the special tokens {SPECIAL_TOKENS}")
        if len(set(vocab)) != len(vocab):
            raise ValueError("vocabulary has duplicate entries")
        self.vocab = vocab
        self.token_to_id = {tok: i for i, tok in enumerate(vocab)}
        self.pad_id, self.unk_id, self.cls_id, self.sep_id, self.mask_id = range(len(SPECIAL_TOKENS))

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def special_ids(self) -> list[int]:
        return list(range(len(SPECIAL_TOKENS)))

    def split(self, text: str) -> list[str]:
        """Lower-case and split into words and single punctuation marks."""
        pieces = _TOKEN_RE.findall(clean_text(text))
        return [p.upper() if p.upper() in SPECIAL_TOKENS else p for p in pieces]

    def _to_ids(self, words: list[str]) -> tuple[list[str], list[int], list[str]]:
        tokens, ids, unknown = [], [], []
        for w in words:
            if w in self.token_to_id:
                tokens.append(w)
                ids.append(self.token_to_id[w])
            else:
                tokens.append(UNK)
                ids.append(self.unk_id)
                unknown.append(w)
        return tokens, ids, unknown

    def encode(
        self, text_a: str, text_b: str | None = None, *, max_length: int | None = None, truncate: bool = False
    ) -> Encoding:
        """[CLS] A [SEP] (B [SEP]). Segment A = [CLS] + A + its [SEP]; segment B = B + the final [SEP].

        Longer than max_length: ValueError, unless truncate=True, which cuts the longer
        sentence first (as BERT's pipelines do) and records how many tokens were cut.
        """
        words_a = self.split(text_a)
        words_b = self.split(text_b) if text_b is not None else None
        n_special = 2 if words_b is None else 3
        cut = 0
        if max_length is not None:
            if max_length < n_special:
                raise ValueError(f"max_length must be at least {n_special}, got {max_length}")
            total = len(words_a) + len(words_b or []) + n_special
            if total > max_length:
                if not truncate:
                    raise ValueError(
                        f"input has {total} tokens, more than max_length={max_length}; pass truncate=True to cut it"
                    )
                cut = total - max_length
                for _ in range(cut):
                    if words_b is not None and len(words_b) > len(words_a):
                        words_b.pop()
                    else:
                        words_a.pop()
        toks_a, ids_a, unk_a = self._to_ids(words_a)
        tokens = [CLS] + toks_a + [SEP]
        ids = [self.cls_id] + ids_a + [self.sep_id]
        words = [""] + words_a + [""]
        segments = [0] * len(ids)
        unknown = list(unk_a)
        if words_b is not None:
            toks_b, ids_b, unk_b = self._to_ids(words_b)
            tokens += toks_b + [SEP]
            ids += ids_b + [self.sep_id]
            words += words_b + [""]
            segments += [1] * (len(ids_b) + 1)
            unknown += unk_b
        return Encoding(tokens, ids, segments, words, unknown, cut)

    def pad(self, encodings: list[Encoding], *, extra_pads: int = 0) -> Batch:
        """Pad at the end to the longest length (+ extra_pads) and build the key padding mask."""
        return pad_encodings(encodings, self.pad_id, PAD, extra_pads=extra_pads)

    def decode(self, ids) -> list[str]:
        out = []
        for i in ids.tolist() if isinstance(ids, torch.Tensor) else ids:
            if not 0 <= int(i) < self.vocab_size:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {self.vocab_size})")
            out.append(self.vocab[int(i)])
        return out


def pad_encodings(encodings: list[Encoding], pad_id: int, pad_token: str, *, extra_pads: int = 0) -> Batch:
    """Pad at the end to the longest length (+ extra_pads); key_padding_mask True = ignore that key.

    Shared by every tokenizer here: the batch layout does not depend on how text was split.
    """
    if not encodings:
        raise ValueError("cannot pad an empty list of encodings")
    if extra_pads < 0:
        raise ValueError(f"extra_pads must be >= 0, got {extra_pads}")
    width = max(len(e) for e in encodings) + extra_pads
    ids = torch.full((len(encodings), width), pad_id, dtype=torch.long)
    segments = torch.zeros((len(encodings), width), dtype=torch.long)
    mask = torch.ones((len(encodings), width), dtype=torch.bool)
    tokens = []
    for row, e in enumerate(encodings):
        n = len(e)
        ids[row, :n] = torch.tensor(e.ids, dtype=torch.long)
        segments[row, :n] = torch.tensor(e.segments, dtype=torch.long)
        mask[row, :n] = False
        tokens.append(e.tokens + [pad_token] * (width - n))
    return Batch(ids, segments, mask, tokens, [len(e) for e in encodings])
