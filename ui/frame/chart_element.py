"""The lab's chart element: a Streamlit component that draws a plotly figure and, on a later run, changes
the same chart in place.

Why not `st.plotly_chart`: Streamlit's chart element loads the full plotly.js (4.7 MB, the largest script of
a first visit) and draws a new chart from scratch for every change of data. This element loads plotly's
cartesian bundle (static/plotly.min.js, put there by scripts/plotly_bundle.py at setup: heatmaps, bars and
lines, every trace the lab draws) and calls Plotly.react on the <div> that already holds the chart, so a
changed chart does not blink. The page draws it in Streamlit's light or dark chart theme, whichever the page
is in, as Streamlit's front end resolves them (static/chart_themes.json): the "streamlit" template that
Python figures carry holds placeholder colours that only that front end replaces.
"""

from __future__ import annotations

from pathlib import Path

import plotly.graph_objects as go
import streamlit as st
from plotly.io.json import to_json_plotly


def _without_comments(js: str) -> str:
    """The script as the page needs it: every element of a component carries its script, on every run (and a
    script fetched from the static folder instead would wait for one more request before plotly.js)."""
    lines = (line.strip() for line in js.splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


# Without make setup's bundle the page would have no plotly.js to load: Streamlit's own chart element draws then.
HAS_BUNDLE = (Path(__file__).resolve().parents[2] / "static" / "plotly.min.js").exists()
JS = _without_comments((Path(__file__).parent / "chart_element.js").read_text(encoding="utf-8"))
COMPONENT_NAME = "encoder_lab_chart"
# Not isolated in a shadow root: the page's own styles (lecture mode's sizes) reach the chart.
_mount = st.components.v2.component(COMPONENT_NAME, js=JS, isolate_styles=False)


def chart_element(fig: go.Figure, key: str, *, config: dict, alt: str) -> None:
    """Draw fig at this place on the page; a later run with the same key changes the same chart."""
    if not HAS_BUNDLE:
        st.plotly_chart(fig, key=key, config=config, alt=alt)
        return
    spec = fig.to_plotly_json()  # the figure's own dicts: read, never edited
    # Without the Python-side template (about 3 kB of placeholder colours): the page puts the theme in.
    layout = {name: value for name, value in spec.get("layout", {}).items() if name != "template"}
    _mount(
        key=key, data={"figure": to_json_plotly({"data": spec["data"], "layout": layout}), "config": config, "alt": alt}
    )


PRELOAD_KEY = "plotly_preload"


def preload_charts() -> None:
    """An element that draws nothing and has the page ask for plotly.js with the page's first elements rather than
    with its first chart (the sidebar's first element). It gains little on a first visit: Streamlit draws the
    page's elements only once all of their script chunks have arrived, and this one with them."""
    if not HAS_BUNDLE:
        return
    _mount(key=PRELOAD_KEY, data=None)
