"""Peer-instruction rounds in the store, on SQLite and on a real PostgreSQL server: the phases, the last
answer counting once, votes refused after a close or for a forged round, and 60 phones voting at once."""

from __future__ import annotations

import random
import threading
from datetime import timedelta

import pytest

from classroom.codes import new_student_id
from classroom.questions import typed
from classroom.schema import votes
from classroom.store import ROOM_LIFETIME, RoomStore, _now

QUESTION = typed("Which mask hides later tokens?", "causal\nbidirectional\nnone", 1)


def test_a_round_goes_vote1_between_vote2_reveal_once(store):
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION)
    assert (rnd.number, rnd.phase, rnd.open_vote) == (1, "vote1", 1)
    assert store.current_round(room.code).question == QUESTION
    assert store.advance(room.code, rnd.id, "vote1", "between")
    assert not store.advance(room.code, rnd.id, "vote1", "between")  # a double click moves it once
    assert store.advance(room.code, rnd.id, "between", "vote2")
    assert store.advance(room.code, rnd.id, "vote2", "reveal")
    assert store.current_round(room.code).phase == "reveal"
    with pytest.raises(ValueError):
        store.advance(room.code, rnd.id, "reveal", "vote1")
    second = store.open_round(room.code, QUESTION, transfer_of=rnd.id)
    assert second.number == 2 and store.current_round(room.code).transfer_of == rnd.id
    assert [r.number for r in store.all_rounds(room.code)] == [1, 2]


def test_the_last_answer_within_a_vote_counts_once(store):
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION)
    alice, bob = new_student_id(), new_student_id()
    assert store.vote(room.code, rnd.id, 1, alice, 0) == "recorded"
    assert store.vote(room.code, rnd.id, 1, alice, 2) == "changed"
    assert store.vote(room.code, rnd.id, 1, bob, 1) == "recorded"
    assert store.tallies(rnd)[1].counts == (0, 1, 1)
    assert store.vote_count(rnd.id, 1) == 2 and store.my_vote(rnd.id, 1, alice) == 2
    assert store.joined(room.code) == 2


def test_votes_out_of_turn_are_refused_with_a_reason(store):
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION)
    sid = new_student_id()
    assert store.vote(room.code, rnd.id, 2, sid, 0) == "not-open"  # vote 2 has not opened
    assert store.vote(room.code, rnd.id + 999, 1, sid, 0) == "unknown"  # a forged round id
    assert store.vote(room.code, "1; DROP TABLE room", 1, sid, 0) == "unknown"
    assert store.vote(room.code, rnd.id, 3, sid, 0) == "unknown"
    assert store.vote(room.code, rnd.id, 1, sid, 3) == "bad-option"
    other, _ = store.open_room(2)
    assert store.vote(other.code, rnd.id, 1, sid, 0) == "unknown"  # a round of another room
    store.advance(room.code, rnd.id, "vote1", "between")
    assert store.vote(room.code, rnd.id, 1, sid, 0) == "closed"
    store.advance(room.code, rnd.id, "between", "vote2")
    assert store.vote(room.code, rnd.id, 2, sid, 1) == "recorded"
    store.close_room(room.code)
    assert store.vote(room.code, rnd.id, 2, sid, 0) == "room-closed"
    assert store.tallies(rnd)[2].counts == (0, 1, 0) and 1 not in store.tallies(rnd)


def test_a_new_round_closes_the_vote_still_open(store):
    room, _ = store.open_room(1)
    first = store.open_round(room.code, QUESTION)
    store.open_round(room.code, QUESTION)
    assert store.get_round(room.code, first.id).phase == "between"
    assert store.vote(room.code, first.id, 1, new_student_id(), 0) == "closed"


