"""Looking inside, in a real browser: on all-MiniLM-L6-v2 the token and head questions are asked before any
knockout chart exists, a committed guess is scored, and the heatmap drawn holds encoder_core's numbers; the
lesson's steps fit a lecture screen and a phone. Screenshots go to artifacts/screenshots/inside/."""

from __future__ import annotations

import re

import numpy as np
import pytest

from encoder_core.lessons import inside as core
from tests.apptest_helpers import decode

from .driver import SKIP, assert_no_exception, wait_charts, wait_idle

LOAD_MS = 120_000
HEAD_Q, HEAD_R = ".st-key-predict-inside-head", ".st-key-reveal-inside-head"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def expected(minilm_mlm):
    model, tok, _ = minilm_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    return core.knockouts(model, tok, cloze)


def drawn_heatmaps(page) -> list:
    """Each drawn heatmap's z as plotly.js holds it (a typed array's base64 form is decoded by the caller)."""
    return page.evaluate(
        """() => [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')]
             .map(el => el.data[0]).filter(t => t.type === 'heatmap')
             .map(t => JSON.parse(JSON.stringify(t.z,
                 (k, v) => (v && v.buffer instanceof ArrayBuffer) ? Array.from(v) : v)))"""
    )


def test_the_head_question_is_asked_before_the_heatmap_and_it_is_the_cores(browser, app_url, screenshots_dir, expected):
    out = screenshots_dir / "inside"
    out.mkdir(exist_ok=True)
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{app_url}/inside?model=minilm", timeout=LOAD_MS)
    page.locator(HEAD_Q).wait_for(timeout=LOAD_MS)
    wait_idle(page, LOAD_MS)
    assert_no_exception(page)  # no chart yet: the tokens' and the heads' knockouts both wait for a commit
    assert page.locator(HEAD_R).count() == 0 and not drawn_heatmaps(page)
    page.locator(HEAD_Q).scroll_into_view_if_needed()
    page.screenshot(path=str(out / "asking.png"))
    layer, head = expected.most_important_head()
    # an option reads "B. layer 4, head 7": its letter follows the order drawn for this visit
    page.locator(HEAD_Q).get_by_text(re.compile(rf"^[A-J]\. layer {layer}, head {head}$")).click()
    page.locator(HEAD_Q).get_by_text("sure", exact=True).click()
    page.locator(HEAD_Q).get_by_role("button", name="Commit my prediction").click()
    page.locator(HEAD_R).wait_for(timeout=LOAD_MS)
    wait_idle(page, LOAD_MS)
    wait_charts(page, 1, LOAD_MS)
    assert "Right." in page.locator(HEAD_R).inner_text()
    (z,) = drawn_heatmaps(page)
    np.testing.assert_allclose(np.array(decode(z), dtype=float), expected.heads.numpy(), atol=1e-4)
    page.locator(HEAD_R).scroll_into_view_if_needed()
    page.screenshot(path=str(out / "revealed.png"))
    context.close()


def reveal_the_step(page, rounds: int = 20) -> None:
    """Skip the step's question (its buttons can arrive a moment after its box) until a chart is on the page."""
    page.locator("[class*='st-key-predict-'], [data-testid=stPlotlyChart]").first.wait_for(timeout=LOAD_MS)
    for _ in range(rounds):
        page.wait_for_timeout(500)
        wait_idle(page, LOAD_MS)
        skip = page.get_by_role("button", name=SKIP)
        if skip.count():
            skip.first.click()
        elif page.locator("[data-testid=stPlotlyChart]").count():
            return


@pytest.mark.parametrize("step", range(4))
def test_each_step_in_a_lecture_and_on_a_phone(browser, app_url, screenshots_dir, step):
    out = screenshots_dir / "inside"
    out.mkdir(exist_ok=True)
    for name, viewport, query in (
        ("lecture", {"width": 1920, "height": 1080}, f"lecture=1&step={step}"),
        ("phone", PHONE, f"step={step}"),
    ):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        page.goto(f"{app_url}/inside?model=minilm&{query}", timeout=LOAD_MS)
        reveal_the_step(page)
        wait_charts(page, 1, LOAD_MS)
        assert_no_exception(page)
        wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert wide <= 0, f"step {step} scrolls sideways by {wide} px ({name})"
        page.screenshot(path=str(out / f"{name}-step{step}.png"))
        context.close()
