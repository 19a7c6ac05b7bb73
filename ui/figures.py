"""Figure builders shared by every lesson: pure functions, numbers in -> plotly Figure out.

No streamlit here and no model runs: a page computes with encoder_core and hands the
result to these. User text is escaped before it becomes a label (plotly renders some HTML).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

# Colour-blind-safe: a perceptually uniform sequential scale, and a two-colour pair
# (blue / orange) that never relies on a red-green distinction.
SEQUENTIAL = "Cividis"
DIVERGING = "RdBu"  # blue-red stays readable for the common red-green deficiencies
PAIR = ("#1f77b4", "#ff7f0e")
HIGH_CONTRAST_PAIR = ("#000000", "#e69f00")


def esc(text: object) -> str:
    """Escape &, <, > so typed markup is shown as text in a label, never rendered."""
    return html.escape(str(text), quote=False)


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Unique, escaped axis labels: 'the' twice becomes '0 the', '4 the' (plotly merges equal categories)."""
    return [f"{i} {esc(t)}" for i, t in enumerate(tokens)]


def as_array(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def attention_heatmap(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    title: str = "",
    show_values: bool | None = None,
    zmax: float = 1.0,
) -> go.Figure:
    """Attention weights (T_q, T_k): query rows, key columns, fixed colour range [0, zmax]."""
    w = as_array(weights)
    key_tokens = query_tokens if key_tokens is None else key_tokens
    qy, kx = token_labels(query_tokens), token_labels(key_tokens)
    if show_values is None:
        show_values = max(w.shape) <= 12
    fig = go.Figure(
        go.Heatmap(
            z=w,
            x=kx,
            y=qy,
            zmin=0.0,
            zmax=zmax,
            colorscale=SEQUENTIAL,
            text=np.round(w, 2) if show_values else None,
            texttemplate="%{text:.2f}" if show_values else None,
            hovertemplate="query %{y} -> key %{x}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "weight"}},
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "key (attended to)"}, "side": "top"},
        yaxis={"title": {"text": "query (attending)"}, "autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        height=max(320, 34 * len(qy) + 140),
    )
    return fig


def matrix_heatmap(
    values,
    row_labels: Sequence[str],
    *,
    title: str = "",
    x_title: str = "feature",
    y_title: str = "token",
    symmetric: bool = True,
    col_labels: Sequence[str] | None = None,
) -> go.Figure:
    """A [T, d]-style tensor: rows are tokens, columns features; diverging scale centred on 0."""
    v = as_array(values)
    bound = float(np.abs(v).max()) if v.size else 1.0
    fig = go.Figure(
        go.Heatmap(
            z=v,
            y=token_labels(row_labels),
            x=list(col_labels) if col_labels is not None else None,
            colorscale=DIVERGING if symmetric else SEQUENTIAL,
            zmid=0.0 if symmetric else None,
            zmin=-bound if symmetric else None,
            zmax=bound if symmetric else None,
            hovertemplate=y_title + " %{y}, " + x_title + " %{x}: %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": x_title}},
        yaxis={"title": {"text": y_title}, "autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=max(260, 22 * v.shape[0] + 120),
    )
    return fig


def bar_chart(
    labels: Sequence[str],
    values,
    *,
    title: str = "",
    y_title: str = "",
    x_title: str = "",
    color: str = PAIR[0],
    text_format: str = ".3g",
) -> go.Figure:
    v = as_array(values)
    fig = go.Figure(
        go.Bar(
            x=token_labels(labels),
            y=v,
            marker_color=color,
            text=[format(float(x), text_format) for x in v],
            textposition="outside",
            hovertemplate="%{x}: %{y:.4g}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        yaxis={"title": {"text": y_title}},
        xaxis={"title": {"text": x_title}},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def grouped_bars(
    labels: Sequence[str],
    series: dict[str, object],
    *,
    title: str = "",
    y_title: str = "",
    colors: Sequence[str] = PAIR,
) -> go.Figure:
    fig = go.Figure()
    for (name, values), color in zip(series.items(), list(colors) * len(series)):
        fig.add_bar(
            x=token_labels(labels),
            y=as_array(values),
            name=esc(name),
            marker_color=color,
            hovertemplate="%{x}: %{y:.4g}<extra>" + esc(name) + "</extra>",
        )
    fig.update_layout(
        barmode="group",
        title={"text": esc(title)},
        yaxis={"title": {"text": y_title}},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def line_chart(
    x,
    series: dict[str, object],
    *,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_y: bool = False,
    colors: Sequence[str] = PAIR,
) -> go.Figure:
    fig = go.Figure()
    dashes = ("solid", "dash", "dot", "dashdot")
    for i, (name, values) in enumerate(series.items()):
        fig.add_scatter(
            x=as_array(x),
            y=as_array(values),
            name=esc(name),
            mode="lines+markers",
            line={"color": colors[i % len(colors)], "dash": dashes[i % len(dashes)]},
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": x_title}},
        yaxis={"title": {"text": y_title}, "type": "log" if log_y else "linear"},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def styled(fig: go.Figure, *, lecture: bool = False, high_contrast: bool = False) -> go.Figure:
    """Lecture mode: larger type for a projector. High contrast: black text on white, thicker lines."""
    fig = go.Figure(fig)  # a copy: the builder's figure stays as built
    if lecture:
        fig.update_layout(font={"size": 20}, title={"font": {"size": 26}})
        fig.update_traces(textfont={"size": 18}, selector={"type": "heatmap"})
    if high_contrast:
        fig.update_layout(font={"color": "#000000"}, paper_bgcolor="#ffffff", plot_bgcolor="#ffffff")
        fig.update_traces(marker_line_color="#000000", marker_line_width=1.5, selector={"type": "bar"})
        fig.update_traces(line_width=4, selector={"type": "scatter"})
    return fig
