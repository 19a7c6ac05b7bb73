"""Figure and table downloads, as pure functions: figures in, one file's text out. No streamlit here.

An exported page is standalone: plotly.js is inlined once, so it opens offline, stays interactive,
and carries each figure's text alternative as its caption.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

PAGE_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2rem auto;padding:0 1rem;color:#000}"
    "figure{margin:0 0 3rem}figcaption{font-size:1rem;margin-top:.5rem}"
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs cells that start like this


@dataclass(frozen=True)
class ExportedFigure:
    key: str
    fig: go.Figure
    alt: str = ""


def _element_id(key: str, i: int) -> str:
    return f"figure-{i}-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)[:60]


def _figure_block(item: ExportedFigure, i: int, include_plotlyjs: bool) -> str:
    div = item.fig.to_html(full_html=False, include_plotlyjs=include_plotlyjs, div_id=_element_id(item.key, i))
    caption = f"<figcaption>{html.escape(item.alt)}</figcaption>" if item.alt else ""
    return f'<figure aria-label="{html.escape(item.key)}"><h2>{html.escape(item.key)}</h2>{div}{caption}</figure>'


def figures_html(items: list[ExportedFigure], *, title: str = "Encoder Lab figures") -> str:
    """One standalone HTML page with every figure, each under its name and above its text alternative."""
    blocks = "".join(_figure_block(item, i, include_plotlyjs=(i == 0)) for i, item in enumerate(items))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{PAGE_CSS}</style></head>"
        f"<body><h1>{html.escape(title)}</h1>{blocks}</body></html>"
    )


def figure_html(fig: go.Figure, key: str, alt: str = "") -> str:
    """One figure as a standalone interactive HTML page."""
    return figures_html([ExportedFigure(key, fig, alt)], title=key)


def table_csv(table: pd.DataFrame) -> str:
    """The numbers behind a chart as CSV, full precision. Text cells that a spreadsheet would run as a
    formula (a typed token such as '=cmd') get a leading apostrophe."""
    safe = table.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_START) else v
            )
    return safe.to_csv(index=False)
