"""Figure builders shared by every lesson: pure functions, numbers in -> plotly Figure out; and Chart,
what every lesson's view hands its page to show.

No streamlit here and no model runs: a page computes with encoder_core and hands the
result to these. User text is escaped before it becomes a label (plotly renders some HTML).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

# Colour-blind-safe: a perceptually uniform sequential scale, and a two-colour pair
# (blue / orange) that never relies on a red-green distinction.
SEQUENTIAL = "Cividis"
DIVERGING = "RdBu"  # blue-red stays readable for the common red-green deficiencies
PAIR = ("#1f77b4", "#ff7f0e")
HIGH_CONTRAST_PAIR = ("#000000", "#e69f00")
# Okabe-Ito: eight colours that stay distinct for the common colour-vision deficiencies. Used as
# every figure's default colour cycle, in place of the theme's (which puts red next to green).
CATEGORICAL = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
# Lecture-mode type sizes (px): nothing under 18 px, readable from the back of a hall at 1920x1080.
LECTURE_FONT, LECTURE_TITLE_FONT, LECTURE_TICK_FONT = 20, 24, 18
LECTURE_CELL_FONT = 18  # a heatmap's numbers, written in its cells up to LECTURE_MAX_CELL_COLUMNS columns
LECTURE_MAX_CELL_COLUMNS = 12  # beyond that an 18-px number no longer fits its cell: the numbers panel has them
# A heatmap whose cells hold the chart's words (padding's batch: tokens, A/B, True/False), not numbers, marks its
# trace with meta=CELLS_ARE_WORDS: its words keep the lecture size, read from the back of a hall, up to
# LECTURE_MAX_WORD_COLUMNS columns (a short word fits a cell there on a 1440 px screen), not only up to
# LECTURE_MAX_CELL_COLUMNS: without them the chart is a grid of colours that says nothing.
CELLS_ARE_WORDS = "cells are words"
LECTURE_MAX_WORD_COLUMNS = 24

# A phone's chart: the narrowest common phone screen (360 px) less the page's side padding; at most 45 % of an
# 844-px screen tall (the phone stylesheet's cap, ui.frame.shell). Plotly fits a heatmap's cell text to its cells
# only in a grid of two rows and two columns or more and only when no size is given; other cell text (one row,
# or a size a view chose) is written at its size however narrow the cells. Where that would overrun the cells
# of a phone's chart, styled writes it at PHONE_HIDDEN_CELL_FONT: a size no view uses (it looks the same as 12),
# which the phone stylesheet hides. Pointing at (tapping) a cell shows its text, and the numbers panel has it.
PHONE_FIGURE_WIDTH, PHONE_FIGURE_HEIGHT = 328, 380
PHONE_HIDDEN_CELL_FONT = 11.99
CHAR_EM = 0.6  # a character's width in type sizes: generous for the app's type (a digit takes about 0.5)
LINE_EM = 1.3  # plotly's line spacing
PLOTLY_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}  # plotly's own, where a figure sets none


@dataclass(frozen=True)
class Chart:
    """One chart as a lesson shows it (ui.frame.charts.show_chart): the figure, whose layout holds its
    title; its text alternative, one sentence with the numbers a reader cannot see; and, when there is
    one, the table of numbers behind it (shown on request and downloaded as CSV)."""

    figure: go.Figure
    alt: str
    # The table, or a function that builds it: most "numbers behind this chart" panels are never opened,
    # and a view that passes a function builds its table only when one is.
    table_source: pd.DataFrame | Callable[[], pd.DataFrame] | None = None
    # True for a chart kept in a cache that every session reads (ui.frame.charts.shared_chart): its figure is
    # already styled for the default view and is never changed again; lecture or contrast styles a copy.
    shared: bool = False

    @property
    def table(self) -> pd.DataFrame | None:
        if callable(self.table_source):  # built once (a frozen dataclass: the memo is set past it)
            object.__setattr__(self, "table_source", self.table_source())
        return self.table_source

    @property
    def has_table(self) -> bool:
        return self.table_source is not None


def esc(text: object) -> str:
    """Escape &, <, > so typed markup is shown as text in a label, never rendered."""
    return html.escape(str(text), quote=False)


def token_labels(tokens: Sequence[str]) -> list[str]:
    """Unique, escaped axis labels: 'the' twice becomes '0 the', '4 the' (plotly merges equal categories)."""
    return [f"{i} {esc(t)}" for i, t in enumerate(tokens)]


def per_token_table(tokens: Sequence[str], columns: Mapping[str, object]) -> pd.DataFrame:
    """The numbers behind a per-token chart: a token column labelled as the chart's axis, then one column each."""
    return pd.DataFrame({"token": token_labels(tokens), **columns})


