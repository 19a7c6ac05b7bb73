"""The class room's store on SQLite and on a real PostgreSQL server: rooms, keys, first answers only,
closed and expired rooms, 50 students answering at once, and a database that is down."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from classroom.codes import new_student_id
from classroom.store import ROOM_LIFETIME, RoomStore, StoreUnavailable, _now, get_store


def test_a_room_keeps_its_quiz_and_knows_its_lecturer(store):
    room, key = store.open_room(4242)
    again = store.room(room.code)
    assert again.quiz_seed == 4242 and again.state(_now()) == "open"
    assert store.is_lecturer(room.code, key)
    assert not store.is_lecturer(room.code, key[:-1] + ("A" if key[-1] != "A" else "B"))
    assert not store.is_lecturer(room.code, None) and not store.is_lecturer(room.code, "")
    assert store.room("ZZZZZZZZ") is None
    other, other_key = store.open_room(1)
    assert other.code != room.code and not store.is_lecturer(room.code, other_key)


def test_only_the_first_answer_per_student_and_question_counts(store):
    room, _ = store.open_room(7)
    alice, bob = new_student_id(), new_student_id()
    assert store.join(room.code, alice) == "open"
    assert store.answer(room.code, alice, 0, "q:0", "B", True) == "recorded"
    assert store.answer(room.code, alice, 0, "q:0", "C", False) == "already"
    assert store.answer(room.code, alice, 1, "q:1", "C", False) == "recorded"
    assert store.answer(room.code, bob, 0, "q:0", "C", False) == "recorded"
    assert store.joined(room.code) == 2  # bob joined by answering
    counts = {(c.question_index, c.option): (c.count, c.correct) for c in store.option_counts(room.code)}
    assert counts == {(0, "B"): (1, True), (0, "C"): (1, False), (1, "C"): (1, False)}
    rows = store.answer_rows(room.code)
    assert [r.student for r in rows] == [1, 1, 2] and all(r.answered_at.tzinfo for r in rows)


def test_closed_expired_and_unknown_rooms_take_no_answers(store):
    room, _ = store.open_room(3)
    sid = new_student_id()
    later = _now() + ROOM_LIFETIME + timedelta(seconds=1)
    assert store.answer(room.code, sid, 0, "q:0", "A", True, now=later) == "expired"
    assert store.join(room.code, sid, now=later) == "expired"
    store.close_room(room.code)
    assert store.room(room.code).state(_now()) == "closed"
    assert store.answer(room.code, sid, 0, "q:0", "A", True) == "closed"
    assert store.answer("ABCDEFGH", sid, 0, "q:0", "A", True) == "unknown"
    assert store.option_counts(room.code) == [] and store.joined(room.code) == 0


def test_opening_a_room_deletes_rooms_past_their_day(store):
    old, _ = store.open_room(1, now=_now() - ROOM_LIFETIME - timedelta(minutes=1))
    store.answer(old.code, new_student_id(), 0, "q:0", "A", True, now=_now() - ROOM_LIFETIME)
    store.open_room(2)
    assert store.room(old.code) is None and store.option_counts(old.code) == []


def test_user_text_is_stored_as_given_through_bound_parameters(store):
    room, _ = store.open_room(9)
    nasty = "x'); DROP TABLE room; --<script>"
    assert store.answer(room.code, new_student_id(), 0, "q:0", nasty, False) == "recorded"
    assert store.option_counts(room.code)[0].option == nasty and store.room(room.code) is not None


def test_fifty_students_answering_at_once_are_each_recorded_once(store):
    room, _ = store.open_room(11)
    students = [new_student_id() for _ in range(50)]
    barrier = threading.Barrier(50)
    results: dict[str, list[str]] = {}
    errors = []

    def student(sid: str, i: int) -> None:
        try:
            barrier.wait()
            # each submits twice at once-ish: a double click must not count twice
            results[sid] = [store.answer(room.code, sid, 0, "q:0", "AB"[i % 2], i % 2 == 0) for _ in range(2)]
        except Exception as err:  # noqa: BLE001  (reported below, with the thread's error)
            errors.append(repr(err))

    threads = [threading.Thread(target=student, args=(sid, i)) for i, sid in enumerate(students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert all(r == ["recorded", "already"] for r in results.values()) and len(results) == 50
    counts = {c.option: c.count for c in store.option_counts(room.code)}
    assert counts == {"A": 25, "B": 25}
    assert store.joined(room.code) == 50
    assert sorted({r.student for r in store.answer_rows(room.code)}) == list(range(1, 51))


def test_a_database_that_is_down_says_so(tmp_path):
    down = RoomStore("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(StoreUnavailable):
        down.open_room(1)
    with pytest.raises(StoreUnavailable):
        down.room("ABCDEFGH")
    with pytest.raises(StoreUnavailable):
        get_store("notadialect://x")
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreUnavailable):  # its folder is a file: SQLite cannot open it
        RoomStore(f"sqlite:///{tmp_path / 'file' / 'rooms.sqlite3'}")
