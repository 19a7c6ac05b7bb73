"""The round's controls for a real lecture, as AppTests: "Teach it again" lands on the lesson's step with the
round's sentence; a cancelled round reveals nothing and is not counted; the presenter view and the projected
screen; the timer; the phones during the discussion and after the room closes; the join display."""

from __future__ import annotations

from urllib.parse import parse_qsl

import apptest_helpers as helpers
import pytest
from apptest_helpers import all_text
from streamlit.testing.v1 import AppTest

from classroom.codes import new_student_id
from classroom.questions import typed

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_limiter")]
QUESTION = typed("Which mask hides later tokens?", "bidirectional\ncausal\nnone\nboth", 2)  # B is right


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(at: AppTest) -> str:
    return all_text(at).replace("\\", "")


def lecturer(code: str, key: str) -> AppTest:
    return ok(helpers.open_linked("room", {"room": code, "key": key}, every_section=False))


def phone(code: str) -> AppTest:
    return ok(helpers.open_linked("room", {"room": code}, every_section=False))


def votes(store, code, rnd, vote: int, options: list[int]) -> None:
    for option in options:
        assert store.vote(code, rnd.id, vote, new_student_id(), option) == "recorded"


def follow(at: AppTest, link) -> AppTest:
    """What a click on an st.page_link does: the page it names, with its query parameters (and nothing else)."""
    at.query_params.clear()
    at.query_params.update(dict(parse_qsl(link.proto.query_string)))
    page = link.proto.page.strip("/")  # the page's url path
    return ok(at.switch_page(f"pages/{page}.py").run())


# ---------------------------------------------------------------- 1. links land exactly


def test_teach_it_again_opens_the_lessons_step_on_the_rounds_sentence(database):
    sentence = "the bird sang in the old garden"
    room, key = database.open_room(1)
    teacher = lecturer(room.code, key)
    teacher.radio(key="room_source").set_value("lesson")
    teacher = ok(teacher.run())
    teacher.selectbox(key="room_prediction").set_value("padding-leak")
    teacher.text_input(key="room_sentence").input(sentence)
    teacher = ok(teacher.button(key="room_ask_lesson").click().run())
    teacher = ok(teacher.button(key="room_close_vote_1").click().run())
    (link,) = [p for p in teacher.get("page_link") if p.label.endswith(", step 3")]
    assert link.label.startswith("Open the lesson: ")  # the projected screen: no "Teach it again" before a reveal
    # A tab row left by an earlier visit (another lesson's tab, the padding lesson's first) must not win.
    teacher.session_state["_section_tab"] = "The batch"
    teacher.session_state["_section_tab_shown"] = "Bidirectional vs causal"
    lesson = follow(teacher, link)
    assert lesson.session_state["_section_tab"] == "The pad-leak gap"
    assert lesson.session_state["step"] == 2
    assert lesson.session_state["padding.single"] == sentence
    assert lesson.query_params.get("single") == sentence and lesson.query_params.get("step") == "2"


# ---------------------------------------------------------------- 2. cancelling a round


@pytest.mark.parametrize("phase", ["vote1", "between", "vote2"])
def test_a_cancelled_round_shows_nothing_anywhere_and_is_not_exported(database, phase):
    import io

    import pandas as pd

    from ui.room.phone import CANCELLED
    from ui.room.rounds import rounds_csv

    room, key = database.open_room(1)
    rnd = database.open_round(room.code, QUESTION)
    votes(database, room.code, rnd, 1, [1, 1, 0])
    if phase != "vote1":
        database.advance(room.code, rnd.id, "vote1", "between")
    if phase == "vote2":
        database.advance(room.code, rnd.id, "between", "vote2")
        votes(database, room.code, rnd, 2, [1])
    student = phone(room.code)
    teacher = ok(lecturer(room.code, key).button(key=f"room_cancel_{rnd.id}").click().run())
    assert database.current_round(room.code).cancelled
    said = plain(teacher)
    assert "cancelled" in said and QUESTION.prompt not in said and "✓" not in said and "%" not in said
    assert not helpers.figures(teacher) and teacher.button(key="room_ask_quiz")  # the next question's form
    student = ok(student.run())
    assert CANCELLED in plain(student) and QUESTION.prompt not in plain(student)
    assert not [b for b in student.button if str(b.key or "").startswith("room_vote_")]
    assert "The answer" not in plain(student)
    table = pd.read_csv(io.StringIO(rounds_csv(room.code)))
    assert table.empty
    # The next question takes its number.
    assert database.open_round(room.code, QUESTION).number == 1