def percent_metrics(values: Mapping[str, float]) -> list[tuple[str, str]]:
    """A row of metrics, (label, value): each value a percentage with one decimal."""
    return [(label, f"{value:.1%}") for label, value in values.items()]


def numbers_text(values: Iterable[float], decimals: int = 3) -> str:
    """A short list of numbers for a caption or a sentence: '0.258, 0.020, 0.044'."""
    return ", ".join(f"{float(v):.{decimals}f}" for v in values)


def short_number(x: float) -> str:
    """3 significant digits; an exact zero as 0.0 (so a reader sees it is exactly zero)."""
    return "0.0" if x == 0 else f"{x:.3g}"


def after_layer_names(n_stages: int, unit: str = "layer") -> list[str]:
    """hidden_states order, numbered from 0 like the code and the controls: the embeddings, then
    'after layer 0', 'after layer 1', ... (n_stages - 1 layers)."""
    return ["embeddings"] + [f"after {unit} {i}" for i in range(n_stages - 1)]


def as_array(x) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def wire_array(x) -> np.ndarray:
    """A heatmap's values as the browser gets them: float32, half float64's bytes on the wire (plotly sends an
    array as its raw bytes). A model's tensor, float32 already, arrives exactly; a float64 number to float32's
    precision (7 significant digits), far beyond the 2-3 decimals a chart shows or its hover reads."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float32)


# A heatmap's numbers written in its cells, formatted from z itself rather than from a second array of the
# same size (what a cell shows, rounded to 2 decimals, is the same; the browser is sent half as much).
CELL_VALUES = "%{z:.2f}"


# Plotly grows a margin that is too small for the labels, axis titles or colour bar, and then draws
# the whole figure a second time. Margins that already hold them (measured at the app's default type
# sizes) save that second drawing; in lecture type they are too small and plotly grows them as before.
LABEL_CHAR_PX = 5.2  # a token label's mean glyph width at the axes' 12 px type
COLORBAR_MARGIN = 86  # colour bar (pinned to the plot's edge by styled), its tick labels and title
AXIS_BELOW_ROOM = 76  # numeric tick labels under the plot and the axis title below them
# A colour bar a fixed distance from the plot (plotly's default gap is a fraction of the plot's
# width), so that the space kept for it in the right margin does not depend on the figure's width.
COLORBAR_X = 1.0


def label_margin(labels: Iterable[str], titled: bool = True) -> int:
    """Left margin for these row labels, and the axis title beside them if there is one."""
    return round((66 if titled else 32) + LABEL_CHAR_PX * max((len(str(label)) for label in labels), default=1))


def colorbar_margin(bound: float) -> int:
    """Right margin for a colour bar over [-bound, bound]: its tick labels grow with their digits."""
    step = bound / 2  # about the tick spacing plotly picks for that range
    chars = len(f"-{step:.1g}") if step < 1 else len(f"-{bound:.0f}")
    return COLORBAR_MARGIN + 7 * max(0, chars - 4)


def title_pad(key_labels: Iterable[str]) -> int:
    """Room between a title and the plot for the key labels written above it (they run upwards)."""
    return 50 + min(110, 7 * max((len(str(t)) for t in key_labels), default=1))


def attention_heatmap(
    weights,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str] | None = None,
    *,
    title: str = "",
    show_values: bool | None = None,
    zmax: float = 1.0,
    numbered: bool = True,
    title_above_keys: bool = False,
) -> go.Figure:
    """Attention weights (T_q, T_k): query rows, key columns, fixed colour range [0, zmax].

    numbered: label tokens "0 the", "1 cat" (plotly merges equal labels); False for labels that
    are already unique. title_above_keys: lift the title clear of the key labels on the top axis.
    """
    w = wire_array(weights)
    key_tokens = query_tokens if key_tokens is None else key_tokens
    if numbered:
        qy, kx = token_labels(query_tokens), token_labels(key_tokens)
        left = label_margin(f"{i} {t}" for i, t in enumerate(query_tokens))
    else:
        qy, kx = [esc(t) for t in query_tokens], [esc(t) for t in key_tokens]
        left = label_margin(query_tokens)
    if show_values is None:
        show_values = max(w.shape) <= 12
    title_layout: dict = {"text": esc(title)}
    top = 80
    if title_above_keys:
        pad = title_pad(kx)
        title_layout.update(y=1.0, yref="paper", yanchor="bottom", pad={"b": pad}, automargin=True)
        top = pad + 32  # the title's own line above its pad: no second drawing to make space
    # Everything is given to the constructor (the colour bar's place included, so styled has nothing to
    # change): a property set afterwards costs plotly up to a millisecond of validation each.
    return go.Figure(
        go.Heatmap(
            z=w,
            x=kx,
            y=qy,
            zmin=0.0,
            zmax=zmax,
            colorscale=SEQUENTIAL,
            texttemplate=CELL_VALUES if show_values else None,
            hovertemplate="query %{y} -> key %{x}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "weight"}, "x": COLORBAR_X},
        ),
        layout={
            "title": title_layout,
            "xaxis": {"title": {"text": "key (attended to)"}, "side": "top"},
            "yaxis": {"title": {"text": "query (attending)"}, "autorange": "reversed"},
            "margin": {"l": left, "r": COLORBAR_MARGIN, "t": top, "b": 10},
            "height": max(320, 34 * len(qy) + 140),
        },
    )


def attention_grid_chart(
    weights, query_tokens: Sequence[str], key_tokens: Sequence[str], *, title: str, alt: str
) -> Chart:
    """An attention grid whose numbers sit one row per query, one column per key, rounded as shown."""
    fig = attention_heatmap(weights, query_tokens, key_tokens, title=title)
    table = pd.DataFrame(weights, index=token_labels(query_tokens), columns=token_labels(key_tokens))
    return Chart(fig, alt, table.reset_index(names="query \\ key").round(3))


def heatmap_pair(
    weights: tuple, labels: Sequence[str], titles: tuple[str, str], *, numbered: bool = True
) -> tuple[go.Figure, go.Figure]:
    """Two attention grids over the same tokens, shown side by side, titles clear of the key labels."""
    return tuple(
        attention_heatmap(w, labels, title=t, numbered=numbered, title_above_keys=True)
        for w, t in zip(weights, titles, strict=True)
    )


def matrix_heatmap(
    values,
    row_labels: Sequence[str] | None,
    *,
    title: str = "",
    x_title: str = "feature",
    y_title: str = "token",
    symmetric: bool = True,
    col_labels: Sequence[str] | None = None,
    zrange: tuple[float, float] | None = None,
    height: int | None = None,
) -> go.Figure:
    """A [T, d]-style tensor: rows are tokens (or, with row_labels None, numbered rows such as positions),
    columns features; a diverging scale centred on 0 unless symmetric is False. zrange fixes the scale
    (a cosine's -1..1, say) instead of fitting it to the values."""
    v = wire_array(values)
    if zrange is None:
        bound = float(np.abs(v).max()) if v.size else 1.0
        bound = bound or 1.0
        zrange = (-bound, bound) if symmetric else (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    bound = max(abs(zrange[0]), abs(zrange[1]))
    rows = token_labels(row_labels) if row_labels is not None else None
    margin_labels = [f"{i} {t}" for i, t in enumerate(row_labels)] if row_labels is not None else [str(len(v) - 1)]
    return go.Figure(
        go.Heatmap(
            z=v,
            y=rows,
            x=list(col_labels) if col_labels is not None else None,
            colorscale=DIVERGING if symmetric else SEQUENTIAL,
            zmid=0.0 if symmetric else None,
            zmin=zrange[0],
            zmax=zrange[1],
            hovertemplate=y_title + " %{y}, " + x_title + " %{x}: %{z:.3f}<extra></extra>",
            colorbar={"x": COLORBAR_X},
        ),
        layout={
            "title": {"text": esc(title)},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}, "autorange": "reversed"},
            "margin": {
                "l": label_margin(margin_labels, titled=bool(y_title)),
                "r": colorbar_margin(bound) if symmetric else COLORBAR_MARGIN,
                "t": 60,
                "b": AXIS_BELOW_ROOM if x_title else 40,
            },
            "height": height or max(260, 22 * v.shape[0] + 120),
        },
    )


