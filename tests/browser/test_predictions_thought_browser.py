"""Predictions a student has to think about, in a real browser: every lesson asks at least twice on each of
two different sentences; its predictions are committed (and one skipped: "just show me"), with the model's
value in no part of the page before each commit; and the options come in an order that changes between
visits. Screenshots of each lesson asking go to artifacts/screenshots/predictions/. (What counts as each
prediction's own evidence, table cell by table cell, is checked in the lessons' AppTests; here the browser
sees what a student sees.)"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from encoder_core.lessons import LESSON_IDS
from scripts.prediction_slots import SENTENCE_PARAMS, SENTENCES, inside_sentence

from .driver import assert_no_exception, wait_idle, wait_settled

LOAD_MS = 90_000
OPEN = "[class*='st-key-predict-']:has(button:has-text('Commit my prediction'))"
REVEAL = "[class*='st-key-reveal-']"
TWO_SENTENCES = SENTENCES[:2]
# "the model's value is 22.6", "the model's 22.6": a number's answer, in the verdict after the commit.
MODELS_VALUE = re.compile(r"model's (?:value is )?(-?[\d,]*\.?\d+)")


def page_evidence(page) -> str:
    """What a student could read: the page's text and every number the charts hold."""
    return page.evaluate(
        """() => document.body.innerText + JSON.stringify(
               [...document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot')].map(el =>
                   JSON.parse(JSON.stringify(el.data || [], (k, v) =>
                       (v && v.buffer instanceof ArrayBuffer) ? Array.from(v) : v))))"""
    )


def context(found: re.Match | None) -> str:
    """The text around a match, to say where on the page a value was."""
    if found is None:
        return ""
    text = found.string
    return repr(text[max(0, found.start() - 80) : found.end() + 80])


def answer(question) -> None:
    """Answer an open prediction as a student would: the first option shown, or a number, or a word; sure."""
    question.get_by_role("radiogroup").last.get_by_text("sure", exact=True).wait_for(timeout=LOAD_MS)
    groups = question.get_by_role("radiogroup")
    if groups.count() > 1:  # the answer's options, then "How sure are you?"
        groups.first.get_by_role("radio").first.check(force=True)
    elif question.locator("input[type=number]").count():
        question.locator("input[type=number]").first.fill("3")
        question.locator("input[type=number]").first.press("Tab")
    else:
        question.locator("input[type=text]").first.fill("cat")
        question.locator("input[type=text]").first.press("Tab")
    question.get_by_role("radiogroup").last.get_by_text("sure", exact=True).click()


def key_of(classes: str) -> str:
    return next(c for c in classes.split() if c.startswith("st-key-predict-")).removeprefix("st-key-predict-")


def first_open(page):
    """(key, question) of the first prediction still open once the page has settled, scrolled into view; None
    when none is open. The question is held by its key, so a redraw of the page cannot swap in another one."""
    wait_settled(page, LOAD_MS)
    questions = page.locator(OPEN)
    if questions.count() == 0:
        return None
    key = key_of(questions.first.get_attribute("class"))
    question = page.locator(f".st-key-predict-{key}")
    question.scroll_into_view_if_needed()
    return key, question


def commit_every_prediction(page, limit: int = 12) -> list[str]:
    """Commit each open prediction in turn (a reveal may open another); return their keys."""
    done = []
    for _ in range(limit):
        found = first_open(page)
        if found is None:
            break
        key, question = found
        answer(question)
        before = page_evidence(page)
        assert page.locator(f".st-key-reveal-{key}").count() == 0, f"{key}: its reveal is on the page before the commit"
        question.get_by_role("button", name="Commit my prediction").click()
        reveal = page.locator(f".st-key-reveal-{key}")
        reveal.wait_for(timeout=LOAD_MS)
        wait_idle(page, LOAD_MS)
        assert_no_exception(page)
        verdict = reveal.inner_text()
        for value in MODELS_VALUE.findall(verdict):
            if len(value.replace(",", "").replace(".", "").lstrip("-0")) >= 2:  # a number, not a bare 1 or 0
                shown = re.search(rf"(?<![\d.]){re.escape(value)}(?!\.?\d)", before)  # the number, not a digit run
                assert not shown, (
                    f"{key}: the model's value {value} was on the page before its commit: {context(shown)}"
                )
        done.append(key)
    return done


def skip_first(page) -> str:
    """Skip the first open prediction ("just show me"): its reveal, and no other, comes; return its key."""
    key, question = first_open(page)
    question.get_by_role("button", name="Skip: just show me").click()
    page.locator(f".st-key-reveal-{key}").wait_for(timeout=LOAD_MS)
    wait_idle(page, LOAD_MS)
    assert_no_exception(page)
    assert page.locator(REVEAL).count() == 1, f"{key}: skipping it revealed more than its own answer"
    return key


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_each_lessons_predictions_are_committed_on_two_sentences_with_no_answer_shown_before(
    browser, app_url, screenshots_dir, lesson
):
    """On the first sentence every prediction is committed; on the second the first one is skipped and the
    rest committed. Each visit asks at least twice."""
    name, asked = SENTENCE_PARAMS[lesson], []
    for first_visit, sentence in zip((True, False), TWO_SENTENCES, strict=True):
        sentence = inside_sentence(sentence) if lesson == "inside" else sentence
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        page.goto(f"{app_url}/{lesson}?{urlencode({'all': '1', name: sentence})}", timeout=LOAD_MS)
        page.locator(OPEN).first.wait_for(timeout=LOAD_MS)
        assert_no_exception(page)
        if first_visit:
            wait_settled(page, LOAD_MS)
            assert page.locator(REVEAL).count() == 0  # before a commit no answer is on the page, hidden or not
            page.locator(OPEN).first.scroll_into_view_if_needed()
            out = screenshots_dir / "predictions"
            out.mkdir(exist_ok=True)
            page.screenshot(path=str(out / f"{lesson}-asking.png"))
            keys = commit_every_prediction(page)
        else:
            keys = [skip_first(page), *commit_every_prediction(page)]
        asked.append(keys)
        context.close()
    assert all(len(keys) >= 2 for keys in asked), asked


def option_orders(browser, app_url: str, lesson: str) -> tuple[tuple[str, ...], ...]:
    """The options of every open choice prediction on a fresh visit, in the order shown."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{app_url}/{lesson}?all=1", timeout=LOAD_MS)
    page.locator(OPEN).first.wait_for(timeout=LOAD_MS)
    wait_settled(page, LOAD_MS)
    orders = []
    for i in range(page.locator(OPEN).count()):
        groups = page.locator(OPEN).nth(i).get_by_role("radiogroup")
        if groups.count() > 1:
            labels = groups.first.locator("label").all_inner_texts()
            assert [label[:2] for label in labels] == [f"{'ABCDEFGH'[j]}." for j in range(len(labels))]
            orders.append(tuple(label[3:] for label in labels))
    context.close()
    return tuple(orders)


def test_the_options_order_changes_between_visits(browser, app_url):
    first = option_orders(browser, app_url, "attention")
    assert first, "no choice prediction open on a first visit"
    for _ in range(4):  # 4-option questions: the same order on every one of 4 more visits is a 1 in 10^5 chance
        again = option_orders(browser, app_url, "attention")
        assert sorted(map(sorted, again)) == sorted(map(sorted, first))  # the same options
        if again != first:
            return
    pytest.fail(f"the options came in the same order on 5 visits: {first}")
