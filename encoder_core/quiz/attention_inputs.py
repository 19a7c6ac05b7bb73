"""Attention inputs the generators of several lessons draw, and what dropping the last token does to the outputs."""

from __future__ import annotations

import random

import torch

from ..model.self_attention import attention


def scores_to_qk(scores: list[float]) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries and keys whose scaled scores are `scores` in every row: d_k = 1, q = 1, k_j = score_j."""
    k = torch.tensor(scores, dtype=torch.float64)[:, None]
    return torch.ones_like(k), k


def draw_scores(r: random.Random, T: int) -> list[float]:
    """Small scores with one decimal, so a student can redo the softmax on a calculator."""
    return [round(r.uniform(-2.0, 2.5), 1) for _ in range(T)]


def random_qkv(g: torch.Generator, T: int, d: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return tuple(torch.randn(T, d, generator=g, dtype=torch.float64) for _ in range(3))


def drop_last_gaps(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> dict[bool, float]:
    """How far the first T − 1 outputs move when the last token is dropped, by whether the mask is causal."""
    gap = {}
    for causal in (True, False):
        whole, _ = attention(q, k, v, causal=causal)
        shorter, _ = attention(q[:-1], k[:-1], v[:-1], causal=causal)
        gap[causal] = float((whole[:-1] - shorter).abs().max())
    return gap