def axes_layout(title: str, x_title: str, y_title: str, **y_axis) -> dict:
    """The layout of a plain bar or line chart: its title, its axis titles (y_axis: more for the value
    axis), the usual margins and height."""
    return {
        "title": {"text": esc(title)},
        "xaxis": {"title": {"text": x_title}},
        "yaxis": {"title": {"text": y_title}, **y_axis},
        "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
        "height": 360,
    }


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
    # The layout is handed to the constructor: update_layout afterwards costs plotly several milliseconds.
    return go.Figure(
        go.Bar(
            x=token_labels(labels),
            y=v,
            marker_color=color,
            text=[format(float(x), text_format) for x in v],
            textposition="outside",
            hovertemplate="%{x}: %{y:.4g}<extra></extra>",
        ),
        layout=axes_layout(title, x_title, y_title),
    )


def grouped_bars(
    labels: Sequence[str],
    series: dict[str, object],
    *,
    title: str = "",
    y_title: str = "",
    x_title: str = "",
    colors: Sequence[str] = PAIR,
    numbered: bool = True,
    text_format: str | None = None,
) -> go.Figure:
    """Bars side by side, one colour per series. numbered: labels are tokens (position first, so repeats
    stay apart); text_format: print each bar's value on it (a zero bar is invisible without its label)."""
    x = token_labels(labels) if numbered else [esc(label) for label in labels]
    bars = []
    for (name, values), color in zip(series.items(), list(colors) * len(series)):
        v = as_array(values)
        bars.append(
            go.Bar(
                x=x,
                y=v,
                name=esc(name),
                marker_color=color,
                text=[format(float(value), text_format) for value in v] if text_format else None,
                textposition="outside" if text_format else None,
                hovertemplate="%{x}: %{y:.4g}<extra>" + esc(name) + "</extra>",
            )
        )
    return go.Figure(bars, layout={"barmode": "group", **axes_layout(title, x_title, y_title)})


