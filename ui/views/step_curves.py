"""Curves over training steps, as every section that trains something draws them."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from .figures import as_array, esc


def step_curves(
    lines: Sequence[tuple[str, object, object]],
    *,
    colours: Sequence[str],
    dashes: Sequence[str],
    width: int,
    title: str,
    y_title: str,
    height: int,
    x_range: tuple[float, float] | None = None,
    y_range: tuple[float, float] | None = None,
    **layout,
) -> go.Figure:
    """One line per (name, steps, values), in the colours and dashes given, over the x axis "training step"."""
    fig = go.Figure()
    for (name, steps, values), colour, dash in zip(lines, colours, dashes):
        fig.add_scatter(
            x=steps,
            y=as_array(values),
            name=esc(name),
            mode="lines",
            line={"color": colour, "dash": dash, "width": width},
            hovertemplate="step %{x}: %{y:.3f}<extra>" + esc(name) + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "training step"}, **({"range": list(x_range)} if x_range else {})},
        yaxis={"title": {"text": y_title}, **({"range": list(y_range)} if y_range else {})},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=height,
        **layout,
    )
    return fig
