"""The lab's chart element (Plotly.react in place) against st.plotly_chart, side by side in one run.

    .venv/bin/python -m benchmarks.chart_component [--changes 20]

Two copies of a bare page with one text box and two numbered heatmaps (the kind attention's first
tab draws), one drawing with `st.plotly_chart`, one with the lab's chart element
(`ui.frame.chart_element`), served by the same server. The same edits are made on both pages in
turn (the order alternating), and each change is timed inside the page, from the Enter key to the
first frame showing a chart with new data (`benchmarks/page_clock.py`). Prints p50 / p95 per page
and the ratio of the p50s."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from benchmarks.browser import changes_in_turn, pct
from benchmarks.floor import GRID_PAGE
from scripts.plotly_bundle import BUNDLE, ensure_bundle
from tests.browser.conftest import ROOT, serving

BARE_APP = (
    f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from ui.frame.chart_element import chart_element
"""
    + GRID_PAGE
    + """
live = st.query_params.get("chart") == "live"
for i, column in enumerate(st.columns(2)):
    cells = go.Heatmap(z=w, x=labels, y=labels, zmin=0, zmax=1, text=np.round(w, 2), texttemplate="%{text:.2f}")
    fig = go.Figure(cells, layout={"title": {"text": f"heatmap {i}"}})
    with column:
        if live:
            chart_element(fig, f"heatmap_{i}", config={"displaylogo": False}, alt="a heatmap")
        else:
            st.plotly_chart(fig, key=f"heatmap_{i}", config={"displaylogo": False})
"""
)


def bare_app() -> Path:
    root = Path(tempfile.mkdtemp(prefix="encoder-lab-charts-"))
    (root / "app.py").write_text(BARE_APP)
    shutil.copytree(ROOT / ".streamlit", root / ".streamlit")
    (root / "static").mkdir()  # the app's config serves static/plotly.min.js
    ensure_bundle()
    shutil.copyfile(BUNDLE, root / "static" / "plotly.min.js")
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=20)
    args = ap.parse_args()
    root = bare_app()
    try:
        with serving(root) as url:
            targets = {"st.plotly_chart": f"{url}/?chart=streamlit", "chart element": f"{url}/?chart=live"}
            ms = changes_in_turn(targets, args.changes)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    base = pct(ms["st.plotly_chart"], 0.5)
    print(f"{args.changes} changes each, timed in the page")
    print("| chart | p50 | p95 | p50 / st.plotly_chart |")
    print("|---|---|---|---|")
    for name, values in ms.items():
        print(f"| {name} | {pct(values, 0.5):.0f} ms | {pct(values, 0.95):.0f} ms | {pct(values, 0.5) / base:.2f} |")


if __name__ == "__main__":
    main()
