"""Figures for the attention lesson: pure builders, encoder_core results in -> plotly Figures out, and the
Charts the page shows (each figure with its text alternative and its numbers)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.attention import DropLastResult, MaskComparison, SeedReading, WordContrast

from .figures import (
    Chart,
    after_layer_names,
    as_array,
    earlier_token_shifts,
    esc,
    grouped_bars,
    heatmap_pair,
    numbers_text,
    per_token_table,
    short_number,
    token_labels,
)

SEED_LABELS = ("x0", "x1", "x2", "x3")


def mask_pair_figures(cmp: MaskComparison, tokens: Sequence[str]) -> tuple[go.Figure, go.Figure]:
    """(bidirectional, causal) heatmaps of one head, the same layer input under both masks."""
    where = f"layer {cmp.layer}, head {cmp.head}"
    titles = (f"Bidirectional (no mask), {where}", f"Causal mask, {where}")
    return heatmap_pair((cmp.bidirectional, cmp.causal), tokens, titles)


def mask_pair_charts(cmp: MaskComparison, tokens: Sequence[str]) -> tuple[Chart, Chart]:
    """(bidirectional, causal): one head under both masks, the same numbers behind both."""
    fig_bi, fig_causal = mask_pair_figures(cmp, tokens)
    table, where = mask_pair_table(cmp, tokens), f"layer {cmp.layer}, head {cmp.head}"
    alt_bi = (
        f"Bidirectional weights at {where}: every cell may be non-zero; "
        f"every row sums to 1 (largest error {cmp.max_row_sum_error:.1e})."
    )
    alt_causal = (
        f"Causal weights at {where}: everything above the diagonal is {cmp.causal_upper_max:.1f}; the last row "
        f"equals the bidirectional one (max difference {cmp.last_row_max_diff:.1f})."
    )
    return Chart(fig_bi, alt_bi, table), Chart(fig_causal, alt_causal, table)


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
    return earlier_token_shifts(
        tokens[: res.positions],
        res.shift_causal,
        res.shift_bidirectional,
        title=f"Drop token {res.positions} ({esc(tokens[res.positions])}): how far each earlier output moves",
        y_title="L2 distance of the final vector",
        text_format=".3g",
    )


def drop_last_table(res: DropLastResult, tokens: Sequence[str]) -> pd.DataFrame:
    columns = {"shift, causal": res.shift_causal, "shift, bidirectional": res.shift_bidirectional}
    return per_token_table(tokens[: res.positions], columns)


def drop_last_chart(res: DropLastResult, tokens: Sequence[str]) -> Chart:
    position = res.positions  # the dropped token: every token before it is compared
    alt = (
        f"Removing token {position} ({tokens[position]}) moves the outputs before it by at most "
        f"{short_number(res.max_causal)} with the causal mask and by up to "
        f"{short_number(res.max_bidirectional)} without it."
    )
    return Chart(drop_last_figure(res, tokens), alt, drop_last_table(res, tokens))


def drop_last_metrics(res: DropLastResult) -> list[tuple[str, str]]:
    return [
        ("Largest shift, causal mask", short_number(res.max_causal)),
        ("Largest shift, bidirectional", short_number(res.max_bidirectional)),
    ]


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


def word_contrast_chart(res: WordContrast) -> Chart:
    alt = (
        f"The final vector of '{res.word}' is {short_number(res.final_distance_causal)} apart between the two "
        f"sentences with the causal mask and {short_number(res.final_distance_bidirectional)} apart without it."
    )
    return Chart(word_contrast_figure(res), alt, word_contrast_table(res))


def word_contrast_metrics(res: WordContrast) -> list[tuple[str, str]]:
    return [
        ("Distance, causal", short_number(res.final_distance_causal)),
        ("Cosine, causal", f"{res.cosine_causal:.4f}"),
        ("Distance, bidirectional", short_number(res.final_distance_bidirectional)),
        ("Cosine, bidirectional", f"{res.cosine_bidirectional:.4f}"),
    ]


def seed001_figures(reading: SeedReading) -> tuple[go.Figure, go.Figure]:
    ex = reading.example
    titles = ("Worked example: no mask", "Worked example: causal mask")
    return heatmap_pair((ex.weights_bidirectional, ex.weights_causal), SEED_LABELS, titles, numbered=False)


def seed001_table(reading: SeedReading) -> pd.DataFrame:
    ex = reading.example
    return pair_long_table(ex.weights_bidirectional, ex.weights_causal, SEED_LABELS, ("bidirectional", "causal"))


def seed001_charts(reading: SeedReading) -> tuple[Chart, Chart]:
    """(no mask, causal mask) for the worked example, the same numbers behind both."""
    ex = reading.example
    fig_bi, fig_causal = seed001_figures(reading)
    table = seed001_table(reading)
    alt_bi = (
        f"Worked example without a mask: row 0 is {numbers_text(ex.row0)}, so {ex.future_mass_row0} of its weight "
        "is on later positions."
    )
    alt_causal = (
        "The same example with the causal mask: row 0 puts all its weight on itself; the last row is "
        f"unchanged (difference {reading.last_row_max_diff:.1f})."
    )
    return Chart(fig_bi, alt_bi, table), Chart(fig_causal, alt_causal, table)
