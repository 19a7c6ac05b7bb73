"""Section 3, attention grows with T²: sizes, FLOPs and timings against the sequence length."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import AttentionScaling, LengthTimings

from ..figures import Chart, line_chart

MB = 1024 * 1024


def _against_length(
    lengths: Sequence[int], series: dict, title: str, y_title: str, legend_always: bool = False
) -> go.Figure:
    """Lines against the sequence length T, both axes on a log scale; legend_always: a legend for one line too."""
    fig = line_chart(lengths, series, title=title)
    if legend_always:
        fig.layout.showlegend = True
    fig.update_layout(
        xaxis={"type": "log", "title": {"text": "sequence length T (log scale)"}, "tickvals": list(lengths)},
        legend={"orientation": "h", "y": -0.3},
        height=420,
        yaxis={"type": "log", "title": {"text": f"{y_title} (log scale)"}},
    )
    return fig


def scaling_model_text(config, name: str) -> str:
    return (
        f"On {name}: {config.n_layers} layers, {config.n_heads} heads, D = {config.d_model}, d_ff = {config.d_ff}, "
        f"a position table of {config.max_positions}; sequence of 1."
    )


def scaling_sizes_figure(s: AttentionScaling, timings: LengthTimings | None = None) -> go.Figure:
    series = {"from the shapes: L·H·T²·4 bytes": [b / MB for b in s.weights_bytes]}
    if timings is not None:
        series["measured: the tensors a real run returned"] = [b / MB for b in timings.weights_bytes]
    title = "Size of the (1, H, T, T) attention weights, every layer"
    # the legend names the source even when only the shapes' line is drawn
    return _against_length(s.lengths, series, title, "megabytes", legend_always=True)


def scaling_alt(s: AttentionScaling) -> str:
    return (
        f"The attention weights grow from {s.weights_bytes[0] / MB:.2f} MB at T={s.lengths[0]} to "
        f"{s.weights_bytes[-1] / MB:.1f} MB at T={s.lengths[-1]}: four times per doubling."
    )


def scaling_table(s: AttentionScaling, t: LengthTimings | None = None) -> pd.DataFrame:
    table = pd.DataFrame(
        {
            "T": s.lengths,
            "weights MB (shapes)": [b / MB for b in s.weights_bytes],
            "FLOPs, projections + FFN": s.flops_linear,
            "FLOPs, attention": s.flops_attention,
        }
    )
    if t is not None:
        table["weights MB (measured)"] = [b / MB for b in t.weights_bytes]
        table["ms, attention"] = [x * 1e3 for x in t.attention_seconds]
        table["ms, forward"] = [x * 1e3 for x in t.forward_seconds]
    return table


def scaling_sizes_chart(s: AttentionScaling, t: LengthTimings | None) -> Chart:
    return Chart(scaling_sizes_figure(s, t), scaling_alt(s), scaling_table(s, t))


def scaling_flops_figure(s: AttentionScaling) -> go.Figure:
    series = {
        "projections + FFN (grows like T)": s.flops_linear,
        "attention scores and mixing (grows like T²)": s.flops_attention,
    }
    return _against_length(s.lengths, series, "FLOPs of one forward pass, by where they go", "FLOPs")


def flops_alt(s: AttentionScaling) -> str:
    return (
        f"At T={s.lengths[-1]} attention takes {s.flops_attention[-1]:,} FLOPs and the rest {s.flops_linear[-1]:,}; "
        f"the two are equal at T = 2D + d_ff = {s.crossover}."
    )


def scaling_flops_chart(s: AttentionScaling) -> Chart:
    return Chart(scaling_flops_figure(s), flops_alt(s))


def timing_figure(t: LengthTimings) -> go.Figure:
    series = {
        f"attention only (fitted exponent {t.exponent_attention:.2f})": [x * 1e3 for x in t.attention_seconds],
        f"whole forward pass (fitted exponent {t.exponent_forward:.2f})": [x * 1e3 for x in t.forward_seconds],
    }
    return _against_length(t.lengths, series, "Wall time against T, measured on this (shared) server", "milliseconds")


def timing_alt(t: LengthTimings) -> str:
    return (
        f"Attention took {t.attention_seconds[0] * 1e3:.3f} ms at T={t.lengths[0]} and "
        f"{t.attention_seconds[-1] * 1e3:.1f} ms at T={t.lengths[-1]} (fitted exponent {t.exponent_attention:.2f}); "
        f"the whole pass {t.exponent_forward:.2f}."
    )


def timing_chart(t: LengthTimings) -> Chart:
    return Chart(timing_figure(t), timing_alt(t))


def quadratic_text(s: AttentionScaling) -> str:
    return (
        "Every layer keeps an H × T × T grid of weights: doubling T quadruples it. The FLOPs split shows why the "
        "whole pass still looks almost linear at BERT's lengths: projections and FFN cost (8D² + 4D·d_ff) per "
        f"token, attention 4D·T per token, and the two are equal only at T = 2D + d_ff = {s.crossover}. "
        "Timings are measured once per server on request (a few seconds) and kept; the exponent is the slope of "
        "log time against log T, on a machine other people are using too."
    )
