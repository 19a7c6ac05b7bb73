"""Figures and tables for the padding lesson: pure builders, encoder_core results in -> Figures out, and
the Charts the page shows (each figure with its text alternative and its numbers)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.padding import FastPathPads, PaddedAttention, PadLeak, ZeroKeyPadCheck
from encoder_core.model.tokenizer import Batch

from .attention import long_table, pair_long_table
from .figures import (
    CELLS_ARE_WORDS,
    Chart,
    as_array,
    esc,
    grouped_bars,
    heatmap_pair,
    label_margin,
    line_chart,
    numbers_text,
    per_token_table,
    token_labels,
)

ZERO_KEY_LABELS = ("x0", "x1", "x2", "[PAD]")
SEQUENCE_NAMES = ("pair", "single")


def batch_table(batch: Batch, names: Sequence[str] = SEQUENCE_NAMES) -> pd.DataFrame:
    """The batch as the model receives it: per sequence, its tokens, ids, segments and mask row.

    Every cell is text, so a column can hold a token in one row and a number in the next.
    """
    width = batch.ids.shape[1]
    rows = []
    for b, name in enumerate(names[: batch.ids.shape[0]]):
        rows.append({"sequence": name, "row": "token", **{str(t): batch.tokens[b][t] for t in range(width)}})
        rows.append({"sequence": name, "row": "id", **{str(t): str(int(batch.ids[b, t])) for t in range(width)}})
        segments = ["AB"[int(s)] for s in batch.segments[b]]  # pads carry segment id 0, shown as A
        rows.append({"sequence": name, "row": "segment", **{str(t): segments[t] for t in range(width)}})
        mask = ["True" if bool(m) else "False" for m in batch.key_padding_mask[b]]
        rows.append({"sequence": name, "row": "ignore key (mask)", **{str(t): mask[t] for t in range(width)}})
    return pd.DataFrame(rows)


# Real token / [PAD]: a light and a dark grey-blue that stay apart in greyscale and for every
# common colour-vision deficiency; the token is written in each cell, so colour is never the only cue.
BATCH_COLOURS = ((0.0, "#cfe2f3"), (0.5, "#cfe2f3"), (0.5, "#5b6770"), (1.0, "#5b6770"))


BATCH_ROWS = ("token", "segment", "mask")  # what each sequence's three rows of the figure hold


def batch_rows(batch: Batch, names: Sequence[str] = SEQUENCE_NAMES) -> list[tuple[str, list[str], list[int]]]:
    """The figure's rows: per sequence, (label, cell texts, 1 where the key is ignored) for its tokens, its
    segment ids (A/B; a pad's is 0, shown as A) and its key padding mask (True: ignore this key)."""
    rows = []
    for b, name in enumerate(names[: batch.ids.shape[0]]):
        mask = [int(bool(m)) for m in batch.key_padding_mask[b]]
        cells = {
            "token": [esc(t) for t in batch.tokens[b]],
            "segment": ["AB"[int(s)] for s in batch.segments[b]],
            "mask": ["True" if m else "False" for m in mask],
        }
        rows += [(f"{name}: {row}", cells[row], mask) for row in BATCH_ROWS]
    return rows


def batch_figure(batch: Batch, names: Sequence[str] = SEQUENCE_NAMES) -> go.Figure:
    """The batch as the model receives it: per sequence its tokens, segment row and mask row, a cell per
    position, dark where the key is ignored."""
    rows = batch_rows(batch, names)
    n_sequences, width = batch.ids.shape[0], batch.ids.shape[1]
    fig = go.Figure(
        go.Heatmap(
            z=[mask for _, _, mask in rows],
            x=[str(t) for t in range(width)],
            y=[label for label, _, _ in rows],
            text=[cells for _, cells, _ in rows],
            texttemplate="%{text}",
            zmin=0,
            zmax=1,
            colorscale=[list(c) for c in BATCH_COLOURS],
            showscale=False,
            xgap=2,
            ygap=2,
            hovertemplate="%{y}, position %{x}: %{text}<extra></extra>",
            meta=CELLS_ARE_WORDS,  # the words are the chart: lecture mode shrinks them, never drops them
        )
    )
    fig.update_layout(
        title={"text": f"The batch: {n_sequences} sequences, {width} positions; dark = [PAD], masked out"},
        xaxis={"title": {"text": "position"}, "side": "top"},
        yaxis={"title": {"text": "sequence and row"}, "autorange": "reversed"},
        margin={"l": label_margin([label for label, _, _ in rows]), "r": 10, "t": 90, "b": 10},
        height=40 * len(rows) + 130,
    )
    return fig


def batch_chart(batch: Batch) -> Chart:
    """The [pair, single] batch: its cells, and how many positions each sequence really fills."""
    width, (n_pair, n_single) = batch.ids.shape[1], batch.lengths
    alt = (
        f"The batch is {width} positions wide: the pair fills {n_pair} of them and the single sentence "
        f"{n_single}; each has a token row, a segment row and a mask row, and its [PAD] positions are dark, marked "
        "True ('ignore this key') in its mask row."
    )
    return Chart(batch_figure(batch), alt, batch_table(batch))


def pads_text(batch: Batch, names: Sequence[str] = SEQUENCE_NAMES) -> str:
    """How many [PAD] each sequence ends with: 'the pair is followed by **0 [PAD]**, the single sentence by **7**'."""
    pads = [batch.ids.shape[1] - n for n in batch.lengths]
    full = {"pair": "the pair", "single": "the single sentence"}
    parts = [f"{full.get(name, name)} by **{p} [PAD]**" for name, p in zip(names, pads)]
    return parts[0].replace(" by ", " is followed by ", 1) + "".join(f", {p}" for p in parts[1:])


def padded_attention_figures(pa: PaddedAttention, tokens: Sequence[str]) -> tuple[go.Figure, go.Figure]:
    """(with mask, without mask) heatmaps of the padded row at one layer and head."""
    where = f"layer {pa.layer}, head {pa.head}"
    titles = (f"With the padding mask, {where}", f"Without the mask, {where}")
    return heatmap_pair((pa.masked, pa.unmasked), tokens, titles)


def padded_attention_table(pa: PaddedAttention, tokens: Sequence[str]) -> pd.DataFrame:
    return pair_long_table(pa.masked, pa.unmasked, token_labels(tokens), ("with mask", "without mask"))


def padded_attention_charts(pa: PaddedAttention, tokens: Sequence[str]) -> tuple[Chart, Chart]:
    """(with mask, without mask). The masked chart, shown alone while the student predicts the pads' share
    without the mask, has only its own numbers behind it; the unmasked one has both."""
    fig_m, fig_u = padded_attention_figures(pa, tokens)
    alt_m = (
        f"With the mask, the single sentence's {pa.n_real} real tokens put weight "
        f"{pa.masked_pad_column_max:.1f} on every pad key."
    )
    alt_u = (
        f"Without the mask, the real tokens put up to {max(pa.pad_mass_unmasked, default=0):.3f} of "
        "their attention on pads."
    )
    return (
        Chart(fig_m, alt_m, lambda: long_table(pa.masked, token_labels(tokens), "with mask")),
        Chart(fig_u, alt_u, lambda: padded_attention_table(pa, tokens)),
    )


def pad_mass_figure(pa: PaddedAttention, tokens: Sequence[str]) -> go.Figure:
    fig = grouped_bars(
        list(tokens[: pa.n_real]),
        {"with mask": pa.pad_mass_masked, "without mask": pa.pad_mass_unmasked},
        title="Attention each real token puts on the pads",
        y_title="total weight on [PAD] keys",
        x_title="real token of the single sentence",
        text_format=".3f",
    )
    fig.update_layout(yaxis={"range": [0, 1.1]})
    return fig


def pad_mass_table(pa: PaddedAttention, tokens: Sequence[str]) -> pd.DataFrame:
    columns = {"weight on pads, with mask": pa.pad_mass_masked, "weight on pads, without mask": pa.pad_mass_unmasked}
    return per_token_table(tokens[: pa.n_real], columns)


def pad_mass_chart(pa: PaddedAttention, tokens: Sequence[str]) -> Chart:
    alt = (
        f"Attention on pads per real token: {numbers_text(pa.pad_mass_masked)} with the mask, "
        f"{numbers_text(pa.pad_mass_unmasked)} without."
    )
    return Chart(pad_mass_figure(pa, tokens), alt, pad_mass_table(pa, tokens))


def leak_curve_figure(pl: PadLeak, mask_on: bool | None = None) -> go.Figure:
    """The gap against the number of pads, both ways; mask_on marks this batch on the curve it is on."""
    fig = line_chart(
        pl.pad_counts,
        {"with mask": pl.curve_masked, "without mask": pl.curve_unmasked},
        title="Pad-leak gap: largest change in a real token's output vs. the sentence alone",
        x_title="number of [PAD] tokens after the sentence",
        y_title="max |change| of a real output",
    )
    if mask_on is not None:
        gap = pl.gap_masked if mask_on else pl.gap_unmasked
        fig.add_scatter(
            x=[pl.n_pads],
            y=[gap],
            name=f"this batch, mask {'on' if mask_on else 'off'}",
            mode="markers",
            marker={"size": 16, "symbol": "circle-open", "color": "#000000", "line": {"width": 3}},
            hovertemplate=f"this batch: {pl.n_pads} pads, gap %{{y:.3g}}<extra></extra>",
        )
    return fig


def leak_curve_table(pl: PadLeak) -> pd.DataFrame:
    return pd.DataFrame(
        {"pads": pl.pad_counts, "gap, with mask": pl.curve_masked, "gap, without mask": pl.curve_unmasked}
    )


def leak_curve_chart(pl: PadLeak, mask_on: bool) -> Chart:
    """The gap against the number of pads, this batch ringed on the curve of its mask setting."""
    gap = f"{pl.gap_masked:.1e}" if mask_on else f"{pl.gap_unmasked:.3g}"
    alt = (
        f"With the mask the gap stays at most {max(pl.curve_masked):.1e} for 0 to {pl.pad_counts[-1]} pads; "
        f"without it, it reaches {max(pl.curve_unmasked):.3g}. The circle is this batch, mask "
        f"{'on' if mask_on else 'off'}: gap {gap}."
    )
    return Chart(leak_curve_figure(pl, mask_on=mask_on), alt, leak_curve_table(pl))


def leak_trend_text(pl: PadLeak) -> str:
    """The unmasked gap at the fewest pads on the curve (above 0) and at the most: the trend the lesson asks about."""
    points = [(pads, gap) for pads, gap in zip(pl.pad_counts, pl.curve_unmasked) if pads > 0]
    if not points:
        return "No pads on the curve: nothing could leak."
    (few, gap_few), (most, gap_most) = points[0], points[-1]
    return (
        f"Without the mask the gap is **{gap_few:.3g}** with {few} pad{'s' if few != 1 else ''} after the sentence "
        f"and **{gap_most:.3g}** with {most}."
    )


def leak_per_token_table(pl: PadLeak, tokens: Sequence[str]) -> pd.DataFrame:
    columns = {"change, with mask": pl.per_token_masked, "change, without mask": pl.per_token_unmasked}
    return per_token_table(tokens[: len(pl.per_token_masked)], columns)


def zero_key_figures(check: ZeroKeyPadCheck) -> tuple[go.Figure, go.Figure]:
    titles = ("Zero-key pad, no mask", "Zero-key pad, masked")
    return heatmap_pair((check.weights_unmasked, check.weights_masked), ZERO_KEY_LABELS, titles, numbered=False)


def zero_key_table(check: ZeroKeyPadCheck) -> pd.DataFrame:
    return pair_long_table(check.weights_unmasked, check.weights_masked, ZERO_KEY_LABELS, ("no mask", "masked"))


def zero_key_charts(check: ZeroKeyPadCheck) -> tuple[Chart, Chart]:
    """(no mask, masked), the same numbers behind both."""
    fig_u, fig_m = zero_key_figures(check)
    table = zero_key_table(check)
    alt_u = (
        f"Unmasked, the zero-key pad takes weight {numbers_text(check.pad_weight_unmasked)} from the three real rows."
    )
    alt_m = (
        f"Masked, the pad column is 0 and the real outputs match the three tokens alone (gap {check.gap_masked:.1f})."
    )
    return Chart(fig_u, alt_u, table), Chart(fig_m, alt_m, table)


def zero_key_outputs_table(check: ZeroKeyPadCheck) -> pd.DataFrame:
    """Each row's 2-d output: alone, masked, unmasked; the pad row has no 'alone'."""
    alone, m, u = as_array(check.outputs_alone), as_array(check.outputs_masked), as_array(check.outputs_unmasked)
    rows = []
    for i, name in enumerate(ZERO_KEY_LABELS):
        rows.append(
            {
                "token": name,
                "alone": f"({alone[i, 0]:.4f}, {alone[i, 1]:.4f})" if i < 3 else "—",
                "masked": f"({m[i, 0]:.4f}, {m[i, 1]:.4f})",
                "no mask": f"({u[i, 0]:.4f}, {u[i, 1]:.4f})",
            }
        )
    return pd.DataFrame(rows)


def fast_path_figure(fp: FastPathPads) -> go.Figure:
    """Pad rows' output norms from torch.nn.TransformerEncoder in train vs eval mode."""
    return grouped_bars(
        [f"pos {p}" for p in fp.pad_positions],
        {"train mode (dropout 0)": fp.norms_train, "eval mode (fast path)": fp.norms_eval},
        title="nn.TransformerEncoder: the [PAD] rows' output norms",
        x_title="pad position",
        y_title="L2 norm of the output",
        numbered=False,
        text_format=".2f",
    )


def fast_path_table(fp: FastPathPads) -> pd.DataFrame:
    return pd.DataFrame({"position": fp.pad_positions, "norm, train": fp.norms_train, "norm, eval": fp.norms_eval})


def fast_path_chart(fp: FastPathPads) -> Chart:
    alt = (
        f"PyTorch's TransformerEncoder gives the pad rows norms of about {max(fp.norms_train):.2f} in "
        f"train mode and {max(fp.norms_eval):.1f} in eval mode; the real tokens agree to "
        f"{fp.real_max_diff:.1e}."
    )
    return Chart(fast_path_figure(fp), alt, fast_path_table(fp))
