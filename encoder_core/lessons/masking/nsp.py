"""The other objective: next-sentence prediction's pairs."""

from __future__ import annotations

from dataclasses import dataclass

from ...data.corpus import nsp_pairs
from ...model.tokenizer import WordPieceTokenizer


@dataclass
class NSPExample:
    """One next-sentence-prediction pair as BERT would feed it: [CLS] A [SEP] B [SEP], segments 0 then 1."""

    sentence_a: str
    sentence_b: str
    is_next: bool
    tokens: list[str]
    segments: list[int]


def nsp_examples(tokenizer: WordPieceTokenizer, n: int = 6, seed: int = 0) -> list[NSPExample]:
    """n pairs from the corpus's NSP builder (half real continuations, half random), encoded as a pair."""
    out = []
    for pair in nsp_pairs(n, seed=seed):
        enc = tokenizer.encode(pair.sentence_a, pair.sentence_b)
        out.append(NSPExample(pair.sentence_a, pair.sentence_b, pair.is_next, enc.tokens, enc.segments))
    return out
