"""Section 2, concatenate and project with W_O: the heads' outputs side by side, and the output projection."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.heads import HeadMechanics

from ..figures import Chart, as_array, matrix_heatmap
from .common import head_slices, matrix_table, shape_text, token_table


def concat_text(n_tokens: int, n_heads: int, d_head: int, d_model: int) -> str:
    return (
        f"Each of the {n_heads} heads returns weights @ V, a [{n_tokens} × {d_head}] matrix. "
        f"Laid side by side they form a [{n_tokens} × {d_model}] concatenation, back to the model's "
        f"width. The output projection W_O [{d_model} × {d_model}] then mixes the heads: every output "
        "feature reads from every head's block of columns (dashed lines). This is the attention "
        "sublayer's output, before the residual and LayerNorm."
    )


def _head_boundaries(fig: go.Figure, n_heads: int, d_head: int) -> None:
    """Dashed lines between the heads' column blocks, and each block's head number on top."""
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": h * d_head - 0.5,
            "x1": h * d_head - 0.5,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#000000", "width": 2, "dash": "dash"},
        }
        for h in range(1, n_heads)
    ]
    annotations = [
        {
            "x": h * d_head + (d_head - 1) / 2,
            "y": 1.0,
            "xref": "x",
            "yref": "paper",
            "yanchor": "bottom",
            "text": f"head {h}",
            "showarrow": False,
        }
        for h in range(n_heads)
    ]
    fig.update_layout(shapes=shapes, annotations=annotations)


def concat_figure(concat, tokens: Sequence[str], n_heads: int, *, title: str) -> go.Figure:
    """The concatenation [T, D]: head 0's d_head columns, then head 1's, ..."""
    d_head = as_array(concat).shape[1] // n_heads
    fig = head_slices(concat, tokens, title=title, x_title="feature of the concatenation")
    _head_boundaries(fig, n_heads, d_head)
    fig.update_layout(margin={"t": 90})
    return fig


def concatenation_figure(mech: HeadMechanics) -> go.Figure:
    title = f"Concatenated head outputs [{shape_text(mech.concat.shape)}]"
    return concat_figure(mech.concat, mech.tokens, mech.n_heads, title=title)


def concat_alt(mech: HeadMechanics) -> str:
    return f"The {mech.n_heads} head outputs side by side, {shape_text(mech.concat.shape)}, layer {mech.layer}."


def concatenation_chart(mech: HeadMechanics) -> Chart:
    return Chart(concatenation_figure(mech), concat_alt(mech), token_table(mech.concat, mech.tokens))


def output_projection_figure(w_o, n_heads: int, *, title: str) -> go.Figure:
    """W_O as nn.Linear stores it, (out, in): column block h reads head h's output."""
    d_head = as_array(w_o).shape[1] // n_heads
    fig = matrix_heatmap(
        w_o,
        None,
        title=title,
        x_title="input feature (from the concatenation)",
        y_title="output feature",
        height=520,
    )
    # The hover names the column without the axis title's aside.
    fig.update_traces(hovertemplate="output feature %{y}, input feature %{x}: %{z:.3f}<extra></extra>")
    # Square cells, so the head blocks read as the D x D matrix they are.
    fig.update_layout(
        xaxis={"constrain": "domain"},
        yaxis={"scaleanchor": "x", "constrain": "domain"},
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
    )
    _head_boundaries(fig, n_heads, d_head)
    return fig


def w_o_figure(mech: HeadMechanics) -> go.Figure:
    title = f"W_O [{shape_text(mech.w_o.shape)}], layer {mech.layer}"
    return output_projection_figure(mech.w_o, mech.n_heads, title=title)


def w_o_alt(mech: HeadMechanics) -> str:
    return (
        f"The output projection W_O of layer {mech.layer}, {shape_text(mech.w_o.shape)}, as nn.Linear stores it "
        "(output feature x input feature); column blocks belong to the heads."
    )


def w_o_table(mech: HeadMechanics) -> pd.DataFrame:
    return matrix_table(mech.w_o, range(mech.w_o.shape[0]), "output feature", numbered=False)


def w_o_chart(mech: HeadMechanics) -> Chart:
    return Chart(w_o_figure(mech), w_o_alt(mech), w_o_table(mech))


def concat_check_text(mech: HeadMechanics) -> str:
    if not mech.agrees:
        return f"The recomputation differs from the block's output by {mech.max_abs_error:.1e}."
    return (
        "Recomputing every head from the weight matrices, concatenating and applying W_O gives the block's own "
        f"attention output: the largest difference is {mech.max_abs_error:.1e} (at most float32 rounding). "
        "The heads really are just slices of one computation."
    )
