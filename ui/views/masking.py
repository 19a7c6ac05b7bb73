"""Figures for the masked-language-modelling lesson. Pure: numbers in, plotly Figure out."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .figures import PAIR, as_array, esc, label_room, token_labels

IGNORED_GREY = "#b0b0b0"
SPLIT_COLOURS = {"[MASK]": PAIR[0], "random token": PAIR[1], "kept": "#6b4c9a", "not chosen": "#d9d9d9"}
# What happened to each position in a draw, in the order of the colour codes drawn.
FATES = ("never eligible", "not chosen", "[MASK]", "random token", "kept")
FATE_COLOURS = ("#ffffff", SPLIT_COLOURS["not chosen"], PAIR[0], PAIR[1], SPLIT_COLOURS["kept"])


def fate(what_happened: str) -> str:
    return "never eligible" if what_happened.startswith("never eligible") else what_happened


def draw_figure(rows: Sequence[dict], *, title: str = "") -> go.Figure:
    """One draw, token by token: the original sentence over what the model receives, coloured by fate.

    rows are MaskingDraw.rows(). Each cell also carries its label (-100 where the loss ignores it).
    """
    codes = [FATES.index(fate(r["what happened"])) for r in rows]
    n = len(FATES) - 1
    scale = []
    for i, colour in enumerate(FATE_COLOURS):  # a step per fate: code i covers [i/n - 1/2n, i/n + 1/2n]
        lo, hi = max(0.0, (i - 0.5) / n), min(1.0, (i + 0.5) / n)
        scale += [[lo, colour], [hi, colour]]
    labels = [str(r["label"]) for r in rows]
    fig = go.Figure(
        go.Heatmap(
            z=[codes, codes],
            x=[str(r["position"]) for r in rows],
            y=["original", "model receives"],
            text=[[esc(r["original token"]) for r in rows], [esc(r["model receives"]) for r in rows]],
            customdata=[[[fate(r["what happened"]), lab] for r, lab in zip(rows, labels)]] * 2,
            texttemplate="%{text}",
            zmin=0,
            zmax=n,
            colorscale=scale,
            showscale=False,
            xgap=2,
            ygap=2,
            hovertemplate="position %{x}: %{text} (%{customdata[0]}, label %{customdata[1]})<extra></extra>",
        )
    )
    for name, colour in zip(FATES, FATE_COLOURS):  # a legend: heatmaps have none of their own
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=name,
            marker={"symbol": "square", "size": 14, "color": colour, "line": {"color": "#777777", "width": 1}},
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "position"}, "side": "top"},
        yaxis={"autorange": "reversed"},
        legend={"orientation": "h", "y": -0.15},
        margin={"l": label_room(["model receives"], titled=False), "r": 10, "t": 90, "b": 62},  # b: the legend
        height=300,
    )
    return fig


def loss_bars(
    tokens: Sequence[str],
    input_tokens: Sequence[str],
    per_position,
    counted,
    *,
    mean: float,
    wrong_mean: float,
    title: str = "",
) -> go.Figure:
    """Cross-entropy at every position. Positions labelled -100 are grey bars of height 0, marked
    "ignored"; two lines give the right mean (over chosen positions) and the wrong one (over all)."""
    losses = as_array(per_position)
    counted = np.asarray(counted, dtype=bool)
    labels = token_labels(tokens)
    received = [esc(t) for t in input_tokens]
    fig = go.Figure()
    for name, keep, colour in (
        ("carries a loss", counted, PAIR[0]),
        ("label -100: adds nothing", ~counted, IGNORED_GREY),
    ):
        idx = np.flatnonzero(keep)
        if not len(idx):
            continue
        fig.add_bar(
            x=[labels[i] for i in idx],
            y=losses[idx],
            name=name,
            marker_color=colour,
            text=[f"{losses[i]:.2f}" if counted[i] else "ignored" for i in idx],
            textposition="outside",
            customdata=[received[i] for i in idx],
            hovertemplate="%{x} (model received %{customdata}): loss %{y:.4f}<extra></extra>",
        )
    if counted.any():
        for name, value, dash, colour in (
            ("mean over chosen positions (right)", mean, "solid", PAIR[0]),
            ("sum / every position (wrong)", wrong_mean, "dash", PAIR[1]),
        ):
            fig.add_scatter(
                x=labels,
                y=np.full(len(labels), value),
                mode="lines",
                name=f"{name}: {value:.3f}",
                line={"color": colour, "dash": dash, "width": 3},
                hovertemplate=f"{name}: {value:.4f}<extra></extra>",
            )
    top = float(losses.max()) if losses.size else 1.0
    fig.update_layout(
        title={"text": esc(title)},
        barmode="overlay",
        xaxis={"title": {"text": "position and original token"}, "categoryorder": "array", "categoryarray": labels},
        yaxis={"title": {"text": "cross-entropy (nats)"}, "range": [0, max(top, 0.1) * 1.25]},
        legend={"orientation": "h", "y": -0.3},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=420,
    )
    return fig


def top_k_bars(tokens: Sequence[str], probabilities, *, title: str = "") -> go.Figure:
    """A fill-mask answer: the top-k tokens for one masked position, most likely at the top."""
    p = as_array(probabilities)
    names = [esc(t) for t in tokens]
    fig = go.Figure(
        go.Bar(
            x=p[::-1],
            y=names[::-1],
            orientation="h",
            marker_color=PAIR[0],
            text=[f"{v:.1%}" for v in p[::-1]],
            textposition="outside",
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        # At least 0..25% so a flat guess looks flat, more when the top choice needs it; room for the labels.
        xaxis={"title": {"text": "probability"}, "range": [0, 1.2 * min(1.0, max(0.25, float(p.max(initial=0))))]},
        yaxis={"type": "category"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=260,
    )
    return fig


def split_bar(counts, *, title: str = "") -> go.Figure:
    """One horizontal bar of all eligible tokens, split into [MASK] / random / kept / not chosen."""
    parts = {
        "[MASK]": counts.masked,
        "random token": counts.random,
        "kept": counts.kept,
        "not chosen": counts.eligible - counts.chosen,
    }
    fig = go.Figure()
    for name, n in parts.items():
        fig.add_bar(
            x=[n],
            y=["eligible tokens"],
            orientation="h",
            name=f"{name}: {n}",
            marker_color=SPLIT_COLOURS[name],
            text=[str(n)] if n else None,
            textposition="inside",
            hovertemplate=f"{esc(name)}: {n}<extra></extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        barmode="stack",
        xaxis={"title": {"text": "tokens"}},
        yaxis={"showticklabels": False},
        legend={"orientation": "h", "y": -0.6, "traceorder": "normal"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=220,
    )
    return fig


def training_curves(
    steps, series: dict[str, object], *, title: str, y_title: str, y_range: tuple[float, float] | None = None
) -> go.Figure:
    """Correct vs leaky training, one line each over the same steps (solid vs dashed, blue vs orange)."""
    fig = go.Figure()
    for (name, values), colour, dash in zip(series.items(), PAIR, ("solid", "dash")):
        fig.add_scatter(
            x=as_array(steps),
            y=as_array(values),
            name=esc(name),
            mode="lines",
            line={"color": colour, "dash": dash, "width": 3},
            hovertemplate="step %{x}: %{y:.3f}<extra>" + esc(name) + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "training step"}},
        yaxis={"title": {"text": y_title}, **({"range": list(y_range)} if y_range else {})},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=380,
    )
    return fig
