"""AppTests of the class room: opening a room, the lecturer key (right, wrong, missing, in the link),
students answering through the quiz page, closed and unknown rooms, bad codes and a database that is down."""

from __future__ import annotations

import re

import apptest_helpers as helpers
import pytest
from apptest_helpers import all_text, no_exception, plain
from streamlit.testing.v1 import AppTest

from classroom.codes import shown_code
from classroom.store import DATABASE_URL_VAR
from encoder_core.quiz import CHOICE_KINDS, question_for

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_limiter")]


def open_room_page(query: dict | None = None) -> AppTest:
    return helpers.open_linked("room", query, every_section=False)


def a_quiz_with_a_choice_question_first() -> int:
    return next(s for s in range(1, 500) if question_for(None, s, 0).kind in CHOICE_KINDS)


def test_a_lecturer_opens_a_room_and_sees_it_without_its_key_in_the_link(database):
    at = open_room_page()
    no_exception(at)
    seed = a_quiz_with_a_choice_question_first()
    at.number_input(key="room_quiz_seed").set_value(seed)
    at = at.button(key="room_open").click().run()
    no_exception(at)
    code = at.session_state["room"]
    room = database.room(code)
    assert room.quiz_seed == seed and room.state(room.created_at) == "open"
    text = all_text(at)
    assert shown_code(code) in text and f"quiz?room={code}" in text
    assert "key" not in at.query_params and at.query_params["room"] == code
    student_link = next(c.value for c in at.code if c.value.endswith(f"quiz?room={code}"))
    key = at.session_state["_room_keys"][code]
    assert key not in student_link and database.is_lecturer(code, key)
    assert [m.value for m in at.metric] == ["0", "0", "0"] and "No answers yet" in text
    assert at.get("imgs") or at.get("image")  # the QR code


def answer_in_room(code: str, right: bool) -> AppTest:
    at = helpers.open_linked("quiz", {"room": code}, every_section=False)
    no_exception(at)
    radio = next(r for r in at.radio if str(r.key).startswith("quiz_page_answer_"))
    name, seed = str(radio.key).removeprefix("quiz_page_answer_").split(":")
    question = next(q for q in [question_for(None, int(at.session_state["quiz_seed"]), 0)] if q.id == f"{name}:{seed}")
    radio.set_value(question.answer if right else next(c for c in question.choices if c != question.answer))
    return at.button(key="quiz_page_submit").click().run()


def test_students_answers_reach_the_lecturers_view_most_missed_first(database):
    seed = a_quiz_with_a_choice_question_first()
    room, key = database.open_room(seed)
    for right in (True, False, False):
        at = answer_in_room(room.code, right)
        no_exception(at)
        assert f"Sent to room {shown_code(room.code)}" in plain(at)
        assert at.session_state["quiz_seed"] == seed
        assert at.number_input(key="quiz_seed").disabled
    again = at.button(key="quiz_page_submit").click().run()  # the same student again: not counted twice
    assert "already has your first answer" in plain(again)

    lecturer = open_room_page({"room": room.code, "key": key})
    no_exception(lecturer)
    assert "key" not in lecturer.query_params
    assert [m.value for m in lecturer.metric] == ["3", "3", "1"]
    figs = helpers.figures(lecturer)
    (spec,) = figs.values()
    bars = spec["data"][0]
    shares = dict(zip(bars["y"], helpers.decode(bars["x"]), strict=True))
    q = question_for(None, seed, 0)
    right_label = next(label for label in shares if q.answer[:20].replace("&", "&amp;") in label)
    assert shares[right_label] == pytest.approx(100 / 3)
    assert sum(shares.values()) == pytest.approx(100)
    assert "1 of 3 right" in spec["layout"]["title"]["text"]
    table = lecturer.dataframe[0].value
    assert list(table["answers"]) == [3] and list(table["right"]) == [1]


def test_a_wrong_or_missing_key_shows_only_the_visitors_view(database):
    room, key = database.open_room(5)
    for query in ({"room": room.code}, {"room": room.code, "key": "x" * 22}, {"room": room.code, "key": "<b>"}):
        at = open_room_page(query)
        no_exception(at)
        assert not at.metric and "Lecturer key" in [t.label for t in at.text_input]
        assert key not in plain(at)
    at.text_input(key="room_key_typed").input("wrong-key-wrong-key-ab")
    at = at.button(key="room_key_submit").click().run()
    assert "not this room's lecturer key" in plain(at) and not at.metric
    at.text_input(key="room_key_typed").input(key)
    at = at.button(key="room_key_submit").click().run()
    no_exception(at)
    assert [m.label for m in at.metric][:1] == ["Students joined"]


