"""Every lesson driven as a new student would, in a real browser: type and press Enter,
move a slider, flip a toggle, answer a question. After each action the chart on screen
must change to the right data, and no error element may ever appear."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from playwright.sync_api import expect

from encoder_core import TEACHING_INIT_STD, build_encoder, preset
from encoder_core.lessons import LESSON_IDS
from encoder_core.lessons.attention import compare_masks
from encoder_core.model.tokenizer import english_tokenizer
from tests.apptest_helpers import decode

from .driver import (
    CHART,
    assert_no_exception,
    chart_data,
    skip_predictions,
    wait_chart_change,
    wait_charts,
    wait_idle,
)

LESSONS = [*LESSON_IDS, "quiz"]  # every page in the navigation with a URL path
NEW_SENTENCE = "the dog ran to the park"


# A lesson whose first section asks before it draws anything: padding's pad count, answered before the batch.
OPENS_ON_A_QUESTION = {
    "padding": ".st-key-predict-padding-pad-count",
    "inside": ".st-key-predict-inside-token",  # Looking inside asks which knockout matters before its charts
}


def open_lesson(page, app_url: str, lesson: str, query: str = ""):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"{app_url}/{lesson}{query}")
    if lesson in OPENS_ON_A_QUESTION:
        page.locator(OPENS_ON_A_QUESTION[lesson]).wait_for(timeout=90_000)
    else:
        wait_charts(page, 1, timeout_ms=90_000)
    wait_idle(page)
    assert_no_exception(page)


def type_and_enter(page, label: str, text: str) -> None:
    box = page.get_by_label(label, exact=True).first
    box.fill(text)
    box.press("Enter")


def heatmap_z(data: list[dict]) -> np.ndarray:
    """z as drawn: plotly.js may keep the base64 form or hold typed arrays (serialised as dicts)."""
    z = decode(data[0]["z"])
    if isinstance(z, np.ndarray):
        return z.astype(float)
    return np.array([list(row.values()) if isinstance(row, dict) else row for row in z], dtype=float)


def numbers(v) -> list[float]:
    """A trace's x or y as drawn: a list, plotly's base64 form, or a typed array serialised as a dict."""
    v = decode(v)
    if isinstance(v, dict):
        v = list(v.values())
    return [float(x) for x in np.asarray(v).ravel()]


def expected_bidirectional(sentence: str, layer: int, head: int, seed: int = 0) -> np.ndarray:
    model = build_encoder(preset("small"), seed=seed, init_std=TEACHING_INIT_STD)
    ids = english_tokenizer().encode(sentence).ids
    with torch.inference_mode():
        return compare_masks(model, ids, layer, head).bidirectional.numpy()


@pytest.mark.parametrize("lesson", [x for x in LESSONS if x != "quiz"])
def test_lesson_default_state_screenshot(page, app_url, screenshots_dir, lesson):
    open_lesson(page, app_url, lesson)
    # Widgets still loading are drawn as grey placeholders: wait until the last one is gone.
    page.wait_for_function("() => !document.querySelector('[data-testid=stSkeleton]')", timeout=60_000)
    wait_idle(page)
    page.screenshot(path=str(screenshots_dir / f"{lesson}.png"))
    # The heatmaps' margins already hold their labels and colour bars: plotly did not have to grow
    # them, which would have cost a second drawing of the whole figure on every change.
    grown = page.evaluate(GROWN_HEATMAP_MARGINS)
    assert grown == [], grown


GROWN_HEATMAP_MARGINS = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')]
    .filter(g => g.data.every(t => t.type === 'heatmap'))
    .map(g => { const m = g._fullLayout.margin, s = g._fullLayout._size;
                return {title: g._fullLayout.title.text, given: [m.l, m.r, m.t, m.b],
                        drawn: [s.l, s.r, s.t, s.b].map(Math.round)}; })
    .filter(c => c.drawn.some((v, i) => v > c.given[i]))"""


