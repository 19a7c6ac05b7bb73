"""The round's controls for a real lecture, as AppTests: "Teach it again" lands on the lesson's step with the
round's sentence; a cancelled round reveals nothing and is not counted; the presenter view and the projected
screen; the timer; the phones during the discussion and after the room closes; the join display."""

from __future__ import annotations

from urllib.parse import parse_qsl

import apptest_helpers as helpers
import pytest
from apptest_helpers import no_exception, plain
from streamlit.testing.v1 import AppTest

from classroom.codes import new_student_id, shown_code
from classroom.questions import typed

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_limiter")]
QUESTION = typed("Which mask hides later tokens?", "bidirectional\ncausal\nnone\nboth", 2)  # B is right


def lecturer(code: str, key: str) -> AppTest:
    return no_exception(helpers.open_linked("room", {"room": code, "key": key}, every_section=False))


def phone(code: str) -> AppTest:
    return no_exception(helpers.open_linked("room", {"room": code}, every_section=False))


def votes(store, code, rnd, vote: int, options: list[int]) -> None:
    for option in options:
        assert store.vote(code, rnd.id, vote, new_student_id(), option) == "recorded"


def follow(at: AppTest, link) -> AppTest:
    """What a click on an st.page_link does: the page it names, with its query parameters (and nothing else)."""
    at.query_params.clear()
    at.query_params.update(dict(parse_qsl(link.proto.query_string)))
    page = link.proto.page.strip("/")  # the page's url path
    return no_exception(at.switch_page(f"pages/{page}.py").run())


# ---------------------------------------------------------------- 1. links land exactly


def test_teach_it_again_opens_the_lessons_step_on_the_rounds_sentence(database):
    sentence = "the bird sang in the old garden"
    room, key = database.open_room(1)
    teacher = lecturer(room.code, key)
    teacher.radio(key="room_source").set_value("lesson")
    teacher = no_exception(teacher.run())
    teacher.selectbox(key="room_prediction").set_value("padding-leak")
    teacher.text_input(key="room_sentence").input(sentence)
    teacher = no_exception(teacher.button(key="room_ask_lesson").click().run())
    teacher = no_exception(teacher.button(key="room_close_vote_1").click().run())
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
    teacher = no_exception(lecturer(room.code, key).button(key=f"room_cancel_{rnd.id}").click().run())
    assert database.current_round(room.code).cancelled
    said = plain(teacher)
    assert "cancelled" in said and QUESTION.prompt not in said and "✓" not in said and "%" not in said
    assert not helpers.figures(teacher) and teacher.button(key="room_ask_quiz")  # the next question's form
    student = no_exception(student.run())
    assert CANCELLED in plain(student) and QUESTION.prompt not in plain(student)
    assert not [b for b in student.button if str(b.key or "").startswith("room_vote_")]
    assert "The answer" not in plain(student)
    table = pd.read_csv(io.StringIO(rounds_csv(room.code)))
    assert table.empty
    # The next question takes its number.
    assert database.open_round(room.code, QUESTION).number == 1


# ---------------------------------------------------------------- 5. the presenter view and the projected screen


def presenter(code: str, key: str) -> AppTest:
    return no_exception(
        helpers.open_linked("room", {"room": code, "key": key, "view": "presenter"}, every_section=False)
    )