def test_a_closed_room_takes_no_more_answers(database):
    seed = a_quiz_with_a_choice_question_first()
    room, key = database.open_room(seed)
    lecturer = open_room_page({"room": room.code, "key": key})
    lecturer = lecturer.button(key="room_close").click().run()
    no_exception(lecturer)
    assert database.room(room.code).closed_at is not None and "closed at" in plain(lecturer)
    at = answer_in_room(room.code, True)
    no_exception(at)
    text = plain(at)
    assert "is closed" in text and "this answer was not sent" in text
    assert database.option_counts(room.code) == []


@pytest.mark.parametrize("raw", ["ZZZZZZZZ", "abc", "<script>alert(1)</script>", "A" * 500, "'; DROP TABLE room;--"])
def test_unknown_and_bad_codes_give_a_notice_and_the_quiz_still_works(raw):
    at = helpers.open_linked("quiz", {"room": raw}, every_section=False)
    no_exception(at)
    assert any("room" in w.value.lower() for w in at.warning)
    assert any(str(r.key).startswith("quiz_page_answer_") for r in (*at.radio, *at.text_input))
    page = open_room_page({"room": raw})
    no_exception(page)
    assert page.warning and at.button(key="quiz_open_room") is not None
    outside_code_spans = re.sub(r"`[^`]*`", "", all_text(page))  # a code span shows its text literally
    assert "<script>" not in outside_code_spans and "DROP" not in outside_code_spans


def test_a_database_that_is_down_gives_notices_and_the_quiz_still_works(monkeypatch):
    monkeypatch.setenv(DATABASE_URL_VAR, "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = helpers.open_linked("quiz", {"room": "ABCD-EFGH"}, every_section=False)
    no_exception(at)
    assert any("cannot be reached" in w.value for w in at.warning)
    assert any(str(r.key).startswith("quiz_page_answer_") for r in (*at.radio, *at.text_input))
    page = open_room_page()
    page = page.button(key="room_open").click().run()
    no_exception(page)
    assert any("cannot be reached" in e.value for e in page.error)


def test_guessing_past_the_limit_gets_a_wait_notice(monkeypatch):
    from classroom.limits import GuessLimiter
    from ui.room import session as room_session

    limiter = GuessLimiter(per_session=5, per_address=5, per_process=1)
    limiter.failed("someone else", "somewhere else")
    monkeypatch.setattr(room_session, "LIMITER", limiter)
    at = helpers.open_linked("quiz", {"room": "ABCD-EFGH"}, every_section=False)
    no_exception(at)
    assert any("Too many room codes" in w.value for w in at.warning)


def test_the_quiz_page_opens_a_room_on_its_quiz_number(database):
    at = helpers.open_linked("quiz", {"quiz_seed": "4321"}, every_section=False)
    assert at.button(key="quiz_open_room").label == "Open a class room with this quiz"
    at = at.switch_page("pages/room.py").run()  # what the button does (AppTest does not follow st.switch_page)
    no_exception(at)
    assert at.number_input(key="room_quiz_seed").value == 4321
    at = at.button(key="room_open").click().run()
    assert database.room(at.session_state["room"]).quiz_seed == 4321


def test_an_answer_while_the_database_is_down_says_it_was_not_sent(database, monkeypatch):
    seed = a_quiz_with_a_choice_question_first()
    room, _ = database.open_room(seed)
    at = helpers.open_linked("quiz", {"room": room.code}, every_section=False)
    monkeypatch.setenv(DATABASE_URL_VAR, "postgresql+psycopg://nobody@127.0.0.1:1/none")
    radio = next(r for r in at.radio if str(r.key).startswith("quiz_page_answer_"))
    radio.set_value(question_for(None, seed, 0).choices[0])
    at = at.button(key="quiz_page_submit").click().run()
    no_exception(at)
    text = plain(at)
    assert "cannot be reached" in text and "not sent" in text
    assert at.success or at.error  # the answer itself was still graded
    assert database.option_counts(room.code) == []


HOSTILE = ["", "   ", "x" * 10_000, "<script>alert(1)</script>", "'; DROP TABLE room; --", "\u202eevil", "🙂" * 30]


def test_hostile_keys_and_quiz_numbers_at_their_bounds(database):
    room, key = database.open_room(1)
    at = open_room_page({"room": room.code})
    for text in HOSTILE:
        at.text_input(key="room_key_typed").set_value(text[:64])
        at = at.button(key="room_key_submit").click().run()
        no_exception(at)
        assert not at.metric and "not this room's lecturer key" in plain(at)
    for bound in ("min", "max"):
        page = open_room_page()
        box = page.number_input(key="room_quiz_seed")
        box.set_value(getattr(box, bound))
        page = page.button(key="room_open").click().run()
        no_exception(page)
        assert database.room(page.session_state["room"]).quiz_seed == getattr(box, bound)
