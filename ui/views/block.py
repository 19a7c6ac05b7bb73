"""Figures for the block lesson: pure functions, encoder_core results in -> plotly Figure out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from encoder_core.lessons.block import ActivationCurves, DeepStackStudy, TokenStats

from .figures import (
    AXIS_BELOW_ROOM,
    DIVERGING,
    PAIR,
    SEQUENTIAL,
    as_array,
    colorbar_room,
    esc,
    label_room,
    line_chart,
    matrix_heatmap,
    token_labels,
)

STAT_COLORS = ("#1f77b4", "#ff7f0e", "#000000")
MAX_HEATMAP_HEIGHT = 720


def tensor_heatmap(values, tokens: Sequence[str], *, title: str, x_title: str = "feature") -> go.Figure:
    """A [T, width] tensor, one row per token; the height is capped so a long input stays on one screen."""
    fig = matrix_heatmap(values, tokens, title=title, x_title=x_title)
    fig.update_layout(height=min(fig.layout.height, MAX_HEATMAP_HEIGHT))
    return fig


def token_stats_chart(stats: TokenStats, tokens: Sequence[str], *, title: str = "") -> go.Figure:
    """Per-token mean, standard deviation and L2 norm of one stage, one line each."""
    fig = go.Figure()
    labels = token_labels(tokens)
    series = (("mean", stats.mean, "dash"), ("std", stats.std, "dot"), ("L2 norm", stats.l2, "solid"))
    for (name, values, dash), color in zip(series, STAT_COLORS):
        fig.add_scatter(
            x=labels,
            y=as_array(values),
            name=name,
            mode="lines+markers",
            line={"color": color, "dash": dash},
            hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "token"}},
        yaxis={"title": {"text": "over the token's features"}},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def stage_profile_chart(stage_labels: Sequence[str], mean_norms, current: int, *, title: str = "") -> go.Figure:
    """Mean L2 norm of the tokens at each stage of the block; the selected stage is ringed."""
    y = as_array(mean_norms)
    labels = [esc(s) for s in stage_labels]
    fig = go.Figure(
        go.Scatter(
            x=labels,
            y=y,
            mode="lines+markers",
            name="mean ||x||",
            line={"color": PAIR[0]},
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.add_scatter(
        x=[labels[current]],
        y=[y[current]],
        mode="markers",
        name="this step",
        marker={"size": 18, "color": "rgba(0,0,0,0)", "line": {"color": PAIR[1], "width": 3}},
        hoverinfo="skip",
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "stage of the block, in order"}},
        yaxis={"title": {"text": "mean over tokens of ||x||"}, "rangemode": "tozero"},
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=340,
    )
    return fig


def activation_chart(curves: ActivationCurves) -> go.Figure:
    return line_chart(
        curves.x,
        {"GELU(u) = u Φ(u)": curves.gelu, "ReLU(u) = max(0, u)": curves.relu},
        title="GELU and ReLU",
        x_title="pre-activation u",
        y_title="output",
    )


def position_heatmap(
    values, *, title: str, x_title: str, symmetric: bool = True, zrange: tuple[float, float] | None = None
) -> go.Figure:
    """A table indexed by position (rows): the sinusoid table, or a position-by-position similarity."""
    v = as_array(values)
    if zrange is None:
        bound = float(np.abs(v).max()) if v.size else 1.0
        zrange = (-bound, bound) if symmetric else (float(v.min()), float(v.max()))
    fig = go.Figure(
        go.Heatmap(
            z=v,
            colorscale=DIVERGING if symmetric else SEQUENTIAL,
            zmid=0.0 if symmetric else None,
            zmin=zrange[0],
            zmax=zrange[1],
            hovertemplate="position %{y}, " + x_title + " %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": x_title}},
        yaxis={"title": {"text": "position"}, "autorange": "reversed"},
        margin={
            "l": label_room([str(len(v) - 1)]),
            "r": colorbar_room(max(abs(zrange[0]), abs(zrange[1]))),
            "t": 60,
            "b": AXIS_BELOW_ROOM,
        },
        height=420,
    )
    return fig


def deep_stack_chart(study: DeepStackStudy, what: str) -> go.Figure:
    """what: "residual" (stream norm after each block, 0 = embeddings) or "grad" (gradient norm per block)."""
    if what == "residual":
        x = np.arange(study.depth + 1)
        series = {"post-norm": study.post.residual_norms, "pre-norm": study.pre.residual_norms}
        return line_chart(
            x,
            series,
            title=f"Residual stream, {study.depth} blocks, init std {study.init_std:.3g}",
            x_title="after block (0 = embeddings)",
            y_title="mean over tokens of ||x||",
        )
    x = np.arange(study.depth)
    series = {"post-norm": study.post.grad_norms, "pre-norm": study.pre.grad_norms}
    return line_chart(
        x,
        series,
        title=f"Gradient norm per block, one backward pass, init std {study.init_std:.3g}",
        x_title="block",
        y_title="||dL/dθ|| over the block's parameters",
    )
