"""Section 8, pitfalls 3-4, labels and the loss: the leaky labels, and the loss averaged over every position."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import LossAveraging

from ..figures import Chart, grouped_bars


def pitfall_leak_metric(summary) -> tuple[str, str]:
    acc, top5 = summary.final_train_accuracy, summary.held_out_top5
    return (
        "Training accuracy / held-out top-5, leaky vs correct",
        f"{acc['leaky']:.0%} / {top5['leaky']:.0%} vs {acc['correct']:.0%} / {top5['correct']:.0%}",
    )


def averaging_figure(la: LossAveraging) -> go.Figure:
    b = la.breakdown
    fig = grouped_bars(
        ["loss", "gradient norm at the logits"],
        {
            f"mean over the {b.n_counted} chosen positions": [b.mean, la.grad_norm_right],
            f"mean over all {b.n_positions} positions": [b.wrong_mean_all_positions, la.grad_norm_wrong],
        },
        title="The loss and its gradient, averaged two ways",
        x_title="quantity",
        y_title="value",
        numbered=False,
        text_format=".3f",
    )
    fig.update_layout(yaxis={"rangemode": "tozero"})
    return fig


def averaging_alt(la: LossAveraging) -> str:
    b = la.breakdown
    return (
        f"Right mean {b.mean:.3f}, mean over every position {b.wrong_mean_all_positions:.3f}: both the loss and "
        f"its gradient shrink by {b.n_counted}/{b.n_positions} = {la.scale:.3f}."
    )


def averaging_table(la: LossAveraging) -> pd.DataFrame:
    b = la.breakdown
    return pd.DataFrame(
        {
            "average": ["over chosen positions (right)", "over every position (wrong)"],
            "divided by": [b.n_counted, b.n_positions],
            "loss": [b.mean, b.wrong_mean_all_positions],
            "gradient norm": [la.grad_norm_right, la.grad_norm_wrong],
        }
    )


def averaging_chart(la: LossAveraging) -> Chart:
    return Chart(averaging_figure(la), averaging_alt(la), averaging_table(la))
