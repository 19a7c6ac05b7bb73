"""Section 1, input: the three embeddings, their sum and its LayerNorm, and one row read after the LayerNorm."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.block import NormAffine, NormRow, TensorSummary, TokenStats
from encoder_core.model.model import EmbeddingParts

from ..figures import Chart
from .common import tensor_heatmap, tensor_table

# chart key -> (EmbeddingParts field, figure title)
EMBEDDINGS = {
    "emb_token": ("token", "token embedding [T, d]"),
    "emb_position": ("position", "position embedding [T, d]"),
    "emb_segment": ("segment", "segment embedding [T, d]"),
    "emb_sum": ("summed", "sum: token + position + segment"),
    "emb_norm": ("normed", "after the embedding LayerNorm (layer 0's input)"),
}


def input_intro(n_tokens: int, d: int) -> str:
    return (
        f"The model never sees words, only ids. Each of the {n_tokens} tokens picks a row of three tables "
        f"of width d = {d}: its word's row, its position's row and its segment's row (sentence A = 0, B = 1). "
        "The three are added, then one LayerNorm rescales each token's vector. "
        "Colours: red negative, blue positive, white 0."
    )


def embedding_heatmaps(parts: EmbeddingParts, tokens: Sequence[str]) -> dict[str, go.Figure]:
    """The three embeddings, their sum and its LayerNorm, by chart key."""
    return {key: tensor_heatmap(getattr(parts, part), tokens, title=title) for key, (part, title) in EMBEDDINGS.items()}


def embedding_alts(sizes: Mapping[str, TensorSummary], normed: TokenStats) -> dict[str, str]:
    """The text alternative of each embedding heatmap, by chart key. sizes: core.summarize_parts of the
    embeddings; normed: the token stats of their LayerNorm's output."""

    def shape_and_size(part: str) -> str:
        size = sizes[part]
        return f"{size.rows} tokens by {size.cols} features, largest magnitude {size.largest:.3f}."

    return {
        "emb_token": f"The word-embedding row of each token: {shape_and_size('token')}",
        "emb_position": f"The row t of the learned position table: {shape_and_size('position')}",
        "emb_segment": f"The segment-A row, the same for every token of one sentence: {shape_and_size('segment')}",
        "emb_sum": f"The sum of the three embeddings; its largest magnitude is {sizes['summed'].largest:.3f}.",
        "emb_norm": f"After LayerNorm every token has mean {normed.largest_mean:.1e} or less in size "
        f"and standard deviation {normed.mean_std:.4f}.",
    }


def embedding_table(parts: EmbeddingParts, tokens: Sequence[str], key: str) -> pd.DataFrame:
    """The numbers behind one embedding heatmap."""
    return tensor_table(getattr(parts, EMBEDDINGS[key][0]), tokens)


def embedding_tables(parts: EmbeddingParts, tokens: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The numbers behind each embedding heatmap, by chart key."""
    return {key: embedding_table(parts, tokens, key) for key in EMBEDDINGS}


def embedding_charts(
    parts: EmbeddingParts, tokens: Sequence[str], sizes: Mapping[str, TensorSummary], normed: TokenStats
) -> dict[str, Chart]:
    """The three embeddings, their sum and its LayerNorm, by chart key (sizes, normed: as embedding_alts)."""
    figures, alts = embedding_heatmaps(parts, tokens), embedding_alts(sizes, normed)
    return {key: Chart(figures[key], alts[key], partial(embedding_table, parts, tokens, key)) for key in EMBEDDINGS}


def norm_row_note(row: NormRow, affine: NormAffine, token: str, sqrt_d: float) -> str:
    """The embeddings' LayerNorm read on one row: its statistics, and what γ and β did to them."""
    if affine.identity:
        learned = f"γ = 1 and β = 0 here, as initialised: every row leaves with spread 1 and length √d = {sqrt_d:.2f}"
    else:
        learned = (
            f"here γ runs from {affine.gain.lo:.3f} to {affine.gain.hi:.3f} and β from {affine.bias.lo:.3f} to "
            f"{affine.bias.hi:.3f}, so the spread that comes out is γ's doing"
        )
    return (
        f"After the LayerNorm, the row of “{token}” has mean {row.mean_after:.3f} and standard deviation "
        f"{row.std_after:.3f} (before it: {row.std_before:.3f}). LayerNorm subtracts each row's mean, divides by its "
        f"standard deviation, then multiplies by a learned gain γ and adds a learned bias β ({learned}), whatever "
        "spread the row came in with."
    )