def test_the_presenter_view_has_the_distribution_and_the_screen_the_count_until_show_results(database):
    room, key = database.open_room(1)
    rnd = database.open_round(room.code, QUESTION)
    votes(database, room.code, rnd, 1, [1, 0, 0, 2])  # 25% right
    screen, mine = lecturer(room.code, key), presenter(room.code, key)
    assert "Votes in vote 1" in {m.label for m in screen.metric} and not helpers.figures(screen)
    assert "✓" not in plain(screen)
    assert [k for k in helpers.figures(mine) if k.startswith("room_live_")]  # the distribution as it comes in
    assert "✓" in plain(mine)  # the right option, marked on the lecturer's own device only

    screen = no_exception(screen.button(key="room_close_vote_1").click().run())
    said = "25% answered right"
    assert said not in plain(screen) and not helpers.figures(screen) and "Teach it again" not in plain(screen)
    assert "4" in {str(m.value) for m in screen.metric if m.label == "Votes in vote 1"}
    mine = presenter(room.code, key)
    assert said in plain(mine) and mine.session_state["_room_suggestion"] == "reteach"
    assert [k for k in helpers.figures(mine) if k.startswith("room_vote1_")]

    mine = no_exception(mine.button(key="room_show_results").click().run())  # the lecturer chooses
    assert database.current_round(room.code).shown
    screen = no_exception(screen.run())
    assert said in plain(screen) and [k for k in helpers.figures(screen) if k.startswith("room_vote1_")]
    student = phone(room.code)  # whatever the screen shows, a phone never gets the distribution
    assert not helpers.figures(student) and "%" not in plain(student)


def test_the_presenter_link_is_keyed_and_on_the_address_phones_reach(database, monkeypatch):
    from classroom.links import PUBLIC_URL_VAR

    monkeypatch.setenv(PUBLIC_URL_VAR, "https://lab.example.edu/encoder/")
    room, key = database.open_room(1)
    screen = lecturer(room.code, key)
    links = [c.value for c in screen.code]
    assert f"https://lab.example.edu/encoder/room?room={room.code}&key={key}&view=presenter" in links
    assert not any("localhost" in link for link in links)
    assert "key" not in screen.query_params  # the key left the address bar


def test_a_localhost_address_is_replaced_by_the_network_address_in_every_link(monkeypatch):
    from ui.frame import state

    monkeypatch.delenv("ENCODER_LAB_PUBLIC_URL", raising=False)
    monkeypatch.setattr(state, "lan_address", lambda: "192.168.1.20")
    assert state.reachable("http://localhost:8501/padding") == "http://192.168.1.20:8501/padding"
    assert state.reachable("http://127.0.0.1:8501/") == "http://192.168.1.20:8501/"
    assert state.reachable("https://lab.example.edu/x/padding") == "https://lab.example.edu/x/padding"
    monkeypatch.setattr(state, "lan_address", lambda: None)
    assert state.reachable("http://localhost:8501/padding") == "http://localhost:8501/padding"  # nothing better
    monkeypatch.setenv("ENCODER_LAB_PUBLIC_URL", "https://lab.example.edu/encoder")
    assert state.reachable("http://localhost:8501/padding") == "https://lab.example.edu/encoder/padding"
    assert state.reachable(None) is None and state.reachable("/padding?x=1") == "/padding?x=1"


def test_a_bad_view_in_the_link_opens_the_screen_with_a_notice(database):
    room, key = database.open_room(1)
    at = no_exception(
        helpers.open_linked("room", {"room": room.code, "key": key, "view": "<b>x</b>"}, every_section=False)
    )
    assert at.warning and "Room code:" in plain(at)
    student = no_exception(helpers.open_linked("room", {"room": room.code, "view": "presenter"}, every_section=False))
    assert not [m for m in student.metric if m.label.startswith("Votes")]  # no key: a phone, whatever the view


# ---------------------------------------------------------------- 6. the round's controls