def test_attention_type_and_slide(page, app_url):
    open_lesson(page, app_url, "attention")
    before = chart_data(page, 0)
    type_and_enter(page, "Sentence", NEW_SENTENCE)
    after = wait_chart_change(page, before)
    np.testing.assert_allclose(heatmap_z(after), expected_bidirectional(NEW_SENTENCE, 0, 0), atol=1e-5)
    assert "2 dog" in json.dumps(after)
    assert_no_exception(page)

    page.get_by_role("slider", name="Head").focus()
    page.keyboard.press("ArrowRight")
    moved = wait_chart_change(page, after)
    np.testing.assert_allclose(heatmap_z(moved), expected_bidirectional(NEW_SENTENCE, 0, 1), atol=1e-5)
    assert_no_exception(page)


def open_tab(page, name: str, charts: int = 1) -> None:
    """Click a section's tab, as a student does, and wait for its charts.

    The tab row marks the new tab at once, before the rerun has even started, so waiting for
    "idle" could return while the old section's charts are still on screen: wait until the
    first of them has gone before waiting for the new ones.
    """
    old = page.query_selector(CHART)  # no wait: a rerun may be taking the charts away right now
    page.get_by_role("tab", name=name).click()
    expect(page.get_by_role("tab", name=name)).to_have_attribute("aria-selected", "true")
    if old is not None:
        page.wait_for_function("el => !el.isConnected", arg=old, timeout=30_000)
    wait_idle(page)
    if charts:
        wait_charts(page, charts)


def test_tabs_open_one_section_at_a_time_and_links_remember_it(page, app_url):
    open_lesson(page, app_url, "attention")
    # Only the first section's worked map: its causal twin waits for the student's prediction.
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(1)
    open_tab(page, "Drop a token", charts=0)
    expect(page.locator(".st-key-predict-attention-drop")).to_be_visible()  # this section asks first
    expect(page.locator('[data-testid="stPlotlyChart"]')).to_have_count(0)
    assert page.url.endswith("step=1")
    page.get_by_role("button", name=re.compile("^Next: ")).click()
    expect(page.get_by_role("tab", name=re.compile("bank")).first).to_have_attribute("aria-selected", "true")
    wait_idle(page)
    assert page.url.endswith("step=2")
    assert_no_exception(page)


def skip_pad_count(page) -> None:
    """Padding asks its pad count before the batch: press that question's own Skip and wait for its reveal.

    Pressing whichever Skip is drawn first could run before this one is, and leave the batch unanswered."""
    page.locator(".st-key-predict-padding-pad-count").get_by_role("button", name="Skip: just show me").click()
    page.locator(".st-key-reveal-padding-pad-count").wait_for(timeout=90_000)
    skip_predictions(page)


def test_padding_toggle_and_type(page, app_url):
    open_lesson(page, app_url, "padding")
    skip_pad_count(page)  # the sections that show the pads wait for it
    wait_charts(page, 1)
    open_tab(page, "The pad-leak gap", charts=0)  # the section asks first: skip, as a student may
    skip_predictions(page)
    wait_charts(page, 1)
    before = chart_data(page, 0)
    marker = before[2]
    assert marker["name"] == "this batch, mask on" and numbers(marker["y"])[0] < 1e-6
    page.get_by_text("Padding mask", exact=True).click()
    skip_predictions(page)  # a new setting may ask again
    after = wait_chart_change(page, before)
    gap = numbers(after[2]["y"])[0]
    assert after[2]["name"] == "this batch, mask off" and gap > 0.1  # the leak, measured
    curve_x, curve_y = numbers(after[1]["x"]), numbers(after[1]["y"])
    at_batch = list(curve_x).index(numbers(after[2]["x"])[0])  # the curve runs on to 16 pads: find this batch's
    assert gap == pytest.approx(curve_y[at_batch], rel=1e-6)  # on the no-mask curve, at this batch's pads
    expect(page.get_by_text(re.compile("^Mask off: the single sentence"))).to_be_visible()
    assert_no_exception(page)

    first = chart_data(page, 0)
    type_and_enter(page, "Single sentence", "the dog ran to the park")
    wait_idle(page)
    open_tab(page, "The batch", charts=0)  # a new batch: its pad count is asked again, first
    skip_pad_count(page)
    open_tab(page, "The pad-leak gap", charts=0)
    skip_predictions(page)  # a new sentence asks again
    wait_charts(page, 1)
    after = chart_data(page, 0)
    assert numbers(after[2]["x"])[0] < numbers(first[2]["x"])[0]  # a longer sentence: fewer pads
    assert_no_exception(page)