def earlier_token_shifts(
    tokens: Sequence[str], causal, bidirectional, *, title: str, y_title: str, text_format: str
) -> go.Figure:
    """Per earlier token, how far its final vector moved when the input changed after it: under the causal
    mask (not at all) and without it."""
    return grouped_bars(
        list(tokens),
        {"causal mask": causal, "bidirectional": bidirectional},
        title=title,
        y_title=y_title,
        x_title="earlier token",
        text_format=text_format,
    )


def line_chart(
    x,
    series: dict[str, object],
    *,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    log_y: bool = False,
    colors: Sequence[str] = PAIR,
    from_zero: bool = True,
) -> go.Figure:
    """Lines over x. from_zero: the value axis shows 0, so a drift of 1% looks like 1%; a caller that
    turns it off must say "zoomed" in the title (tests/ui/views/test_figure_audit.py checks)."""
    dashes = ("solid", "dash", "dot", "dashdot")
    xs = [esc(v) for v in x] if len(x) and isinstance(x[0], str) else as_array(x)
    lines = [
        go.Scatter(
            x=xs,
            y=as_array(values),
            name=esc(name),
            mode="lines+markers",
            line={"color": colors[i % len(colors)], "dash": dashes[i % len(dashes)]},
        )
        for i, (name, values) in enumerate(series.items())
    ]
    zero = {"rangemode": "tozero"} if from_zero and not log_y else {}
    return go.Figure(lines, layout=axes_layout(title, x_title, y_title, type="log" if log_y else "linear", **zero))


