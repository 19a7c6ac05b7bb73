"""Spaced review as a pure function of (history, now), on a clock the tests move by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from classroom.schedule import Attempt, due_now, next_gap, schedule

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)
IDEA = "attention_identical_row"


def at(days: float, right: bool | None, item: str | None = None, sure: bool | None = None, concept: str = IDEA):
    return Attempt(concept, right, T0 + days * DAY, item or f"item-{days}", sure, "attention", 0)


def state(history, now_days: float, concept: str = IDEA):
    return schedule(history, T0 + now_days * DAY)[concept]


@pytest.mark.parametrize(("bridged", "gap"), [(0, 1), (0.5, 1), (1, 3), (2, 3), (3, 7), (7, 21), (21, 21), (40, 21)])
def test_the_next_gap_is_the_first_of_1_3_7_21_days_longer_than_the_gap_bridged(bridged, gap):
    assert next_gap(bridged * DAY) == gap * DAY


def test_a_miss_is_due_at_once_and_a_right_answer_straight_after_brings_it_back_the_next_day():
    history = [at(0, False)]
    s = state(history, 0)
    assert s.status == "missed" and s.due == T0 and s.is_due(T0)
    history.append(at(0.01, True))
    s = state(history, 0.02)
    assert s.status == "practising" and s.due == T0 + 0.01 * DAY + DAY and not s.is_due(T0 + 0.5 * DAY)


def test_a_miss_answered_right_a_day_later_comes_back_in_3_days_then_7_then_21():
    history = [at(0, False)]
    assert state(history, 1).is_due(T0 + DAY)  # the next day it is still due
    history.append(at(1, True))
    assert state(history, 1).due == T0 + 4 * DAY and state(history, 1).status == "practising"
    history.append(at(4, True))  # bridged 3 days: two growing gaps (1, 3) of a day or more: mastered
    assert state(history, 4).status == "mastered" and state(history, 4).due == T0 + 25 * DAY


def test_right_answers_from_the_start_walk_1_3_7_and_master_at_two_growing_gaps():
    history = [at(0, True)]
    assert state(history, 0).due == T0 + DAY and state(history, 0).status == "practising"
    history.append(at(1, True))  # bridged 1 day: one spaced right answer
    assert state(history, 1).due == T0 + 4 * DAY and state(history, 1).status == "practising"
    history.append(at(4, True))  # bridged 3 > 1: mastered
    assert state(history, 4).status == "mastered"


def test_two_equal_gaps_are_not_growing_gaps():
    history = [at(0, True), at(1, True), at(4, False), at(4.01, True), at(5.01, True)]
    s = state(history, 5.02)  # after the miss: gaps 0 and 1; before it: forgotten
    assert s.status == "practising" and s.due == T0 + 8.01 * DAY


def test_a_right_answer_before_the_idea_is_due_or_on_an_item_already_seen_changes_nothing():
    history = [at(0, True, "a")]
    before = state(history, 0.5)
    assert state([*history, at(0.5, True, "b")], 0.5).due == before.due  # early
    assert state([*history, at(2, True, "a")], 2).due == before.due  # the same item again: no credit
    assert state([*history, at(2, True, "c")], 2).due == T0 + 5 * DAY  # due, new: bridged 2 days -> 3 more


def test_a_miss_at_any_time_starts_the_spacing_again():
    history = [at(0, True), at(1, True), at(4, True)]
    assert state(history, 4).status == "mastered"
    history.append(at(10, False))
    s = state(history, 10)
    assert s.status == "missed" and s.is_due(T0 + 10 * DAY)


def test_a_skipped_prediction_is_due_at_once_but_not_called_a_miss():
    s = state([at(0, None)], 0)
    assert s.status == "not tried" and s.is_due(T0)
    s = state([at(0, None), at(0.1, True)], 0.2)
    assert s.status == "practising" and not s.is_due(T0 + 0.2 * DAY)


def test_the_review_brings_confident_misses_first_then_misses_then_skips():
    history = [
        at(0, None, concept="skipped"),
        at(0, False, sure=False, concept="guessed"),
        at(0.1, False, sure=True, concept="sure"),
        at(0, True, concept="fine"),
    ]
    now = T0 + 0.2 * DAY
    assert [s.concept for s in due_now(schedule(history, now), now)] == ["sure", "guessed", "skipped"]


def test_attempts_after_now_are_not_yet_made_and_nothing_is_due_before_it_is():
    history = [at(0, False), at(2, True)]
    assert state(history, 1).status == "missed"
    assert due_now(schedule([at(0, True)], T0 + 0.5 * DAY), T0 + 0.5 * DAY) == []
