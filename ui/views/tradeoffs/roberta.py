"""Section 6, RoBERTa, dynamic masking: distinct masking patterns seen under each schedule."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import ROBERTA_CHANGES, SCHEDULES, MaskingViews

from ..figures import CATEGORICAL, Chart, line_chart


def views_figure(v: MaskingViews) -> go.Figure:
    series = {name: v.distinct[name] for name in SCHEDULES}
    series.update({f"{name}, expected": v.expected[name] for name in SCHEDULES})
    fig = line_chart(
        v.epochs,
        series,
        title=f"Distinct masked views, {v.n_chosen} of {v.n_eligible} chosen",
        x_title="epochs",
        y_title="distinct sets of chosen positions seen",
        colors=CATEGORICAL[:3] * 2,
    )
    for trace in fig.data[len(SCHEDULES) :]:
        trace.mode, trace.line.dash, trace.line.width = "lines", "dot", 1.5
    fig.update_layout(yaxis={"rangemode": "tozero"})
    return fig


def views_alt(v: MaskingViews) -> str:
    last = {name: v.distinct[name][-1] for name in SCHEDULES}
    names = list(SCHEDULES)
    return (
        f"After {v.epochs[-1]} epochs: {last[names[0]]} view with one static pattern, {last[names[1]]} with BERT's "
        f"10 static copies, {last[names[2]]} with dynamic masking, out of {v.n_patterns:,} possible."
    )


def views_table(v: MaskingViews) -> pd.DataFrame:
    table = pd.DataFrame({"epoch": v.epochs})
    for name in SCHEDULES:
        table[f"{name}: drawn"] = v.distinct[name]
        table[f"{name}: expected"] = v.expected[name]
    return table


def views_chart(v: MaskingViews) -> Chart:
    return Chart(views_figure(v), views_alt(v), views_table(v))


def views_summary_table(v: MaskingViews) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "schedule": name,
                "distinct views, drawn": v.distinct[name][-1],
                "expected (closed form)": round(v.expected[name][-1], 2),
                "positions ever scored": f"{v.coverage[name]:.0%}",
                "expected": f"{v.expected_coverage[name]:.0%}",
            }
            for name in SCHEDULES
        ]
    )


def views_text(v: MaskingViews) -> str:
    return (
        f"With exact 15% masking, {v.n_chosen} of this sentence's {v.n_eligible} eligible positions are chosen, "
        f"one of C({v.n_eligible}, {v.n_chosen}) = {v.n_patterns:,} possible sets. Static masking fixes the "
        "pattern once; BERT's preprocessing made 10 copies; RoBERTa draws a new one every epoch. With m draws from "
        "C equally likely sets the expected number of distinct ones is C(1 − (1 − 1/C)^m), the dotted lines."
    )


def roberta_table() -> pd.DataFrame:
    return pd.DataFrame(ROBERTA_CHANGES, columns=["", "BERT", "RoBERTa"])