def test_the_timer_is_the_lecturers_choice_and_the_store_closes_the_vote(database):
    import time

    room, key = database.open_room(1)
    screen = lecturer(room.code, key)
    screen.selectbox(key="room_timer").set_value(30)
    screen.radio(key="room_source").set_value("typed")
    screen = no_exception(screen.run())
    screen.text_area(key="room_typed_prompt").input(QUESTION.prompt)
    screen.text_area(key="room_typed_options").input("\n".join(QUESTION.options))
    screen = no_exception(screen.button(key="room_ask_typed").click().run())
    rnd = database.current_round(room.code)
    assert rnd.closes_at is not None and "Closes in" in {m.label for m in screen.metric}
    student = phone(room.code)
    assert "closing in" not in plain(student)  # 30 s left: no warning yet

    short = database.open_round(room.code, QUESTION, timer=3)
    student = no_exception(student.run())
    assert "Vote 1 is closing in" in plain(student)
    time.sleep(3.2)
    student = no_exception(student.run())  # the phone asks first after the deadline: the store closes the vote
    assert database.get_round(room.code, short.id).phase == "between"
    assert "Talk it over" in plain(student)
    screen = no_exception(no_exception(screen.run()).button(key="room_open_vote_2").click().run())
    again = database.get_round(room.code, short.id)  # vote 2 runs on the round's own timer, whichever view opens it
    assert again.phase == "vote2" and again.closes_at is not None


def test_during_the_discussion_phones_show_the_options_and_their_own_vote_1(database):
    room, key = database.open_room(1)
    rnd = database.open_round(room.code, QUESTION)
    student = phone(room.code)
    student = no_exception([b for b in student.button if str(b.key or "").startswith("room_vote_")][3].click().run())
    database.advance(room.code, rnd.id, "vote1", "between")
    student = no_exception(student.run())
    said = plain(student)
    assert QUESTION.prompt in said and all(o in said for o in QUESTION.options)
    assert "← your vote 1" in said and "Your vote 1: D" in said and "✓" not in said and "The answer" not in said
    database.advance(room.code, rnd.id, "between", "vote2")
    student = no_exception(student.run())
    assert "Your vote 1 was D" in plain(student)


def test_a_closed_room_tells_its_phones_at_once(database):
    from ui.room.phone import ROOM_CLOSED

    room, key = database.open_room(1)
    database.open_round(room.code, QUESTION)
    student = phone(room.code)
    assert [b for b in student.button if str(b.key or "").startswith("room_vote_")]
    no_exception(lecturer(room.code, key).button(key="room_close").click().run())
    student = no_exception(student.run())
    assert ROOM_CLOSED in plain(student)
    assert not [b for b in student.button if str(b.key or "").startswith("room_vote_")]


def test_the_sessions_rounds_are_listed_vote_1_then_vote_2(database):
    room, key = database.open_room(1)
    first = database.open_round(room.code, QUESTION)
    votes(database, room.code, first, 1, [1, 0])
    database.advance(room.code, first.id, "vote1", "between")
    database.advance(room.code, first.id, "between", "vote2")
    votes(database, room.code, first, 2, [1, 1])
    database.advance(room.code, first.id, "vote2", "reveal")
    second = database.open_round(room.code, QUESTION)
    votes(database, room.code, second, 1, [1])
    screen = lecturer(room.code, key)
    (table,) = [t.value for t in screen.dataframe]
    assert list(table["question"]) == [1]  # the round under way is not on the projected screen
    assert (table["vote 1 right"][0], table["vote 2 right"][0]) == ("50%", "100%")
    mine = presenter(room.code, key)
    (table,) = [t.value for t in mine.dataframe]
    assert list(table["question"]) == [1, 2] and table["vote 1 right"][1] == "100%"


# ---------------------------------------------------------------- 7. the join display


def test_the_qr_code_and_the_room_code_stay_large_during_a_round(database):
    from ui.room.join import CODE_PX, JOIN_CSS, QR_SHARE_VH

    assert QR_SHARE_VH > 100 / 3 and CODE_PX >= 48
    room, key = database.open_room(1)
    before = lecturer(room.code, key)
    database.open_round(room.code, QUESTION)
    during = lecturer(room.code, key)
    for at in (before, during):
        assert len(at.get("image")) == 1  # the QR code, drawn, not folded away
        assert any(JOIN_CSS.strip() in str(h.proto.body) for h in at.get("html"))
        assert any(m.value.replace("\\", "") == shown_code(room.code) for m in at.markdown)