def test_sixty_phones_voting_at_once_are_counted_exactly(store):
    """Each phone taps twice or three times (changing its mind); the close lands while they tap."""
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION)
    phones = [new_student_id() for _ in range(60)]
    final = {sid: i % 3 for i, sid in enumerate(phones)}
    barrier = threading.Barrier(len(phones))
    answers: dict[str, list[str]] = {}
    errors: list[str] = []

    def phone(sid: str) -> None:
        r = random.Random(sid)
        taps = [r.randrange(3) for _ in range(r.randint(1, 2))] + [final[sid]]
        try:
            barrier.wait()
            answers[sid] = [store.vote(room.code, rnd.id, 1, sid, option) for option in taps]
        except Exception as err:  # noqa: BLE001  (reported below)
            errors.append(repr(err))

    threads = [threading.Thread(target=phone, args=(sid,)) for sid in phones]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert all(a[0] == "recorded" and set(a[1:]) <= {"changed"} for a in answers.values())
    assert store.tallies(rnd)[1].counts == (20, 20, 20)
    assert store.vote_count(rnd.id, 1) == 60 and store.joined(room.code) == 60

    # vote 2, with the close racing the taps: every tap is either counted or refused as closed
    store.advance(room.code, rnd.id, "vote1", "between")
    store.advance(room.code, rnd.id, "between", "vote2")
    said: dict[str, str] = {}
    go = threading.Barrier(len(phones) + 1)

    def late_phone(sid: str) -> None:
        go.wait()
        said[sid] = store.vote(room.code, rnd.id, 2, sid, 1)

    threads = [threading.Thread(target=late_phone, args=(sid,)) for sid in phones]
    for t in threads:
        t.start()
    go.wait()
    assert store.advance(room.code, rnd.id, "vote2", "reveal")
    for t in threads:
        t.join()
    recorded = sum(s == "recorded" for s in said.values())
    assert set(said.values()) <= {"recorded", "closed"}
    assert store.vote_count(rnd.id, 2) == recorded
    assert store.tallies(rnd).get(2, None) is None or store.tallies(rnd)[2].counts == (0, recorded, 0)


def test_a_restarted_process_finds_every_vote(store):
    """A vote is written before the phone hears "recorded": a new process (a new store, a new pool) reads it."""
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION)
    for option in (0, 1, 1):
        assert store.vote(room.code, rnd.id, 1, new_student_id(), option) == "recorded"
    store.engine.dispose()  # the old process's connections are gone
    restarted = RoomStore(store.url)
    again = restarted.current_round(room.code)
    assert again == rnd and restarted.tallies(again)[1].counts == (1, 2, 0)


def test_a_room_past_its_day_goes_with_its_rounds_and_votes(store):
    old, _ = store.open_room(1, now=_now() - ROOM_LIFETIME - timedelta(minutes=1))
    rnd = store.open_round(old.code, QUESTION)
    with store.engine.begin() as conn:  # a vote from its day (votes are refused once the room has expired)
        conn.execute(
            votes.insert().values(
                round_id=rnd.id, vote=1, student_id=new_student_id(), option=0, voted_at=_now() - ROOM_LIFETIME
            )
        )
    store.open_room(2)
    assert store.get_round(old.code, rnd.id) is None and store.vote_count(rnd.id, 1) == 0


def test_a_cancelled_round_reveals_nothing_counts_for_nothing_and_gives_its_number_back(store):
    from classroom.peer import export_rows

    room, _ = store.open_room(1)
    first = store.open_round(room.code, QUESTION)
    store.advance(room.code, first.id, "vote1", "between")
    store.advance(room.code, first.id, "between", "reveal")
    rnd = store.open_round(room.code, QUESTION)
    sid = new_student_id()
    assert store.vote(room.code, rnd.id, 1, sid, 1) == "recorded"
    assert store.cancel_round(room.code, rnd.id)
    assert not store.cancel_round(room.code, rnd.id)  # a second click, another screen: once
    current = store.current_round(room.code)
    assert current.id == rnd.id and current.cancelled and current.open_vote is None
    assert store.tallies(current) == {} and store.vote_count(rnd.id, 1) == 0  # its votes are gone
    assert store.vote(room.code, rnd.id, 1, sid, 0) == "cancelled"
    assert not store.show_results(room.code, rnd.id)
    assert [r.id for r in store.all_rounds(room.code)] == [first.id]
    rows = export_rows(store.all_rounds(room.code), {r.id: store.tallies(r) for r in store.all_rounds(room.code)})
    assert {row["round"] for row in rows} <= {1}
    assert store.open_round(room.code, QUESTION).number == 2  # the cancelled one's number
    assert not store.cancel_round(room.code, first.id)  # a revealed round stays revealed
    assert not store.cancel_round(room.code, rnd.id + 999)
    other, _ = store.open_room(2)
    assert not store.cancel_round(other.code, store.current_round(room.code).id)  # not another room's