def styled(fig: go.Figure, *, lecture: bool = False, high_contrast: bool = False, copy: bool = True) -> go.Figure:
    """Lecture mode: larger type for a projector. High contrast: black text on white, black axes,
    outlined bars, thicker lines, gaps between heatmap cells. Always: a colour-blind-safe colour cycle.

    copy=False styles the figure itself: for a figure built for this one use, since copying a
    figure (plotly validates it all again) costs as much as building it."""
    if copy:
        fig = go.Figure(fig)
    # Property by property rather than update_layout/update_traces, which cost milliseconds each,
    # and only where a builder has not set it already.
    if fig.layout.colorway is None:
        fig.layout.colorway = list(CATEGORICAL)
    for trace in fig.data:
        if trace.type == "heatmap" and trace.colorbar.x != COLORBAR_X:
            trace.colorbar.x = COLORBAR_X
    if lecture:
        _lecture_type(fig)
    else:
        for trace in fig.data:
            if trace.type == "heatmap" and trace.texttemplate and _overruns_phone_cells(fig, trace):
                trace.textfont.size = PHONE_HIDDEN_CELL_FONT
    if high_contrast:
        axis = {
            "showline": True,
            "linecolor": "#000000",
            "linewidth": 2,
            "ticks": "outside",
            "tickcolor": "#000000",
            "gridcolor": "#808080",
            "zerolinecolor": "#000000",
        }
        black_text = {"tickfont": {"color": "#000000"}, "title": {"font": {"color": "#000000"}}}
        fig.update_layout(
            font={"color": "#000000"},
            title={"font": {"color": "#000000"}},
            paper_bgcolor="#ffffff",
            plot_bgcolor="#ffffff",
        )
        fig.update_xaxes(**axis, **black_text)
        fig.update_yaxes(**axis, **black_text)
        fig.update_traces(
            colorbar={**black_text, "outlinecolor": "#000000", "outlinewidth": 1}, selector={"type": "heatmap"}
        )
        fig.update_traces(marker_line_color="#000000", marker_line_width=1.5, selector={"type": "bar"})
        fig.update_traces(line_width=4, selector={"type": "scatter"})
        fig.update_traces(xgap=1, ygap=1, selector={"type": "heatmap"})
    return fig


_PLACEHOLDER = re.compile(r"%\{([a-z]+)(?:\[\d+\])?(?::([^}]*))?\}")


def cell_lines(trace) -> list[list[str]]:
    """A heatmap's cell text as plotly writes it from its texttemplate: per cell, its lines, markup removed.
    Placeholders other than text, z, x and y (customdata, say) count as empty."""
    z = [list(row) if hasattr(row, "__len__") else [row] for row in (trace.z if trace.z is not None else ())]
    text = trace.text if trace.text is not None else ()
    xs, ys = list(trace.x) if trace.x is not None else [], list(trace.y) if trace.y is not None else []

    def value(name: str, r: int, c: int):
        if name == "text":
            row = text[r] if r < len(text) else ()
            return row[c] if hasattr(row, "__len__") and not isinstance(row, str) and c < len(row) else ""
        if name == "z":
            return z[r][c]
        return {"x": xs[c] if c < len(xs) else c, "y": ys[r] if r < len(ys) else r}.get(name, "")

    def written(match: re.Match, r: int, c: int) -> str:
        v, spec = value(match.group(1), r, c), match.group(2)
        try:
            return format(v, spec) if spec else str(v)
        except (TypeError, ValueError):
            return str(v)

    cells = []
    for r, row in enumerate(z):
        for c in range(len(row)):
            shown = _PLACEHOLDER.sub(lambda m, r=r, c=c: written(m, r, c), trace.texttemplate)
            cells.append([html.unescape(re.sub(r"<[^>]+>", "", line)) for line in re.split(r"<br\s*/?>", shown)])
    return cells


def _overruns_phone_cells(fig: go.Figure, trace) -> bool:
    """Would plotly write this heatmap's cell text past its cells on a phone? (False where plotly fits it.)"""
    rows = len(trace.z) if trace.z is not None else 0
    columns = max((len(row) for row in trace.z if hasattr(row, "__len__")), default=1) if rows else 0
    given = trace.textfont.size
    if not rows or (given is None and rows >= 2 and columns >= 2):
        return False  # plotly fits it to the cells (and the stylesheet hides what it had to shrink too far)
    size = given or fig.layout.font.size or 12
    cells = cell_lines(trace)
    chars = max((len(line) for lines in cells for line in lines), default=0)
    lines = max((len(lines) for lines in cells), default=1)
    margin = {side: getattr(fig.layout.margin, side) for side in PLOTLY_MARGIN}
    margin = {side: PLOTLY_MARGIN[side] if px is None else px for side, px in margin.items()}
    width = (PHONE_FIGURE_WIDTH - margin["l"] - margin["r"]) / columns - (trace.xgap or 0)
    height = (min(fig.layout.height or 450, PHONE_FIGURE_HEIGHT) - margin["t"] - margin["b"]) / rows - (trace.ygap or 0)
    return chars * size * CHAR_EM > width or lines * size * LINE_EM > height


