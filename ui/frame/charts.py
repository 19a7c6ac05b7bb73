"""Showing a chart: styled for lecture/contrast, a text alternative, and its downloads.

show_chart is the one way a page or the frame shows a lesson's Chart (ui.views.figures.Chart).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from contextlib import nullcontext
from dataclasses import replace

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from ui.views.figures import Chart, plain_title, styled

from .chart_element import chart_element
from .export import ExportedFigure, figure_html, figures_html, table_csv
from .modes import current_page, figures_key, high_contrast, lecture_headline_chart, lecture_mode

PLOTLY_CONFIG = {
    "displaylogo": False,
    "toImageButtonOptions": {"format": "png", "scale": 2},  # the toolbar camera: PNG export
}


def numbers_panel_key(chart_key: str) -> str:
    """The session-state key of a chart's "numbers behind this chart" panel (True: open)."""
    return f"numbers_{chart_key}"


def show_chart(chart: Chart, key: str) -> None:
    """Draw the chart under key (its element is "chart_<key>", its files "<key>.csv" and "<key>.html").

    The text alternative is given to the chart (for screen readers) and printed under it; the table
    and the downloads (CSV, interactive HTML; PNG from the chart's camera button) sit in a panel
    that is filled only once it is opened.
    """
    fig = chart_figure(chart, lecture=lecture_mode(), high_contrast=high_contrast())
    if lecture_mode() and not lecture_headline_chart():
        # A lecture step shows one chart in full; the others wait, folded, under their titles.
        # (Its numbers panel stays in the lesson's own view: expanders do not nest.)
        with st.expander(f"Also in this step: {plain_title(fig)}", icon=":material/bar_chart:"):
            _chart_and_caption(fig, key, chart.alt)
        return
    _chart_and_caption(fig, key, chart.alt)
    _numbers_panel(fig, key, chart)


def show_chart_row(charts: Collection[Chart], keys: Sequence[str], columns: Sequence | None = None) -> None:
    """Charts next to each other, one per column (default: equal columns; or side_by_side's pair)."""
    columns = st.columns(len(charts)) if columns is None else columns
    for column, chart, key in zip(columns, charts, keys, strict=True):
        with column:
            show_chart(chart, key)


def show_live_chart(chart: Chart, key: str, where=None) -> None:
    """A chart redrawn while its numbers arrive (a room's answers, a training run's loss): styled and
    captioned like a lesson's, without the numbers panel and not in the page's one-file download.

    where: the container to draw in (a placeholder's container redraws in place); default the page."""
    fig = chart_figure(chart, lecture=lecture_mode(), high_contrast=high_contrast())
    with nullcontext() if where is None else where:
        chart_element(fig, key, config=PLOTLY_CONFIG, alt=chart.alt)
        st.caption(chart.alt)


def shared_chart(chart: Chart) -> Chart:
    """The chart, to be kept in a cache that every session reads (st.cache_resource): its figure is styled for
    the default view now, once, and never changed after; show_chart styles a copy for lecture or contrast."""
    styled(chart.figure, copy=False)
    return replace(chart, shared=True)


def chart_figure(chart: Chart, *, lecture: bool, high_contrast: bool) -> go.Figure:
    """The figure show_chart draws. A chart built for this run is styled in place (a copy would cost as much as
    building it); a shared chart (shared_chart) is drawn as it is in the default view and styled on a copy for
    lecture or contrast, so that no session changes what the others see."""
    if not chart.shared:
        return styled(chart.figure, lecture=lecture, high_contrast=high_contrast, copy=False)
    if not (lecture or high_contrast):
        return chart.figure
    return styled(chart.figure, lecture=lecture, high_contrast=high_contrast, copy=True)


def _chart_and_caption(fig: go.Figure, key: str, alt: str) -> None:
    config = {**PLOTLY_CONFIG, "toImageButtonOptions": {**PLOTLY_CONFIG["toImageButtonOptions"], "filename": key}}
    chart_element(fig, f"chart_{key}", config=config, alt=alt)
    st.caption(alt)
    st.session_state.setdefault(figures_key(), []).append(ExportedFigure(key, fig, alt))


def _numbers_panel(fig: go.Figure, key: str, chart: Chart) -> None:
    label = "Numbers behind this chart, downloads" if chart.has_table else "Download this chart"
    alt = chart.alt
    # Lazy, like the code panels: a closed panel sends nothing, so a rerun does not serialise
    # every table and the browser does not build a data grid per chart that nobody opened.
    with st.expander(label, key=numbers_panel_key(key), on_change="rerun") as panel:
        if not panel.open:
            return
        table = chart.table  # built now, when the panel is open
        if table is not None:
            st.dataframe(table, hide_index=True)
        c1, c2 = st.columns(2)
        if table is not None:
            c1.download_button(
                "CSV",
                data=lambda: table_csv(table),
                file_name=f"{key}.csv",
                mime="text/csv",
                key=f"csv_{key}",
                on_click="ignore",
                icon=":material/table:",
            )
        c2.download_button(
            "Interactive HTML",
            data=lambda: figure_html(fig, key, alt),
            file_name=f"{key}.html",
            mime="text/html",
            key=f"html_{key}",
            on_click="ignore",
            icon=":material/download:",
        )
        st.caption("PNG: the camera button in the chart's toolbar (top right of the chart, on hover).")


def show_table(table: pd.DataFrame, **options) -> None:
    """A table of numbers: a data grid (sortable, scrollable); in lecture mode a plain table, which the
    hall's larger type reaches (a data grid draws on a canvas, out of reach of the page's font sizes)."""
    if lecture_mode():
        st.table(table, hide_index=options.get("hide_index"))
    else:
        st.dataframe(table, **options)


def all_figures_download() -> None:
    """One HTML file with every figure shown on this run of the page (in lecture mode: this step's)."""
    figures = st.session_state.get(figures_key(), [])
    if not figures:
        return
    items = [f if isinstance(f, ExportedFigure) else ExportedFigure(f[0], f[1]) for f in figures]
    st.divider()
    page = current_page()
    what = "this step's" if lecture_mode() else "this lesson's"
    st.download_button(
        f"Download {what} {len(items)} figure{'s' if len(items) != 1 else ''} as one HTML file",
        data=lambda: figures_html(items, title=f"Encoder Lab: {page}"),
        file_name=f"encoder-lab-{page}.html",
        mime="text/html",
        key="all_figures",
        on_click="ignore",
        icon=":material/download:",
    )
