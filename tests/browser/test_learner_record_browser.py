"""A student the lab remembers, in a real browser: two missed predictions survive a reload, a new tab and
an app restart; another browser starts empty until the record is moved to it by its code; a day later
(the test clock) the missed idea is due, and a right answer in the review sends it 3 days out."""

from __future__ import annotations

from datetime import timedelta

import pytest

from classroom import clock
from classroom.schedule import schedule
from classroom.store import DATABASE_URL_VAR, RoomStore
from encoder_core.quiz import generators
from ui.frame.learner import COOKIE
from ui.frame.review import first_unseen_seed

from .conftest import serving
from .driver import assert_no_exception, wait_idle

LOAD_MS = 90_000
REVIEW_LINK = "Review what I missed"
# The right options of attention's two predictions on any sentence: the last row is never changed by the
# causal mask, and dropping the last token moves earlier vectors only without it.
RIGHT = {"attention-rows": "the last row", "attention-drop": "only the bidirectional one"}


def app(database: str, days_later: float = 0):
    """The app on its own port and database; days_later moves its clock (the test setting)."""
    return serving(extra_env={DATABASE_URL_VAR: database, clock.SHIFT_VAR: str(days_later)})


def open_lesson(page, url: str) -> None:
    page.goto(url, timeout=LOAD_MS)
    page.locator("[class*='st-key-predict-']").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, LOAD_MS)
    assert_no_exception(page)


def miss(page, key: str) -> None:
    """Commit a wrong option of the prediction `key`, sure of it, as a student who holds a misconception."""
    question = page.locator(f".st-key-predict-{key}")
    question.scroll_into_view_if_needed()
    options = question.get_by_role("radiogroup").first.locator("label")
    options.first.wait_for(timeout=LOAD_MS)
    labels = options.all_inner_texts()
    wrong = next(label for label in labels if RIGHT[key] not in label)
    question.get_by_role("radiogroup").first.get_by_text(wrong, exact=True).click()
    question.get_by_role("radiogroup").last.get_by_text("sure", exact=True).click()
    question.get_by_role("button", name="Commit my prediction").click()
    reveal = page.locator(f".st-key-reveal-{key}")
    reveal.wait_for(timeout=LOAD_MS)
    wait_idle(page, LOAD_MS)
    assert "Not quite" in reveal.inner_text()


def due_count(page) -> int:
    """The sidebar's "Review what I missed (N due)", 0 when it is not there."""
    wait_idle(page, LOAD_MS)
    link = page.get_by_role("link", name=REVIEW_LINK)
    if link.count() == 0:
        return 0
    return int(link.first.inner_text().split("(")[1].split()[0])


@pytest.fixture
def database(tmp_path):
    return f"sqlite:///{tmp_path / 'lab.sqlite3'}"