def plain_title(fig: go.Figure) -> str:
    """The figure's title as plain text for a label: its markup and line breaks removed, and the
    characters Markdown would read as formatting escaped."""
    text = re.sub(r"<br\s*/?>", " ", str(fig.layout.title.text or "this chart"))
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", text)


def _top_axis_margin(fig: go.Figure) -> int:
    """Pixels above the plot taken by an x axis drawn along the top (its labels and title), if any.

    Sized for labels turned upright, as plotly turns them when a figure is narrow."""
    if not any(getattr(ax, "side", None) == "top" for ax in fig.select_xaxes()):
        return 8
    labels = [str(x) for trace in fig.data if getattr(trace, "x", None) is not None for x in trace.x]
    longest = max((len(label) for label in labels), default=6)
    return round(longest * LECTURE_TICK_FONT * 0.6 + LECTURE_FONT * 1.5 + 24)


def _lecture_type(fig: go.Figure) -> None:
    """Larger type everywhere, with the margins made to grow so that nothing overlaps."""
    # Plotly grows a multi-line title downwards and does not keep it clear of a top axis: so the title's
    # bottom is pinned above the plot, clear of any top axis, and the top margin is sized to hold both.
    title = fig.layout.title.text  # one line: lecture titles are written to fit (a browser test measures it)
    axis_margin = _top_axis_margin(fig)
    lines = title.count("<br>") + 1 if title else 0
    line = round(LECTURE_TITLE_FONT * 1.3)  # plotly's line spacing
    fig.update_layout(
        font={"size": LECTURE_FONT},
        title={
            "text": title,
            "font": {"size": LECTURE_TITLE_FONT},
            "yref": "paper",
            "y": 1,
            "yanchor": "bottom",
            "pad": {"b": axis_margin + max(lines - 1, 0) * line},  # the extra lines hang below the anchor
        },
        margin={"t": 12 + lines * line + axis_margin},
        legend={"font": {"size": LECTURE_FONT}},
        hoverlabel={"font": {"size": LECTURE_FONT}},
    )
    # Axis and colour-bar text is sized explicitly: the app's chart theme sets its own small sizes there.
    axis_text = {"tickfont": {"size": LECTURE_TICK_FONT}, "title": {"font": {"size": LECTURE_FONT}}, "automargin": True}
    fig.update_xaxes(**axis_text)
    fig.update_yaxes(**axis_text)
    for trace in fig.data:
        if trace.type == "heatmap":
            trace.update(colorbar={"tickfont": {"size": LECTURE_TICK_FONT}, "title": {"font": {"size": LECTURE_FONT}}})
            try:
                columns = np.shape(trace.z)[1]
            except (ValueError, IndexError, TypeError):  # no z, or rows of different lengths
                columns = max((len(row) for row in trace.z or () if hasattr(row, "__len__")), default=0)
            if columns <= LECTURE_MAX_CELL_COLUMNS:
                trace.update(textfont={"size": LECTURE_CELL_FONT})
            elif trace.meta == CELLS_ARE_WORDS and columns <= LECTURE_MAX_WORD_COLUMNS:
                trace.update(textfont={"size": LECTURE_CELL_FONT})
            else:
                trace.update(texttemplate=None, text=None)
        elif trace.type in ("bar", "scatter"):
            trace.update(textfont={"size": LECTURE_TICK_FONT})
    for axis in (*fig.select_xaxes(), *fig.select_yaxes()):
        if axis.type == "log" and axis.dtick is None:
            axis.dtick = 1  # powers of ten only: plotly draws the 2s and 5s between them at three quarters size
    for note in fig.layout.annotations:
        if note.font.size is None or note.font.size < LECTURE_TICK_FONT:
            note.font.size = LECTURE_TICK_FONT
    if fig.layout.height:
        fig.update_layout(height=int(fig.layout.height * 1.15))  # space for the larger labels