def test_a_timer_closes_the_vote_whoever_asks_first_after_the_deadline(store):
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION, timer=30)
    assert rnd.closes_at is not None and 29 <= rnd.seconds_left(_now()) <= 30
    sid = new_student_id()
    assert store.vote(room.code, rnd.id, 1, sid, 0) == "recorded"
    later = _now() + timedelta(seconds=31)
    # A tap after the deadline is refused even before anyone closes the vote.
    with_deadline_past = store.get_round(room.code, rnd.id)
    assert with_deadline_past.seconds_left(later) == 0
    assert store.close_due(room.code, _now()) == 0  # not yet
    assert store.close_due(room.code, later) == 1
    assert store.close_due(room.code, later) == 0  # two processes: the second finds it closed
    assert store.current_round(room.code).phase == "between"
    assert store.advance(room.code, rnd.id, "between", "vote2")  # the timer the round was asked with
    two = store.current_round(room.code)
    assert two.open_vote == 2 and two.timer_s == 30 and 29 <= two.seconds_left(_now()) <= 30
    assert store.current_round(room.code, now=_now() + timedelta(seconds=31)).phase == "reveal"
    other = store.open_round(room.code, QUESTION)  # no timer: the lecturer closes, unless vote 2 is given one
    store.advance(room.code, other.id, "vote1", "between")
    assert store.advance(room.code, other.id, "between", "vote2", timer=60)
    two = store.current_round(room.code)
    assert two.open_vote == 2 and 59 <= two.seconds_left(_now()) <= 60
    assert store.current_round(room.code, now=_now() + timedelta(seconds=61)).phase == "reveal"
    assert store.vote(room.code, rnd.id, 2, sid, 0) == "closed"
    assert store.current_round(room.code).closes_at is None and store.get_round(room.code, rnd.id).closes_at is None


def test_a_tap_past_the_deadline_is_closed_before_the_vote_is(store, monkeypatch):
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION, timer=1)
    from classroom import rounds as rounds_module

    real = rounds_module.datetime

    class Later(real):
        @classmethod
        def now(cls, tz=None):
            return real.now(tz) + timedelta(seconds=5)

    monkeypatch.setattr(rounds_module, "datetime", Later)
    assert store.vote(room.code, rnd.id, 1, new_student_id(), 0) == "closed"
    assert store.vote_count(rnd.id, 1) == 0


@pytest.mark.parametrize("bad", [0, -5, "abc", None, float("nan"), 10**9, "30; DROP TABLE room"])
def test_a_bad_timer_is_no_timer(store, bad):
    room, _ = store.open_room(1)
    assert store.open_round(room.code, QUESTION, timer=bad).closes_at is None


def test_an_older_database_gains_the_new_columns(tmp_path):
    from old_databases import ROOM, ROUND, first_release_database

    url = first_release_database(tmp_path, ROOM, ROUND)
    store = RoomStore(url)
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION, timer=30)
    again = store.current_round(room.code)
    assert again.closes_at == rnd.closes_at and again.timer_s == 30 and not again.shown


def test_an_older_postgresql_table_gains_the_new_columns(store):
    """The same on the store's own database: drop the new columns, and a fresh store puts them back."""
    from sqlalchemy import text

    if store.engine.dialect.name != "postgresql":
        pytest.skip("the SQLite case is the test above")
    with store.engine.begin() as conn:
        for name in ("timer_s", "closes_at", "shown"):
            conn.execute(text(f"ALTER TABLE room_round DROP COLUMN {name}"))
    again = RoomStore(store.url)
    room, _ = again.open_room(1)
    assert again.open_round(room.code, QUESTION, timer=30).timer_s == 30
