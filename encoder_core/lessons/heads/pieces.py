"""Words in pieces: how words split into WordPiece pieces, and the weight that joins them back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby

import torch

from .run import SPECIALS


@dataclass
class WordSplit:
    word: str  # as typed
    pieces: list[str]  # what the tokenizer made of it

    @property
    def n_pieces(self) -> int:
        return len(self.pieces)


def fragmentation(tokenizer, text: str) -> list[WordSplit]:
    """How each typed word splits into word pieces (WordPieceTokenizer.split_words)."""
    return [WordSplit(word, list(pieces)) for word, pieces in tokenizer.split_words(text)]


@dataclass
class SentenceSplits:
    """How the words of one or more named sentences split into word pieces, in reading order."""

    splits: list[tuple[str, WordSplit]]  # (the sentence's name, one word's split)

    @property
    def n_words(self) -> int:
        return len(self.splits)

    @property
    def n_pieces(self) -> int:
        return sum(split.n_pieces for _, split in self.splits)

    @property
    def n_split_words(self) -> int:
        """Words cut into two or more pieces."""
        return sum(split.n_pieces > 1 for _, split in self.splits)


def sentence_splits(tokenizer, sentences: Sequence[tuple[str, str | None]]) -> SentenceSplits:
    """fragmentation of each (name, text); a text of None (no second sentence) is left out."""
    return SentenceSplits(
        [(name, split) for name, text in sentences if text is not None for split in fragmentation(tokenizer, text)]
    )


def word_index(tokens: Sequence[str]) -> list[int]:
    """Which word each token belongs to (-1 for special tokens). A WordPiece token starting with
    '##' continues the word before it; any other token starts a new word."""
    out, current = [], -1
    for tok in tokens:
        if tok in SPECIALS:
            out.append(-1)
        elif tok.startswith("##") and current >= 0 and out and out[-1] == current:
            out.append(current)
        else:
            current += 1
            out.append(current)
    return out


def piece_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """(first, last) positions, both included, of every word made of two or more pieces."""
    spans, first = [], 0
    for word, run in groupby(word_index(tokens)):  # a word's pieces are next to each other
        n = len(list(run))
        if word >= 0 and n > 1:
            spans.append((first, first + n - 1))
        first += n
    return spans


@dataclass
class SameWordMass:
    """How much the pieces of split words attend to the other pieces of the same word."""

    mass: torch.Tensor  # (L, H): mean over pieces of split words of the weight on sibling pieces
    uniform: float  # what a head spreading weight evenly over all tokens would give
    n_pieces: int  # pieces that belong to a word of two or more pieces
    n_split_words: int

    @property
    def best_head(self) -> tuple[int, int]:
        """(layer, head) that puts the most weight on sibling pieces (the first one on a tie)."""
        layer, head = divmod(int(self.mass.argmax()), self.mass.shape[1])
        return layer, head

    def at(self, layer: int, head: int) -> float:
        return float(self.mass[layer, head])


def same_word_mass(attentions: torch.Tensor, tokens: Sequence[str]) -> SameWordMass | None:
    """None when no word was split (nothing to measure)."""
    words = torch.tensor(word_index(tokens))
    T = len(tokens)
    if attentions.shape[-1] != T:
        raise ValueError(f"{T} tokens for attention over {attentions.shape[-1]} positions")
    same = (words[:, None] == words[None, :]) & (words[:, None] >= 0)
    same.fill_diagonal_(False)  # sibling pieces only, not the piece itself
    rows = same.any(dim=1).nonzero().flatten()
    if rows.numel() == 0:
        return None
    a = attentions.float()
    mass = (a[..., rows, :] * same[rows].float()).sum(-1).mean(-1)  # (L, H)
    uniform = float(same[rows].sum(-1).float().mean()) / T
    n_split = len({int(w) for w in words[rows]})
    return SameWordMass(mass, uniform, int(rows.numel()), n_split)
