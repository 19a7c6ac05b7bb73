"""A learner's record in the store, on SQLite and on PostgreSQL: signed ids, answers kept with their
times, the review's history, transfer codes, deletion, retention, floods, and many learners at once."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from classroom.learners import (
    PER_MINUTE,
    RETENTION_DAYS,
    TRANSFER_MINUTES,
    Event,
    FloodLimiter,
    sign,
    verified,
)
from classroom.schedule import schedule
from classroom.store import RoomStore, StoreUnavailable

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
MISS = Event("prediction", "attention", "attention_identical_row", "attention-rows@ab12", False, True, 0)


def fresh() -> FloodLimiter:
    return FloodLimiter()


def test_a_cookie_carries_a_signed_id_and_anything_else_is_treated_as_absent():
    secret, other = "k" * 64, "j" * 64
    learner = "0123456789abcdef" * 2
    cookie = sign(secret, learner)
    assert verified(secret, cookie) == learner
    tampered = [
        sign(other, learner),  # signed with another key
        cookie[:-1] + ("0" if cookie[-1] != "0" else "1"),  # one digit of the signature changed
        ("f" + cookie[1:]),  # another id under this id's signature
        learner,  # no signature
        "",
        None,
        "x" * 65,
        "<script>" + cookie[8:],
    ]
    assert all(verified(secret, c) is None for c in tampered)


def test_a_record_keeps_each_answer_with_its_time_and_the_scheduler_reads_it(store):
    learner = store.new_learner(T0)
    assert store.learner_exists(learner) and store.history(learner) == []
    assert store.record(learner, MISS, T0, fresh()) == "recorded"
    right = Event("review", "attention", "attention_identical_row", "attention_identical_row:7", True, True)
    assert store.record(learner, right, T0 + timedelta(days=1), fresh()) == "recorded"
    (miss, again) = store.history(learner)
    assert (miss.right, miss.sure, miss.at, miss.step) == (False, True, T0, 0) and again.at == T0 + timedelta(days=1)
    state = schedule(store.history(learner), T0 + timedelta(days=1))["attention_identical_row"]
    assert state.status == "practising" and state.due == T0 + timedelta(days=4)


def test_another_learners_record_is_never_read_and_an_unknown_id_records_nothing(store):
    alice, bob = store.new_learner(T0), store.new_learner(T0)
    store.record(alice, MISS, T0, fresh())
    assert store.history(bob) == [] and len(store.history(alice)) == 1
    forged = "f" * 32
    assert not store.learner_exists(forged) and not store.learner_exists("not an id")
    assert store.record(forged, MISS, T0, fresh()) == "unknown" and store.history(forged) == []


def test_only_short_names_are_stored_never_free_text(store):
    learner = store.new_learner(T0)
    bad = Event("prediction", "attention", "a concept with spaces <b>", "x", False)
    assert store.record(learner, bad, T0, fresh()) == "invalid"
    assert store.record(learner, Event("gossip", "attention", "c", "x", True), T0, fresh()) == "invalid"
    assert store.history(learner) == []


def test_a_flood_from_one_id_is_refused_past_the_limit(store):
    learner, limiter = store.new_learner(T0), fresh()
    said = [store.record(learner, MISS, T0, limiter) for _ in range(PER_MINUTE + 5)]
    assert said.count("recorded") == PER_MINUTE and said[-1] == "limited"
    assert store.event_count(learner) == PER_MINUTE


def test_a_transfer_code_moves_the_record_once_and_expires(store):
    learner = store.new_learner(T0)
    code = store.transfer_code(learner, T0)
    assert len(code) == 8
    assert store.redeem(code.lower()[:4] + "-" + code[4:], T0 + timedelta(minutes=1)) == learner  # as typed
    assert store.redeem(code, T0 + timedelta(minutes=2)) is None  # used up
    late = store.transfer_code(learner, T0)
    assert store.redeem(late, T0 + timedelta(minutes=TRANSFER_MINUTES + 1)) is None
    assert store.redeem("nonsense", T0) is None and store.redeem(None, T0) is None


def test_delete_my_record_deletes_every_row(store):
    learner = store.new_learner(T0)
    store.record(learner, MISS, T0, fresh())
    store.transfer_code(learner, T0)
    store.delete_learner(learner)
    assert not store.learner_exists(learner) and store.event_count(learner) == 0
    assert store.record(learner, MISS, T0, fresh()) == "unknown"


def test_a_record_untouched_for_the_retention_period_is_deleted(store):
    old, recent = store.new_learner(T0), store.new_learner(T0)
    store.record(old, MISS, T0, fresh())
    store.record(recent, MISS, T0 + timedelta(days=RETENTION_DAYS - 10), fresh())  # touched since
    assert store.purge_untouched(T0 + timedelta(days=RETENTION_DAYS + 1)) == 1
    assert not store.learner_exists(old) and store.event_count(old) == 0 and store.learner_exists(recent)


def test_a_new_record_sweeps_old_ones_at_most_once_an_hour(store):
    from classroom.learners import SWEEP_EVERY

    store = RoomStore(store.url)  # a process of its own: none of the other tests' sweeps
    old = store.new_learner(T0)
    later = T0 + timedelta(days=RETENTION_DAYS + 1)
    store.new_learner(later)  # this store's first new record: it sweeps
    assert not store.learner_exists(old)
    stale = store.new_learner(T0)  # made with an old clock: untouched for the retention period as of `later`
    store.new_learner(later + SWEEP_EVERY / 2)  # within the hour of the last sweep: no sweep
    assert store.learner_exists(stale)
    store.new_learner(later + SWEEP_EVERY)
    assert not store.learner_exists(stale)


def test_every_process_signs_with_the_same_key(store):
    again = RoomStore(store.url)
    assert store.cookie_secret() == again.cookie_secret() and len(store.cookie_secret()) == 64


def test_fifty_learners_answering_at_once_lose_nothing(store):
    ids = [store.new_learner(T0) for _ in range(50)]
    errors = []

    def answer(learner):
        try:
            for i in range(4):
                assert store.record(learner, MISS, T0 + timedelta(seconds=i), fresh()) == "recorded"
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=answer, args=(i,)) for i in ids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and all(store.event_count(i) == 4 for i in ids)


def test_a_database_that_is_down_says_so():
    down = RoomStore("postgresql+psycopg://nobody@127.0.0.1:1/none")
    with pytest.raises(StoreUnavailable):
        down.new_learner(T0)