def test_the_record_survives_reload_tab_and_restart_moves_by_code_and_schedules_the_review(browser, database):
    student = browser.new_context(viewport={"width": 1440, "height": 900})
    page = student.new_page()
    with app(database) as url:
        open_lesson(page, f"{url}/attention?all=1&sentence=the+old+dog+slept+by+the+fire")
        miss(page, "attention-rows")
        miss(page, "attention-drop")
        assert due_count(page) == 2
        assert any(c["name"] == COOKIE for c in student.cookies())
        page.reload()
        page.get_by_role("link", name=REVIEW_LINK).wait_for(timeout=LOAD_MS)
        assert due_count(page) == 2  # a reload
        tab = student.new_page()
        tab.goto(f"{url}/quiz", timeout=LOAD_MS)
        tab.get_by_role("link", name=REVIEW_LINK).wait_for(timeout=LOAD_MS)
        assert due_count(tab) == 2  # a new tab
        tab.close()
    with app(database) as url:  # the app restarted
        page.goto(f"{url}/progress", timeout=LOAD_MS)
        page.get_by_role("link", name=REVIEW_LINK).wait_for(timeout=LOAD_MS)
        assert due_count(page) == 2
        page.get_by_text("missed", exact=True).nth(1).wait_for(timeout=LOAD_MS)  # two of the table's cells

        other = browser.new_context(viewport={"width": 390, "height": 844})
        phone = other.new_page()
        phone.goto(f"{url}/progress", timeout=LOAD_MS)
        phone.get_by_text("Nothing yet", exact=False).wait_for(timeout=LOAD_MS)
        assert due_count(phone) == 0  # another browser: empty
        page.get_by_role("button", name="Make a code").click()
        page.get_by_text("on the other device within").wait_for(timeout=LOAD_MS)
        code = page.locator("strong").filter(has_text="-").first.inner_text()
        phone.get_by_label("A code from another device").fill(code)
        phone.get_by_label("A code from another device").press("Enter")
        phone.get_by_role("button", name="Use this code").click()
        phone.get_by_text("now holds that record").wait_for(timeout=LOAD_MS)
        phone.reload()  # the phone keeps it: its own cookie now names the record
        phone.get_by_role("link", name=REVIEW_LINK).wait_for(timeout=LOAD_MS)
        assert due_count(phone) == 2
        other.close()

    store = RoomStore(database)
    (learner,) = [row[0] for row in store.engine.connect().exec_driver_sql("SELECT id FROM learner").all()]
    concept = next(a.concept for a in store.history(learner) if a.right is False)
    with app(database, days_later=1) as url:  # a day later
        page.goto(f"{url}/quiz?step=2", timeout=LOAD_MS)
        page.get_by_role("link", name=REVIEW_LINK).wait_for(timeout=LOAD_MS)
        assert due_count(page) == 2  # still due: a miss is due at once and again the next day
        seen = schedule(store.history(learner), clock.now() + timedelta(days=1))[concept].seen
        question = {g.__name__: g for g in generators()}[concept](first_unseen_seed(concept, seen))
        form = page.locator("[data-testid=stForm]").first
        if question.choices:
            form.get_by_role("radiogroup").get_by_text(str(question.answer), exact=True).click()
        else:
            form.get_by_role("textbox").fill(question.answer_text)
        before = len(store.history(learner))
        form.get_by_role("button", name="Submit").click()
        for _ in range(300):  # the answer is in the record once its run has finished
            if len(store.history(learner)) > before:
                break
            page.wait_for_timeout(100)
        assert_no_exception(page)
        state = schedule(store.history(learner), clock.now() + timedelta(days=1, minutes=1))[concept]
        assert state.status == "practising"
        assert timedelta(days=2.9) < state.due - (clock.now() + timedelta(days=1)) < timedelta(days=3.1)
        page.goto(f"{url}/progress", timeout=LOAD_MS)
        page.get_by_text("in 3 days", exact=False).first.wait_for(timeout=LOAD_MS)  # the idea answered right
    student.close()


def test_the_record_lives_in_the_database_not_in_a_process(browser):
    """Two app processes on one PostgreSQL, as deploy/ runs them: a miss committed on one is in the review
    of the other (a browser sends its cookie to both: cookies do not depend on the port)."""
    from pathlib import Path

    from scripts.scale_out import NGINX, app_port, behind_nginx
    from tests.needs import missing
    from tests.room_postgres import postgres_server

    if not Path(NGINX).exists():
        missing("nginx")
    with postgres_server() as database, behind_nginx(2, {DATABASE_URL_VAR: database}) as (_, apps, _prefix):
        first, second = (f"http://127.0.0.1:{app_port(a)}" for a in apps)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        page = context.new_page()
        open_lesson(page, f"{first}/attention?all=1")
        miss(page, "attention-rows")
        assert due_count(page) == 1
        page.goto(f"{second}/progress", timeout=LOAD_MS)
        page.get_by_role("link", name=REVIEW_LINK).wait_for(timeout=LOAD_MS)
        page.get_by_text("missed", exact=True).first.wait_for(timeout=LOAD_MS)  # the progress table's cell
        assert due_count(page) == 1
        context.close()
