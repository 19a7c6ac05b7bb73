"""Figures for the attention lesson: pure builders, encoder_core results in -> plotly Figures out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.attention import DropLastResult, MaskComparison, SeedReading, WordContrast

from .figures import after_layer_names, as_array, esc, grouped_bars, heatmap_pair, token_labels

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


def row_sums_text(cmp: MaskComparison, tokens: Sequence[str]) -> pd.DataFrame:
    """The row sums as text with 7 decimals, indexed by query: a light table to redraw (st.table)."""
    return row_sums_table(cmp, tokens).set_index("query").map("{:.7f}".format)


def sentence_pair_table(sentences: Sequence[str], tokens: Sequence[Sequence[str]]) -> pd.DataFrame:
    return pd.DataFrame({"sentence": list(sentences), "tokens": [" ".join(t) for t in tokens]})


def drop_last_figure(res: DropLastResult, tokens: Sequence[str]) -> go.Figure:
    """Grouped bars: per earlier token, how far its final vector moved when the last token went."""
    fig = grouped_bars(
        list(tokens[: res.positions]),
        {"causal mask": res.shift_causal, "bidirectional": res.shift_bidirectional},
        title=f"Drop token {res.positions} ({esc(tokens[res.positions])}): how far each earlier output moves",
        y_title="L2 distance of the final vector",
        x_title="earlier token",
        text_format=".3g",
    )
    return fig


def drop_last_table(res: DropLastResult, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "token": token_labels(tokens[: res.positions]),
            "shift, causal": res.shift_causal,
            "shift, bidirectional": res.shift_bidirectional,
        }
    )


def word_contrast_figure(res: WordContrast) -> go.Figure:
    """Distance between the word's vectors in the two sentences, at every stage of the model."""
    return grouped_bars(
        after_layer_names(len(res.distance_causal)),
        {"causal mask": res.distance_causal, "bidirectional": res.distance_bidirectional},
        title=f"“{res.word}” in the two sentences: distance between its vectors",
        y_title="L2 distance",
        x_title="stage of the model",
        numbered=False,
        text_format=".3g",
    )


def word_contrast_table(res: WordContrast) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "stage": after_layer_names(len(res.distance_causal)),
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