@pytest.mark.parametrize(
    ("lesson", "label"),
    [("masking", "Sentence"), ("block", "Sentence"), ("heads", "Sentence")],
)
def test_lesson_reacts_to_a_typed_sentence(page, app_url, lesson, label):
    if lesson not in LESSONS:
        pytest.skip(f"{lesson} is not in the navigation")
    open_lesson(page, app_url, lesson)
    assert "park" not in json.dumps(all_charts(page))
    type_and_enter(page, label, NEW_SENTENCE)
    # Some lesson's first chart does not depend on the sentence: wait for any chart to show it.
    for _ in range(400):
        wait_idle(page)
        if "park" in json.dumps(all_charts(page)):
            break
        page.wait_for_timeout(100)
    assert "park" in json.dumps(all_charts(page)), f"no chart on /{lesson} shows the typed sentence"
    assert_no_exception(page)


def all_charts(page) -> list:
    n = page.locator(CHART).count()
    return [chart_data(page, i) for i in range(n)]


def test_quiz_answer_gets_feedback(page, app_url):
    if "quiz" not in LESSONS:
        pytest.skip("quiz is not in the navigation")
    page.goto(f"{app_url}/quiz?quiz_seed=7")
    page.get_by_role("button", name="Submit").first.wait_for(timeout=60_000)
    wait_idle(page)
    answer = page.get_by_label("Your answer", exact=True).first  # a text box, or a group of options
    answer.wait_for(timeout=20_000)
    if answer.get_attribute("role") == "radiogroup":
        answer.get_by_role("radio").first.check(force=True)
    else:
        type_and_enter(page, "Your answer", "3")
    wait_idle(page)
    page.get_by_role("button", name="Submit").first.click()
    wait_idle(page)
    feedback = page.locator('[data-testid="stAlert"]')
    feedback.first.wait_for(timeout=20_000)
    assert feedback.count() >= 1
    assert_no_exception(page)


def test_typed_markup_is_shown_as_text(page, app_url):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    open_lesson(page, app_url, "attention")
    before = chart_data(page, 0)
    type_and_enter(page, "Sentence", "<img src=x onerror=alert(1)> <b>bold</b> <script>alert(2)</script>")
    wait_chart_change(page, before)
    page.wait_for_timeout(500)
    assert dialogs == []
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("b:text-is('bold')").count() == 0
    assert_no_exception(page)


def test_shared_link_opens_that_state(page, app_url):
    open_lesson(page, app_url, "attention", "?sentence=the+bird+sang&layer=1&head=2&seed=3")
    expect(page.get_by_label("Sentence", exact=True).first).to_have_value("the bird sang", timeout=30_000)
    wait_idle(page)
    z = heatmap_z(chart_data(page, 0))
    np.testing.assert_allclose(z, expected_bidirectional("the bird sang", 1, 2, seed=3), atol=1e-5)


def test_numbers_panel_fills_when_opened(page, app_url):
    open_lesson(page, app_url, "padding")
    skip_pad_count(page)  # the batch is drawn once its pad count is answered
    wait_charts(page, 1)
    panel = page.get_by_test_id("stExpander").filter(has_text="Numbers behind this chart").first
    assert panel.get_by_test_id("stDataFrame").count() == 0  # closed: nothing sent, nothing built
    panel.get_by_text("Numbers behind this chart, downloads").click()
    expect(panel.get_by_test_id("stDataFrame")).to_be_visible(timeout=30_000)
    expect(panel.get_by_role("button", name="CSV", exact=True)).to_be_visible()
    wait_idle(page)
    assert_no_exception(page)
