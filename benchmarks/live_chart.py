"""A chart that stays on the page and is updated in place (Plotly.react), as a Streamlit component.

Measured against `st.plotly_chart` by `benchmarks.chart_component`, and not used by the lessons:
on a bare page it redraws faster, but inside a lesson the change -> chart time is the same either
way (docs/performance.md). `st.plotly_chart` derives its element id from the figure, so
every change of data mounts a new chart and plotly draws it from scratch (`newPlot`), and then a
second time when the element's config is rebuilt. This component is keyed by the chart's place
instead: the same <div> receives each new figure, and plotly redraws only what changed. It loads
the plotly.js that ships with the plotly package from the app's static folder
(`server.enableStaticServing`, with the file copied to `static/plotly.min.js` beside the app).
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly
import plotly.graph_objects as go
import streamlit as st
from plotly.io.json import to_json_plotly

PACKAGE_PLOTLY = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
ASSETS = Path(__file__).parent / "chart_component_assets"
JS = (ASSETS / "live_chart.js").read_text(encoding="utf-8")
# Streamlit's light chart theme as its own chart element resolves it in the browser (1.67): the
# "streamlit" plotly template that Python figures carry holds placeholder colours (#000001, ...)
# which only Streamlit's front end replaces, so these charts carry the resolved template instead.
THEME = json.loads((ASSETS / "streamlit_light_theme.json").read_text(encoding="utf-8"))
COMPONENT_NAME = "encoder_lab_chart"
# Not isolated in a shadow root: the page's own styles reach the chart.
_mount = st.components.v2.component(COMPONENT_NAME, js=JS, isolate_styles=False)


def themed_spec(fig: go.Figure) -> dict:
    """The figure as plotly.js takes it, with the resolved theme (the script bolds the title, as Streamlit does)."""
    spec = fig.to_plotly_json()  # the figure's own dicts: copied where changed, never edited
    return {"data": spec["data"], "layout": {**spec.get("layout", {}), "template": THEME}}


def live_chart(fig: go.Figure, key: str, *, config: dict, alt: str) -> None:
    """Draw fig at this place on the page; a later run with the same key updates the same chart."""
    _mount(key=key, data={"figure": to_json_plotly(themed_spec(fig)), "config": config, "alt": alt})
