"""Figures for the attention lesson: pure builders, encoder_core results in -> plotly Figures out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.attention import DropLastResult, MaskComparison, SeedReading, WordContrast

from .figures import PAIR, as_array, esc, grouped_bars, heatmap_pair, token_labels

SEED_LABELS = ("x0", "x1", "x2", "x3")


def mask_pair_figures(cmp: MaskComparison, tokens: Sequence[str]) -> tuple[go.Figure, go.Figure]:
    """(bidirectional, causal) heatmaps of one head, the same layer input under both masks."""
    where = f"layer {cmp.layer}, head {cmp.head}"
    titles = (f"Bidirectional (no mask), {where}", f"Causal mask, {where}")
    return heatmap_pair((cmp.bidirectional, cmp.causal), tokens, titles)


def pair_long_table(a, b, query_labels: Sequence[str], names: tuple[str, str]) -> pd.DataFrame:
    """Two (T, T) grids in long form: one line per (query, key) with both values."""
    a, b = as_array(a), as_array(b)
    labels = np.asarray(query_labels, dtype=object)
    n = len(labels)
    return pd.DataFrame(
        {"query": np.repeat(labels, n), "key": np.tile(labels, n), names[0]: a.ravel(), names[1]: b.ravel()}
    )


def mask_pair_table(cmp: MaskComparison, tokens: Sequence[str]) -> pd.DataFrame:
    return pair_long_table(cmp.bidirectional, cmp.causal, token_labels(tokens), ("bidirectional", "causal"))


def row_sums_table(cmp: MaskComparison, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "query": token_labels(tokens),
            "row sum, bidirectional": cmp.row_sums_bidirectional,
            "row sum, causal": cmp.row_sums_causal,
        }
    )


def drop_last_figure(res: DropLastResult, tokens: Sequence[str]) -> go.Figure:
    """Grouped bars: per earlier token, how far its final vector moved when the last token went."""
    fig = grouped_bars(
        list(tokens[: res.positions]),
        {"causal mask": res.shift_causal, "bidirectional": res.shift_bidirectional},
        title=f"Drop the last token ({esc(tokens[res.positions])}): how far each earlier output moves",
        y_title="L2 distance of the final vector",
    )
    fig.update_traces(texttemplate="%{y:.3g}", textposition="outside")  # a 0 bar is invisible without its label
    fig.update_layout(xaxis={"title": {"text": "earlier token"}})
    return fig


def drop_last_table(res: DropLastResult, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "token": token_labels(tokens[: res.positions]),
            "shift, causal": res.shift_causal,
            "shift, bidirectional": res.shift_bidirectional,
        }
    )


def stage_names(n_stages: int) -> list[str]:
    """hidden_states order: the embeddings, then the output of each layer."""
    return ["embeddings"] + [f"after layer {i}" for i in range(1, n_stages)]


def word_contrast_figure(res: WordContrast) -> go.Figure:
    """Distance between the word's vectors in the two sentences, at every stage of the model."""
    stages = stage_names(len(res.distance_causal))
    fig = go.Figure()
    for name, values, color in (
        ("causal mask", res.distance_causal, PAIR[0]),
        ("bidirectional", res.distance_bidirectional, PAIR[1]),
    ):
        fig.add_bar(
            x=stages,
            y=as_array(values),
            name=name,
            marker_color=color,
            text=[f"{v:.3g}" for v in values],
            textposition="outside",
            hovertemplate="%{x}: %{y:.4g}<extra>" + name + "</extra>",
        )
    fig.update_layout(
        barmode="group",
        title={"text": f"“{esc(res.word)}” in the two sentences: distance between its vectors"},
        yaxis={"title": {"text": "L2 distance"}},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def word_contrast_table(res: WordContrast) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "stage": stage_names(len(res.distance_causal)),
            "distance, causal": res.distance_causal,
            "distance, bidirectional": res.distance_bidirectional,
        }
    )


def seed001_figures(reading: SeedReading) -> tuple[go.Figure, go.Figure]:
    ex = reading.example
    titles = ("Worked example: no mask", "Worked example: causal mask")
    return heatmap_pair((ex.weights_bidirectional, ex.weights_causal), SEED_LABELS, titles, numbered=False)


def seed001_table(reading: SeedReading) -> pd.DataFrame:
    ex = reading.example
    return pair_long_table(ex.weights_bidirectional, ex.weights_causal, SEED_LABELS, ("bidirectional", "causal"))
