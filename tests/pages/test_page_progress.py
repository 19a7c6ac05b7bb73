"""My progress as an AppTest: the record's ideas with their status and next review, a code that moves
the record to another session, "Delete my record", and a database that is down."""

from __future__ import annotations

from datetime import timedelta

from streamlit.testing.v1 import AppTest

from classroom import clock
from classroom.learners import Event
from tests import apptest_helpers as helpers
from ui.frame.learner import ID_KEY

MISS = Event("prediction", "attention", "attention_identical_row", "attention-rows@ab", False, True, 0)


def open_progress(learner: str | None = None) -> AppTest:
    at = AppTest.from_file(helpers.APP, default_timeout=60)
    if learner is not None:
        at.session_state[ID_KEY] = learner
    at.switch_page("pages/progress.py")
    return at.run()


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest):
    (frame,) = [t.value for t in at.table if "status" in t.value.columns]
    return frame.reset_index()


def test_with_no_record_every_idea_is_not_tried(database):
    at = ok(open_progress())
    assert len(table(at)) >= 1 and set(table(at)["status"]) == {"not tried"}
    assert "Nothing yet" in helpers.all_text(at)


def test_a_missed_idea_is_missed_and_due_now_and_a_right_one_comes_back_tomorrow(database):
    learner = database.new_learner(clock.now())
    database.record(learner, MISS, clock.now())
    right = Event("quiz", "padding", "padding_pad_weight", "padding_pad_weight:3", True)
    database.record(learner, right, clock.now())
    rows = table(ok(open_progress(learner))).set_index("status")
    assert rows.loc["missed", "next review"] == "due now"
    assert rows.loc["practising", "next review"] == "tomorrow"
    at = open_progress(learner)
    assert any("Review the 1 due now" in p.label for p in at.get("page_link"))


def test_a_day_later_by_the_test_clock_the_missed_idea_is_still_due(database, monkeypatch):
    learner = database.new_learner(clock.now())
    database.record(learner, MISS, clock.now() - timedelta(minutes=1))
    monkeypatch.setenv(clock.SHIFT_VAR, "1")
    rows = table(ok(open_progress(learner))).set_index("idea")
    assert (rows["next review"] == "due now").sum() == 1


def test_a_code_moves_the_record_to_another_session_once(database):
    learner = database.new_learner(clock.now())
    database.record(learner, MISS, clock.now())
    at = ok(open_progress(learner))
    at = ok(at.button(key="progress_make_code").click().run())
    code = at.session_state["_progress_code"]
    other = ok(open_progress())
    other.text_input(key="progress_transfer_in").input(code[:4] + "-" + code[4:])
    other = ok(other.button(key="progress_take_code").click().run())
    assert other.session_state[ID_KEY] == learner and "now holds that record" in helpers.all_text(other)
    third = ok(open_progress())
    third.text_input(key="progress_transfer_in").input(code)
    third = ok(third.button(key="progress_take_code").click().run())
    assert "names no record" in helpers.all_text(third)


def test_delete_my_record_deletes_it(database):
    learner = database.new_learner(clock.now())
    database.record(learner, MISS, clock.now())
    at = ok(ok(open_progress(learner)).button(key="progress_delete").click().run())
    assert not database.learner_exists(learner) and database.event_count(learner) == 0
    assert "deleted, every row" in helpers.all_text(at)
    assert len(table(at)) >= 1 and set(table(at)["status"]) == {"not tried"}


def test_a_database_that_is_down_is_said_and_nothing_breaks(monkeypatch):
    from classroom.store import DATABASE_URL_VAR

    monkeypatch.setenv(DATABASE_URL_VAR, "postgresql+psycopg://nobody@127.0.0.1:1/none")
    at = ok(open_progress("0" * 32))
    assert any("not being saved" in w.value for w in at.warning)


def test_a_rerun_reads_the_record_once_and_another_tabs_answers_show_up_later(database, monkeypatch):
    from classroom.learners import LearnerRecords
    from ui.frame import learner as session_record

    reads = []
    real = LearnerRecords.history
    monkeypatch.setattr(LearnerRecords, "history", lambda self, lid: reads.append(lid) or real(self, lid))
    learner = database.new_learner(clock.now())
    database.record(learner, MISS, clock.now())
    at = ok(open_progress(learner))
    assert reads == [learner] and "missed" in set(table(at)["status"])  # the sidebar and the page: one read
    at = ok(at.run())
    assert reads == [learner]  # the rerun drew the record from the session's copy
    right = Event("quiz", "padding", "padding_pad_weight", "padding_pad_weight:3", True)
    database.record(learner, right, clock.now())  # another tab of the same browser
    monkeypatch.setattr(session_record, "HISTORY_FRESH_S", 0.0)  # the copy has aged
    at = ok(at.run())
    assert len(reads) > 1 and "practising" in set(table(at)["status"])
