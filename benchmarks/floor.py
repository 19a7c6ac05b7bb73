"""What a change costs in Streamlit itself on this machine: the floor under the lessons' figures.

    .venv/bin/python -m benchmarks.floor [--changes 20] [--no-sliders] [--before REF] [lesson ...]

Starts, next to the app, a bare Streamlit page with one text box (and a slider) and one or two small heatmaps
(the kind a lesson's first tab draws, with or without each weight written in its cell) and
nothing else: no model, no sidebar, no tabs. Then makes the same edits on every page in turn,
so all of them see the same machine, and prints each page's change -> chart p50 and p95 and its
ratio to the bare page with two heatmaps. A lesson can not get much below this floor whatever it
does; the ratio is what the lesson adds to it. Two kinds of change: a sentence typed (the page reruns)
and, where a lesson has one, a slider that only its open section reads (that section reruns alone), each
against the bare page changed the same way. --before REF adds a server of an earlier commit and its
lessons to the same run: a before/after table beside the floor, every page seeing the same machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from contextlib import ExitStack
from pathlib import Path

from benchmarks.browser import changes_in_turn, lessons, pct
from benchmarks.side_by_side import checkout
from tests.browser.conftest import ROOT, serving

# A bare page's text box and the T x T grid of weights it draws from it (benchmarks.chart_component's too).
GRID_PAGE = """
import numpy as np
import plotly.graph_objects as go
import streamlit as st

st.set_page_config(layout="wide")
text = st.text_input("Sentence", "the cat sat down")
head = st.slider("Head", 0, 3, 0) if st.query_params.get("slider") == "1" else 0
n = len(text.split()) + 2
w = np.random.default_rng(sum(text.encode()) + head).random((n, n))
w /= w.sum(1, keepdims=True)
labels = [f"{i} t{i}" for i in range(n)]
"""
# The same kind of figure as the attention lesson's: a T x T grid of weights with its values
# written in the cells and a colour bar, built straight from plotly with no styling of ours.
BARE_APP = (
    GRID_PAGE
    + """
charts = int(st.query_params.get("heatmaps", "2"))
numbers = st.query_params.get("numbers", "1") == "1"  # each weight written in its cell, as the lessons do
for column in st.columns(charts):
    text = {"text": np.round(w, 2), "texttemplate": "%{text:.2f}"} if numbers else {}
    cells = go.Heatmap(z=w, x=labels, y=labels, zmin=0, zmax=1, **text)
    column.plotly_chart(go.Figure(cells))
"""
)


# The lessons whose Head slider only one section reads, on the page where that section is open.
SLIDER_PAGES = {"attention": "attention", "padding": "padding?step=1&n_pads=2", "heads": "heads"}


def bare_app() -> Path:
    """The bare page in a temporary folder, with the app's own server settings."""
    root = Path(tempfile.mkdtemp(prefix="encoder-lab-floor-"))
    (root / "app.py").write_text(BARE_APP)
    shutil.copytree(ROOT / ".streamlit", root / ".streamlit")
    return root


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("lessons", nargs="*")
    ap.add_argument("--no-sliders", action="store_true", help="time typed sentences only")
    ap.add_argument("--before", metavar="REF", help="also REF's lessons (a temporary checkout), in the same run")
    args = ap.parse_intermixed_args()
    bare_root = bare_app()
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, bare_root, ignore_errors=True)
        bare_url = stack.enter_context(serving(bare_root))
        apps = {"": stack.enter_context(serving())}
        if args.before:
            apps[f" ({args.before})"] = stack.enter_context(serving(stack.enter_context(checkout(args.before))))
        targets = {
            "bare page, 1 heatmap": f"{bare_url}/?heatmaps=1",
            "bare page, 2 heatmaps": f"{bare_url}/?heatmaps=2",
            "bare page, 2 heatmaps, no numbers in the cells": f"{bare_url}/?heatmaps=2&numbers=0",
        }
        sliders = {}
        if not args.no_sliders:
            targets["bare page, 2 heatmaps, slider"] = f"{bare_url}/?heatmaps=2&slider=1"
            sliders["bare page, 2 heatmaps, slider"] = "Head"
        for lesson in args.lessons or lessons():
            for suffix, url in apps.items():
                targets[lesson + suffix] = f"{url}/{lesson}"
                if lesson in SLIDER_PAGES and not args.no_sliders:  # only the open section reads it: reruns alone
                    name = f"{lesson}, slider{suffix}"
                    targets[name], sliders[name] = f"{url}/{SLIDER_PAGES[lesson]}", "Head"
        ms = changes_in_turn(targets, args.changes, sliders)
    floors = {kind: statistics.median(ms[name]) for kind, name in FLOORS.items() if name in ms}
    print("| page | change -> chart p50 (ms) | p95 (ms) | p50 / the bare page's, same kind of change |")
    print("|---|---|---|---|")
    for name, values in ms.items():
        p50 = statistics.median(values)
        floor = floors["slider" if name in sliders else "sentence"]
        print(f"| {name} | {p50:.0f} | {pct(values, 0.95):.0f} | {p50 / floor:.2f} |")


# The floor each change is divided by: the bare page with two heatmaps, changed the same way.
FLOORS = {"sentence": "bare page, 2 heatmaps", "slider": "bare page, 2 heatmaps, slider"}


if __name__ == "__main__":
    main()
