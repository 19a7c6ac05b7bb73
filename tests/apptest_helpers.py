"""Helpers for Streamlit AppTest: open a page of the app, read the charts' data back."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from classroom.decks import Deck, TypedStep, ViewStep
from ui.frame.chart_element import COMPONENT_NAME as CHART_COMPONENT
from ui.frame.chart_element import PRELOAD_KEY
from ui.frame.charts import numbers_panel_key
from ui.frame.link_box import LINK_COMPONENT

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


# Lessons show one section at a time; most page tests check every section's numbers at once,
# so they open the lesson with every section on one page (the sidebar switch, `?all=1`).
EVERY_SECTION = {"all": "1"}


def with_sections(query: dict | None, every_section: bool) -> dict:
    return {**(EVERY_SECTION if every_section else {}), **(query or {})}


PREDICT_SKIP_PREFIX = "_predict_skip_"  # ui.frame.predict's "Skip: just show me" buttons


def skip_predictions(at: AppTest, rounds: int = 3) -> AppTest:
    """Press every "Skip: just show me" on the page, so every reveal is drawn (a student who skips).

    A reveal may hold a further prediction, so it presses again, up to `rounds` times."""
    for _ in range(rounds):
        buttons = [b for b in at.button if str(b.key or "").startswith(PREDICT_SKIP_PREFIX)]
        if not buttons:
            break
        for b in buttons:
            b.click()
        at.run()
    return at


def commit_prediction(
    at: AppTest, key: str, guess=None, *, typed: bool = False, sure: str | None = "sure", timeout: float | None = None
):
    """Answer the prediction `key` ("<lesson>-<name>") as a student does, say how sure, then press "Commit my
    prediction".

    guess: an option's label (str), a number, a typed word (str with typed=True), or None to commit
    with nothing chosen. sure: "sure", "a guess", or None to leave it unsaid."""
    if sure is not None:
        at.radio(key=f"_predict_sure_{key}").set_value(sure)
    if typed and guess is not None:
        at.text_input(key=f"_predict_guess_{key}").input(guess)
    elif isinstance(guess, str):
        at.radio(key=f"_predict_guess_{key}").set_value(guess)
    elif guess is not None:
        at.number_input(key=f"_predict_guess_{key}").set_value(guess)
    return at.button(key=f"_predict_commit_{key}").click().run(timeout=timeout)


def commit_nothing(at: AppTest, key: str, hidden: set[str] | frozenset[str]) -> AppTest:
    """Commit the prediction `key` with nothing chosen: the page asks for an answer and draws none of
    the charts in `hidden` (the reveal's)."""
    at = commit_prediction(at, key, None)
    assert "Choose an answer first" in all_text(at)
    assert not set(hidden) & set(figures(at)), set(hidden) & set(figures(at))
    return at


def open_page(
    page: str | None = None,
    query: dict | None = None,
    timeout: float = 60,
    every_section: bool = True,
    skip: bool = True,
) -> AppTest:
    """Run app.py (optionally with URL parameters), then switch to pages/<page>.py.

    skip: press every prediction's "Skip: just show me", so the page shows all it computes (tests of
    the predictions themselves pass skip=False)."""
    query = with_sections(query, every_section and page is not None)
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page:
        # Home rewrites the URL to its own (empty) state: give the link's values back to the
        # page, as a browser opening /<page>?... directly would.
        for k, v in query.items():
            at.query_params[k] = v
        at.switch_page(f"pages/{page}.py").run()
    return skip_predictions(at) if skip else at


def open_linked(
    page: str, query: dict | None = None, timeout: float = 90, every_section: bool = True, skip: bool = True
) -> AppTest:
    """Open a page straight from a link, as a browser does: the link's parameters reach the page
    (open_page runs the home page first, and home rewrites the URL without the lesson's parameters).
    skip: as for open_page."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in with_sections(query, every_section).items():
        at.query_params[k] = v
    at.switch_page(f"pages/{page}.py")
    at.run()
    return skip_predictions(at) if skip else at


def open_numbers(at: AppTest, *chart_keys: str) -> AppTest:
    """Open these charts' "numbers behind this chart" panels (filled only when open) and rerun."""
    for key in chart_keys:
        at.session_state[numbers_panel_key(key)] = True
    return at.run()


def decode(value):
    """Plotly 7 writes numpy arrays as {"dtype", "bdata", "shape"}: turn them back into arrays."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            shape = value["shape"]
            shape = [int(s) for s in shape.split(",")] if isinstance(shape, str) else shape
            arr = arr.reshape(shape)
        return arr
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        return {k: decode(v) for k, v in value.items()}
    return value


def sent_charts(at: AppTest) -> list[tuple[str, str, str]]:
    """Every chart on the page as the browser receives it: (key without the 'chart_' prefix, figure JSON, text
    alternative). Drawn by the lab's chart element (ui/frame/chart_element.py) or, on a page of Streamlit's
    own, by st.plotly_chart."""
    out = []
    for el in at.get("bidi_component"):
        if el.proto.component_name != CHART_COMPONENT or el.proto.id.endswith(PRELOAD_KEY):
            continue
        data = json.loads(el.proto.json)
        key = el.proto.id.split("-", 2)[2]  # the id is $$ID-<hash>-<key>
        out.append((key.removeprefix("chart_"), data["figure"], data["alt"]))
    for el in at.get("plotly_chart"):
        key = el.proto.id if not hasattr(el, "key") else el.key
        out.append((str(key).removeprefix("chart_") if key else f"#{len(out)}", el.proto.spec, el.proto.alt))
    return out


def charts(at: AppTest) -> list[tuple[str, dict, str]]:
    """Every chart on the page as (key without the 'chart_' prefix, decoded figure, text alternative)."""
    return [(key, decode(json.loads(figure)), alt) for key, figure, alt in sent_charts(at)]


def sidebar_link(at: AppTest) -> str:
    """The link in the sidebar's "Share this view" box."""
    (url,) = [
        json.loads(el.proto.json)["url"]
        for el in at.sidebar.get("bidi_component")
        if el.proto.component_name == LINK_COMPONENT
    ]
    return url


def figures(at: AppTest) -> dict[str, dict]:
    """Every chart on the page, by its key (without the 'chart_' prefix), decoded."""
    return {key: spec for key, spec, _ in charts(at)}


def all_text(at: AppTest) -> str:
    """All markdown, captions, alerts and metric text on the page, joined: for 'does X appear' checks."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "metric", "latex", "text", "code"):
        for el in at.get(kind):
            parts.append(str(getattr(el, "value", "")))
            if kind == "metric":
                parts.append(str(getattr(el, "label", "")))
    return "\n".join(parts)


def plain(at: AppTest) -> str:
    """The page's text with markdown escapes removed."""
    return all_text(at).replace("\\", "")


def no_exception(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


NAVIGATION_DECK = Deck(  # a deck across two lessons and the class room, presented by AppTest and in a browser
    "Navigation",
    (
        ViewStep("attention", {"step": 0, "sentence": "a cat sat"}),
        ViewStep("attention", {"step": 2, "sentence": "the bird sang"}),
        TypedStep("Which mask hides the future?", ("causal", "padding"), 1),
        ViewStep("padding", {"step": 1}),
    ),
)


def assert_nothing_answers(at: AppTest, evidence: dict, keys) -> None:
    """Every numbers panel of the page opened: no chart, table cell, text, label or download answers the
    predictions `keys`. evidence: per prediction, (the charts, the strings) that answer it."""
    at = open_numbers(at, *figures(at))
    assert not at.exception
    shown, drawn = page_evidence(at), set(figures(at))
    for key in keys:
        charts, strings = evidence[key]
        assert not charts & drawn, (key, charts & drawn)
        assert not [s for s in strings if s in shown], (key, [s for s in strings if s in shown])


def assert_token_options(q, positions, tokens, best: int, quotes: dict[int, str]) -> None:
    """A which-token prediction: the option for position i reads "i token", and each wrong one's feedback
    holds quotes[i], the numbers that make it wrong."""
    for i, option in zip(positions, q.options):
        assert option.label == f"{i} {tokens[i]}"
        if i != best:
            assert quotes[i] in option.misconception


def page_evidence(at: AppTest) -> str:
    """Everything a student can read on the page, joined: text, every table cell and dataframe value,
    every control's label, options and value, every chart's figure (titles, labels, data, hover text)
    and alternative text, and every download's label. What a prediction's answer must not be found in
    before the commit."""
    parts = [all_text(at)]
    for kind in ("table", "dataframe"):
        for el in at.get(kind):
            value = getattr(el, "value", None)
            parts.append(value.to_csv() if hasattr(value, "to_csv") else str(el.proto))
    for kind in ("radio", "selectbox", "multiselect", "select_slider", "slider", "number_input", "text_input"):
        for w in at.get(kind):
            parts.append(str(getattr(w, "label", "")))
            parts.append(" ".join(map(str, getattr(w, "options", []) or [])))
            parts.append(str(getattr(w, "value", "")))
    for _, figure, alt in sent_charts(at):
        parts += [figure, alt]
    for el in at.get("download_button"):
        parts.append(str(el.proto))
    for el in at.get("expander"):
        parts.append(str(getattr(el, "label", "")))
    for el in at.get("tab"):
        parts.append(str(getattr(el, "label", "")))
    return "\n".join(parts)
