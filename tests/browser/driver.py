"""Waiting for Streamlit in a real browser, and reading what the charts drew."""

from __future__ import annotations

import time

from playwright.sync_api import TimeoutError as PlaywrightTimeout

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'


def wait_idle(page, timeout_ms: int = 30_000) -> None:
    """The script finished its rerun (the status flips to running and back)."""
    page.wait_for_selector(IDLE, timeout=timeout_ms)


SETTLED_SIGNATURE = """() => [
    document.querySelectorAll('[data-testid=stElementContainer]').length,
    document.querySelectorAll('[data-stale=true]').length,
    document.body.innerText.length]"""


def wait_settled(page, timeout_ms: int = 90_000, quiet_ms: int = 500) -> None:
    """The page has stopped changing: idle, nothing drawn as stale, and the same elements and text
    across two looks `quiet_ms` apart. A bare wait_idle can pass in the gap between a run and the
    rerun it asks for, with half of the page drawn; what is read right after it then flickers."""
    deadline = time.time() + timeout_ms / 1000
    last = None
    while time.time() < deadline:
        wait_idle(page, max(1, int((deadline - time.time()) * 1000)))
        signature = page.evaluate(SETTLED_SIGNATURE)
        if signature == last and signature[1] == 0:
            return
        last = signature
        page.wait_for_timeout(quiet_ms)
    raise AssertionError(f"the page kept changing for {timeout_ms} ms: {last}")


def wait_charts(page, n: int = 1, timeout_ms: int = 30_000) -> None:
    """plotly.js loads lazily: the chart arrives after the run ends. Wait for n drawn charts."""
    page.wait_for_function(
        "n => document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot .main-svg').length >= n",
        arg=n,
        timeout=timeout_ms,
    )


def chart_data(page, index: int = 0) -> list[dict]:
    """The traces plotly.js drew in the index-th chart on the page (numbers as drawn)."""
    return page.evaluate(
        """i => { const el = document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')[i];
                 return el ? JSON.parse(JSON.stringify(el.data, (k, v) =>
                     (v && v.buffer instanceof ArrayBuffer) ? Array.from(v) : v)) : null; }""",
        index,
    )


FIND_TRACE = """name => [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')]
    .findIndex(el => (el.data || []).some(t => t.name === name))"""


def wait_chart_with_trace(page, name: str, timeout_ms: int = 60_000) -> list[dict]:
    """The traces of the first chart holding a trace of this name, once one is drawn. Charts draw in any
    order, and one being replaced still holds its old data: its index alone does not say which it is."""
    page.wait_for_function(f"name => ({FIND_TRACE})(name) >= 0", arg=name, timeout=timeout_ms)
    return chart_data(page, page.evaluate(FIND_TRACE, name))


def wait_chart_change(page, before, index: int = 0, timeout_s: float = 20.0):
    """Poll until the index-th chart's data differs from `before`; return the new data."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        wait_idle(page)
        now = chart_data(page, index)
        if now is not None and now != before:
            return now
        time.sleep(0.1)
    raise AssertionError("the chart did not change after the action")


def assert_no_exception(page) -> None:
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.first.inner_text()


SKIP = "Skip: just show me"  # ui.frame.predict's skip button (asked by role: hidden copies are not buttons)


def skip_predictions(page, limit: int = 20) -> None:
    """Press every "Skip: just show me" on the page, one at a time, so the reveals are drawn.

    Each press waits for the page to settle first, so it never aims at a button a rerun is replacing; a press
    that still meets a redraw is tried again on the settled page (the button may be gone: then it is done)."""
    for _ in range(limit):
        wait_settled(page, quiet_ms=300)
        buttons = page.get_by_role("button", name=SKIP)
        if buttons.count() == 0:
            return
        try:
            buttons.first.click(timeout=10_000)
        except PlaywrightTimeout:
            continue
        page.wait_for_timeout(200)  # the rerun that the click starts
