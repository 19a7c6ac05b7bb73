"""Figures for the attention lesson: pure builders, encoder_core results in -> plotly Figures out, and the
Charts the page shows (each figure with its text alternative and its numbers)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.attention import (
    ROW_MARGIN,
    DropLastResult,
    LookAhead,
    MaskComparison,
    RowFacts,
    SeedReading,
    WordContrast,
)

from .figures import (
    Chart,
    after_layer_names,
    as_array,
    attention_heatmap,
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
    """(bidirectional, causal): one head under both masks. The bidirectional chart, shown alone while the
    student predicts what the causal mask does, has only its own numbers behind it; the causal one has both."""
    fig_bi, fig_causal = mask_pair_figures(cmp, tokens)
    where = f"layer {cmp.layer}, head {cmp.head}"
    alt_bi = (
        f"Bidirectional weights at {where}: every cell may be non-zero; "
        f"every row sums to 1 (largest error {cmp.max_row_sum_error:.1e})."
    )
    alt_causal = (
        f"Causal weights at {where}: everything above the diagonal is {cmp.causal_upper_max:.1f}; the last row "
        f"equals the bidirectional one (max difference {cmp.last_row_max_diff:.1f})."
    )
    labels = token_labels(tokens)
    return (
        Chart(fig_bi, alt_bi, lambda: long_table(cmp.bidirectional, labels, "bidirectional")),
        Chart(fig_causal, alt_causal, lambda: mask_pair_table(cmp, tokens)),
    )


def long_table(weights, query_labels: Sequence[str], name: str) -> pd.DataFrame:
    """One (T, T) grid in long form: one line per (query, key) with its value."""
    w = as_array(weights)
    labels = np.asarray(query_labels, dtype=object)
    n = len(labels)
    return pd.DataFrame({"query": np.repeat(labels, n), "key": np.tile(labels, n), name: w.ravel()})


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
    alt_bi = (
        f"Worked example without a mask: row 0 is {numbers_text(ex.row0)}, so {ex.future_mass_row0} of its weight "
        "is on later positions."
    )
    alt_causal = (
        "The same example with the causal mask: row 0 puts all its weight on itself; the last row is "
        f"unchanged (difference {reading.last_row_max_diff:.1f})."
    )
    bidirectional = long_table(ex.weights_bidirectional, SEED_LABELS, "bidirectional")
    return Chart(fig_bi, alt_bi, bidirectional), Chart(fig_causal, alt_causal, seed001_table(reading))


def head_chart(grid, tokens: Sequence[str], name: str, layer: int, head: int, where: str, alt: str) -> Chart:
    """One trained head's grid on a sentence, its numbers in long form."""
    title = f"{name}, layer {layer}, head {head}, {where}"
    fig = attention_heatmap(grid, tokens, title=title, title_above_keys=True)
    return Chart(fig, alt, lambda: long_table(grid, token_labels(tokens), "weight"))


def look_ahead_example_chart(grid, tokens: Sequence[str], name: str, layer: int, head: int, next_mass: float) -> Chart:
    """A trained head on an example sentence: the habit the student then applies to their own sentence."""
    alt = (
        f"Layer {layer}, head {head} of {name} on “{' '.join(tokens[1:-1])}”: on average a token gives "
        f"{next_mass:.2f} of its attention to the token right after it."
    )
    return head_chart(grid, tokens, name, layer, head, "on an example", alt)


def look_ahead_chart(grid, tokens: Sequence[str], la: LookAhead, name: str) -> Chart:
    """The same head on the student's sentence: the word's row, and the token it attends to most."""
    win = la.options[la.answer]
    alt = (
        f"On your sentence, “{tokens[la.query]}” (token {la.query}) gives “{tokens[win]}” (token {win}) "
        f"{la.weights[la.answer]:.2f} of its attention, the most among "
        + ", ".join(f"“{tokens[p]}” ({w:.2f})" for p, w in zip(la.options, la.weights))
        + "."
    )
    return head_chart(grid, tokens, name, la.layer, la.head, "on your sentence", alt)


def head_grid_chart(grid, tokens: Sequence[str], name: str, layer: int, head: int) -> Chart:
    """The same head on the student's sentence, where no word has a clear favourite to ask about."""
    alt = f"Layer {layer}, head {head} of {name} on your sentence: every row sums to 1."
    return head_chart(grid, tokens, name, layer, head, "on your sentence", alt)


def rows_not_asked(facts: RowFacts, n_tokens: int) -> str:
    """Why the row question is not asked on this head (RowFacts.askable is False)."""
    others = [str(i) for i in facts.unchanged if i != n_tokens - 1]
    why = (
        f"On this head rows {', '.join(others)} come out the same as well: they already put (almost) nothing on "
        "later tokens."
        if others
        else f"On this head the first token puts only {facts.future[0]:.1e} of its attention on later tokens (under "
        f"{ROW_MARGIN:g}), so its row barely changes either."
    )
    return why + " With no one clear answer, nothing is asked here: move the head slider to predict on another head."
