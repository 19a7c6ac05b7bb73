"""Input: the three embeddings, summed and normalised, and what spread LayerNorm leaves each row with."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .walk import Span, span, token_stats


@dataclass(frozen=True)
class NormRow:
    """One token's row before and after a LayerNorm (population statistics, as LayerNorm computes them)."""

    position: int
    std_before: float
    mean_after: float
    std_after: float  # 1 times the LayerNorm's gain when its gain is 1 and its bias 0; computed, never assumed


def norm_row(before: torch.Tensor, after: torch.Tensor, position: int) -> NormRow:
    """before, after (T, D): what went into a LayerNorm and what came out; the statistics of one row."""
    if not 0 <= position < before.shape[0]:
        raise ValueError(f"position must be in [0, {before.shape[0] - 1}], got {position}")
    stats_before, stats_after = (
        token_stats(before[position : position + 1]),
        token_stats(after[position : position + 1]),
    )
    return NormRow(position, float(stats_before.std[0]), float(stats_after.mean[0]), float(stats_after.std[0]))


@dataclass(frozen=True)
class NormAffine:
    """A LayerNorm's learned gain gamma and bias beta, as ranges over the features (1 and 0 as initialised)."""

    gain: Span
    bias: Span

    @property
    def identity(self) -> bool:
        """True when gamma is 1 and beta 0 everywhere: the LayerNorm only centres and scales."""
        return self.gain == Span(1.0, 1.0) and self.bias == Span(0.0, 0.0)


def norm_affine(norm: nn.LayerNorm) -> NormAffine:
    with torch.no_grad():
        return NormAffine(span(norm.weight), span(norm.bias))


def first_word_position(n_tokens: int) -> int:
    """The row a question about one token asks about: the first after [CLS] (the only one if there is none)."""
    return 1 if n_tokens > 1 else 0


# A named misconception's value closer than this share to the answer cannot be told apart from it: it is not
# used to narrow the tolerance (a student holding it gives, near enough, the right number).
TRAP_MIN_GAP = 0.1


def norm_std_traps(row: NormRow, d_model: int) -> dict[str, float]:
    """What a student holding each named misconception would give for a row's spread after the LayerNorm:
    "length", the row's length √d taken for its spread; "kept", the spread before (the LayerNorm taken to keep
    it). Any value within TRAP_MIN_GAP of the answer is left out."""
    values = {"length": math.sqrt(d_model), "kept": row.std_before}
    return {name: v for name, v in values.items() if abs(v / row.std_after - 1) >= TRAP_MIN_GAP}
