"""Section 1, split d into heads: the chosen head's Q, K and V slices, and its own attention weights."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.heads import HeadMechanics

from ..figures import Chart, attention_heatmap
from .common import head_slices, shape_text, token_table, weights_table


def split_text(model_name: str, d_model: int, n_heads: int, d_head: int) -> str:
    return (
        f"{model_name[:1].upper() + model_name[1:]} has d = {d_model} and {n_heads} heads, so each head works in "
        f"d/h = {d_model} / {n_heads} = {d_head} dimensions. There is no separate matrix per head: "
        f"the block computes Q = xW_Q (all {d_model} columns at once) and head h simply takes columns "
        f"h·{d_head} to (h+1)·{d_head}. The same for K and V. Each head then runs its own "
        "softmax(QKᵀ/√d_head) over the tokens, so each gets its own attention map."
    )


def slice_figure(mech: HeadMechanics, name: str) -> go.Figure:
    """The chosen head's Q, K or V (name), tokens by the head's dimensions."""
    matrix = mech.slices()[name]
    title = f"{name} of head {mech.head} [{shape_text(matrix.shape)}]"
    return head_slices(matrix, mech.tokens, title=title, x_title=f"dimension of head {mech.head}")


def slice_alt(mech: HeadMechanics, name: str) -> str:
    matrix = mech.slices()[name]
    return (
        f"{name} slice of head {mech.head}, layer {mech.layer}: {shape_text(matrix.shape)}, "
        f"values from {float(matrix.min()):.2f} to {float(matrix.max()):.2f}."
    )


def slice_charts(mech: HeadMechanics) -> dict[str, Chart]:
    """The chosen head's Q, K and V slices, by name."""
    slices = mech.slices()
    return {
        name: Chart(slice_figure(mech, name), slice_alt(mech, name), token_table(matrix, mech.tokens))
        for name, matrix in slices.items()
    }


def weight_count_text(mech: HeadMechanics) -> str:
    """How many attention weights one layer computes (the weight-count prediction's answer), said as a product."""
    T = len(mech.tokens)
    return (
        f"{mech.n_heads} heads × {T} queries × {T} keys = **{mech.n_weights:,}** attention weights in one layer: "
        f"every head computes its own {T} × {T} grid, each row adding up to 1. The grid of head {mech.head}:"
    )


def own_weights_figure(mech: HeadMechanics) -> go.Figure:
    return attention_heatmap(
        mech.weights, mech.tokens, title=f"Head {mech.head}'s own weights [{shape_text(mech.weights.shape)}]"
    )


def own_weights_alt(mech: HeadMechanics) -> str:
    key, weight = mech.strongest_key(0)
    return (
        f"Attention weights of the small model's layer {mech.layer}, head {mech.head}; "
        f"row 0 ({mech.tokens[0]}) puts most weight ({weight:.2f}) on token {key}."
    )


def own_weights_chart(mech: HeadMechanics) -> Chart:
    return Chart(own_weights_figure(mech), own_weights_alt(mech), weights_table(mech.weights, mech.tokens))


def shapes_table(mech: HeadMechanics) -> pd.DataFrame:
    return pd.DataFrame([{"tensor": name, "shape": shape_text(s)} for name, s in mech.shapes()])
