"""The block lesson's shared walk: one sentence through the embeddings and one layer, with per-token statistics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

import torch

from ...model.model import EmbeddingParts, Encoder, stages_for


@dataclass(frozen=True)
class Span:
    lo: float
    hi: float


def span(values: torch.Tensor | Sequence[float]) -> Span:
    """Smallest and largest value of a tensor or a list of numbers."""
    if isinstance(values, torch.Tensor):
        return Span(float(values.min()), float(values.max()))
    return Span(float(min(values)), float(max(values)))


def span_of(field: str) -> property:
    """A read-only property: the span of the named field."""
    return property(lambda self: span(getattr(self, field)))


@dataclass(frozen=True)
class TensorSummary:
    """What a figure's text alternative says about a (rows, cols) tensor."""

    rows: int
    cols: int
    lo: float
    hi: float
    largest: float  # largest |value|


def summarize(x: torch.Tensor) -> TensorSummary:
    rows, cols = x.shape
    return TensorSummary(rows, cols, float(x.min()), float(x.max()), float(x.abs().max()))


def summarize_parts(parts: EmbeddingParts) -> dict[str, TensorSummary]:
    """Each (T, D) part of the embeddings, by its field name: token, position, segment, summed, normed."""
    return {f.name: summarize(getattr(parts, f.name)) for f in fields(parts)}


def _as_batch(ids) -> torch.Tensor:
    ids = torch.as_tensor(ids, dtype=torch.long)
    return ids[None] if ids.dim() == 1 else ids


# --- per-token statistics ------------------------------------------------------------


@dataclass
class TokenStats:
    """Per token (row), over its features: mean, standard deviation (population, as LayerNorm uses), L2 norm."""

    mean: torch.Tensor  # (T,)
    std: torch.Tensor  # (T,)
    l2: torch.Tensor  # (T,)

    @property
    def largest_mean(self) -> float:
        """The mean furthest from 0: after a LayerNorm, float rounding only."""
        return float(self.mean.abs().max())

    @property
    def mean_std(self) -> float:
        return float(self.std.mean())

    @property
    def mean_l2(self) -> float:
        return float(self.l2.mean())

    std_span = span_of("std")
    l2_span = span_of("l2")


def token_stats(x: torch.Tensor) -> TokenStats:
    """x (T, F): one row per token."""
    mean = x.mean(dim=-1)
    std = ((x - mean[:, None]) ** 2).mean(dim=-1).sqrt()
    l2 = (x * x).sum(dim=-1).sqrt()
    return TokenStats(mean, std, l2)


# --- the walk through embeddings and one block -----------------------------------------


@dataclass
class BlockWalk:
    norm: str
    layer: int
    stages: tuple[str, ...]  # in the order the block computes them
    embeddings: EmbeddingParts  # batch dimension dropped: each (T, D)
    trace: dict[str, torch.Tensor]  # stage -> (T, D), or (T, d_ff) for the FFN's inside
    stats: dict[str, TokenStats]
    block_output: torch.Tensor  # (T, D): what the next layer receives
    d_model: int
    d_ff: int

    @property
    def sqrt_d(self) -> float:
        """A LayerNorm's output norm at initialisation: d features of mean 0 and std 1."""
        return self.d_model**0.5


def walk_block(model: Encoder, ids, segments, layer: int) -> BlockWalk:
    """Run the sentence once and keep the embedding parts and every stage of one layer."""
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer must be in [0, {cfg.n_layers - 1}], got {layer}")
    ids, segments = _as_batch(ids), _as_batch(segments)
    with torch.inference_mode():
        out = model(ids, segments, return_trace=True)
        parts = model.embeddings.parts(ids, segments)
    parts = EmbeddingParts(
        *(t[0].detach() for t in (parts.token, parts.position, parts.segment, parts.summed, parts.normed))
    )
    trace = {name: t[0].detach() for name, t in out.traces[layer].items()}
    return BlockWalk(
        norm=cfg.norm,
        layer=layer,
        stages=stages_for(cfg.norm),
        embeddings=parts,
        trace=trace,
        stats={name: token_stats(t) for name, t in trace.items()},
        block_output=out.hidden_states[layer + 1][0].detach(),
        d_model=cfg.d_model,
        d_ff=cfg.d_ff,
    )


def mean_norm_per_stage(walk: BlockWalk) -> list[float]:
    """Mean over tokens of each stage's L2 norm, in stage order: the scale of the stream through the block."""
    return [walk.stats[s].mean_l2 for s in walk.stages]
