"""The source documents' worked examples, run through encoder_core's own attention."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..model.self_attention import attention


@dataclass
class SeedExample:
    weights_bidirectional: torch.Tensor  # (4, 4)
    weights_causal: torch.Tensor  # (4, 4)
    row0: list[float]  # rounded to 3 places, as published
    future_mass_row0: float  # weight row 0 puts on positions 1..3, rounded to 3 places
    row_sums: list[float]


def seed001_example() -> SeedExample:
    """torch.manual_seed(7); X (4, 3); Wq, Wk (3, 3); Wv (3, 2); scale sqrt(3).
    Published: row 0 = [0.258, 0.020, 0.044, 0.677], future mass 0.742."""
    g = torch.Generator().manual_seed(7)
    X = torch.randn(4, 3, generator=g)
    Wq, Wk, Wv = torch.randn(3, 3, generator=g), torch.randn(3, 3, generator=g), torch.randn(3, 2, generator=g)
    _, w = attention(X @ Wq, X @ Wk, X @ Wv)
    _, wc = attention(X @ Wq, X @ Wk, X @ Wv, causal=True)
    return SeedExample(
        w,
        wc,
        [round(float(v), 3) for v in w[0]],
        round(float(w[0, 1:].sum()), 3),
        [round(float(v), 3) for v in w.sum(-1)],
    )


def seed002_scores(T: int = 6, d_k: int = 4, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Exercise 3's Q and K: numpy default_rng(0), standard normal (T, d_k) each, as float64 tensors."""
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((T, d_k))
    K = rng.standard_normal((T, d_k))
    return torch.from_numpy(Q), torch.from_numpy(K)
