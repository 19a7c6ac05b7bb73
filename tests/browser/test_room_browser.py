"""A class room's self-paced quiz in real browsers: a lecturer opens a room, three students (three browser
contexts, so three browser ids) answer its first question at /quiz?room=, and the lecturer's chart shows
their answers without a reload, redrawn by the page's own timer. The lecturer and the students are on two app
processes sharing PostgreSQL, as in a hall."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from encoder_core.quiz import CHOICE_KINDS, question_for

from .driver import assert_no_exception, chart_data, wait_idle
from .room_processes import lecturer_and_phone_processes

LOAD_MS = 90_000


def first_choice_quiz() -> int:
    return next(s for s in range(1, 500) if question_for(None, s, 0).kind in CHOICE_KINDS)


def open_room(page, app_url: str, seed: int) -> str:
    page.goto(f"{app_url}/room")
    box = page.get_by_label("Quiz number", exact=True)
    box.wait_for(timeout=LOAD_MS)
    box.fill(str(seed))
    box.press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Open a room").click()
    show_quiz_results(page)
    match = re.search(r"room=([A-Z0-9]{8})", page.url)
    assert match, page.url
    return match.group(1)


PHONE = {"width": 390, "height": 844}


def show_quiz_results(page) -> None:
    """The self-paced quiz's results are folded under the room's rounds: open them."""
    page.get_by_text("Self-paced quiz: students answer").click(timeout=LOAD_MS)
    page.get_by_text("Students joined").wait_for(timeout=LOAD_MS)


def answer_first_question(
    browser, app_url: str, code: str, option: int, again: bool = False, screenshot: Path | None = None
) -> None:
    """A new browser answers the room's first question; again: it reloads and answers once more, which
    the room must not count (the browser's id outlives the session in a cookie). With a screenshot
    path, the browser is a phone's (390 x 844) and its view before answering is saved there."""
    context = browser.new_context(viewport=PHONE) if screenshot else browser.new_context()
    page = context.new_page()
    page.goto(f"{app_url}/quiz?room={code}")
    for expected in ["Sent to room", "already has your first answer"][: 2 if again else 1]:
        if expected != "Sent to room":
            page.reload()
        group = page.get_by_label("Your answer", exact=True).first
        group.wait_for(timeout=LOAD_MS)
        wait_idle(page)
        if screenshot and expected == "Sent to room":
            page.screenshot(path=str(screenshot))
        group.get_by_role("radio").nth(option).check(force=True)
        page.get_by_role("button", name="Submit").first.click()
        page.get_by_text(expected).wait_for(timeout=30_000)
        assert_no_exception(page)
    context.close()


def drawn_counts(page) -> list[int] | None:
    """The student counts the lecturer's option chart prints on its bars ("2 (67%)"), or None before it is drawn."""
    data = chart_data(page, 0)
    if not data:
        return None
    return [int(t.split(" ")[0]) for t in data[0]["text"]]


def run_room(browser, lecturer_url: str, student_url: str, screenshot: Path) -> None:
    """Open a room at lecturer_url, answer at student_url (right, wrong, wrong), see 1 and 2 on the chart."""
    seed = first_choice_quiz()
    question = question_for(None, seed, 0)
    right = question.choices.index(question.answer)
    wrong = next(i for i in range(len(question.choices)) if i != right)

    lecturer = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = lecturer.new_page()
    code = open_room(page, lecturer_url, seed)
    assert "key=" not in page.url
    student_link = page.locator('[data-testid="stCode"]').filter(has_text=f"quiz?room={code}").first.inner_text()
    assert "key" not in student_link

    for i, option in enumerate((right, wrong, wrong)):
        phone = screenshot.with_name("room_student_phone.png") if i == 0 else None
        answer_first_question(browser, student_url, code, option, again=i == 0, screenshot=phone)

    # no reload, no click: the fragment's timer redraws the chart
    page.wait_for_function(
        """() => { const el = document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot');
                   return el && el.data && el.data[0].text.reduce((n, t) => n + parseInt(t), 0) === 3; }""",
        timeout=30_000,
    )
    counts = drawn_counts(page)
    assert counts[right] == 1 and counts[wrong] == 2 and sum(counts) == 3
    metrics = page.locator('[data-testid="stMetricValue"]').all_inner_texts()
    assert metrics[:2] == ["3", "3"]
    assert_no_exception(page)
    page.screenshot(path=str(screenshot))
    page.reload()  # the lecturer's view survives a reload (the key is kept in this browser, not the link)
    show_quiz_results(page)
    assert "key=" not in page.url
    lecturer.close()


@pytest.mark.slow
def test_students_answers_appear_on_the_lecturers_chart_across_two_processes_without_a_reload(browser, screenshots_dir):
    """The lecturer through nginx on one process, the students on the other, sharing PostgreSQL as a hall's
    processes do (the lecturer's whole session stays on its process)."""
    with lecturer_and_phone_processes(browser) as (proxy_url, student_url, lecturer_stayed):
        run_room(browser, proxy_url, student_url, screenshots_dir / "room_lecturer.png")
        assert lecturer_stayed()
