"""Section 5, GELU next to ReLU: the two curves, and the units each leaves active."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.block import ActivationCurves, ActiveUnits

from ..figures import Chart, line_chart
from .common import _values

ACTIVATIONS_INTRO = (
    "BERT's FFN uses GELU, u·Φ(u) with Φ the standard normal CDF; the original Transformer used ReLU. Both are "
    "positive exactly where u > 0, so they leave the same units *active*. The difference is the negative side: "
    "ReLU outputs exactly 0 there (and passes no gradient back), GELU a small negative value."
)

HELD_WIDTH = "the counts here give away how wide the FFN's hidden layer is"


def activation_figure(curves: ActivationCurves) -> go.Figure:
    return line_chart(
        curves.x,
        {"GELU(u) = u Φ(u)": curves.gelu, "ReLU(u) = max(0, u)": curves.relu},
        title="GELU and ReLU",
        x_title="pre-activation u",
        y_title="output",
    )


def activation_table(curves: ActivationCurves) -> pd.DataFrame:
    return pd.DataFrame({"u": _values(curves.x), "GELU": _values(curves.gelu), "ReLU": _values(curves.relu)})


def activation_chart(curves: ActivationCurves) -> Chart:
    span = curves.x_span
    alt = f"GELU and ReLU on [{span.lo:g}, {span.hi:g}]; GELU's lowest value is {curves.lowest_gelu:.3f}."
    return Chart(activation_figure(curves), alt, activation_table(curves))


def active_units_lead(layer: int, total: int, n_tokens: int, d_ff: int) -> str:
    return f"On this sentence, layer {layer}'s FFN has {total:,} pre-activations ({n_tokens} tokens × {d_ff} units):"


def active_units_metrics(units: ActiveUnits) -> list[tuple[str, str]]:
    return [
        ("GELU > 0", f"{units.gelu_positive:,}"),
        ("ReLU > 0", f"{units.relu_positive:,}"),
        ("GELU < 0 (kept, small)", f"{units.gelu_negative:,}"),
        ("ReLU = 0 exactly", f"{units.relu_zero:,}"),
    ]


def active_units_table(units: ActiveUnits, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "token": list(tokens),
            "active under GELU": units.per_token_gelu_positive,
            "active under ReLU": units.per_token_relu_positive,
        }
    )
