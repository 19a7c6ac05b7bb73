"""Spaced review: when each idea a learner met comes back, as a pure function of (history, now).

Practice spread over days is remembered far better than the same practice in one sitting (Cepeda et
al. 2006), and a question answered from memory teaches more than a reread (Roediger & Karpicke 2006).
The rules, per idea (a quiz generator's name, which every lesson prediction points at):

- a miss makes the idea due at once, with its spacing started again; so a right answer straight
  after the miss brings it back the next day;
- a skipped prediction makes an idea never tried due at once (the learner chose not to answer);
- a right answer given when the idea is due, on an item (a question and its sentence) the learner has
  not seen before, moves it out: the next gap is the first of 1, 3, 7 and 21 days longer than the
  gap the learner just bridged (the time since the answer that set the schedule). A right answer
  before the idea is due, or on an item already seen, changes nothing;
- right answers at two growing gaps of a day or more mark the idea mastered: it comes back once more
  after 21 days, and a miss then makes it due again.

No clock is read here: `now` is passed in, so the tests move time by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

GAPS_DAYS = (1, 3, 7, 21)
SPACED_DAYS = 1  # a gap this long or longer is one that counts towards mastery
STATUSES = ("not tried", "missed", "practising", "mastered")


@dataclass(frozen=True)
class Attempt:
    """One answer on one idea: a prediction, a quiz answer or a review answer."""

    concept: str
    right: bool | None  # None: skipped, or not judged (a word of the learner's own)
    at: datetime
    item: str = ""  # what was asked: a question's id with its sentence; a repeat earns no spacing
    sure: bool | None = None  # the learner said "sure" (True) or "a guess" (False)
    lesson: str = ""
    step: int | None = None  # the lesson step that teaches it


@dataclass(frozen=True)
class IdeaState:
    concept: str
    status: str  # one of STATUSES
    due: datetime | None  # None: nothing to review (not tried, or only skips that were answered since)
    lesson: str = ""
    step: int | None = None
    confident_miss: bool = False  # the last miss was made "sure": it comes first in the review
    seen: frozenset[str] = field(default_factory=frozenset)  # items already asked: the review asks a new one

    def is_due(self, now: datetime) -> bool:
        return self.due is not None and self.due <= now


def next_gap(bridged: timedelta) -> timedelta:
    """The first of GAPS_DAYS longer than the gap just bridged (the last one once past it)."""
    days = bridged / timedelta(days=1)
    return timedelta(days=next((g for g in GAPS_DAYS if g > days + 1e-9), GAPS_DAYS[-1]))


def idea_state(attempts: list[Attempt]) -> IdeaState:
    """The schedule of one idea after its attempts (in time order)."""
    first = attempts[0]
    status, due, anchor = "not tried", None, None
    spaced: list[timedelta] = []  # the gaps bridged by right answers since the last miss
    confident, seen = False, set()
    lesson, step = first.lesson, first.step
    for a in attempts:
        lesson, step = a.lesson or lesson, a.step if a.step is not None else step
        new_item = a.item not in seen
        seen.add(a.item)
        if a.right is False:
            status, due, anchor, spaced, confident = "missed", a.at, a.at, [], bool(a.sure)
        elif a.right is None:
            if status == "not tried":
                due = a.at if due is None else min(due, a.at)
        elif status == "not tried" or (new_item and (due is None or a.at >= due)):
            bridged = a.at - anchor if anchor is not None else timedelta(0)
            if bridged >= timedelta(days=SPACED_DAYS):
                spaced.append(bridged)
            anchor, confident = a.at, False
            mastered = len(spaced) >= 2 and spaced[-1] > spaced[-2]
            status = "mastered" if mastered else "practising"
            due = a.at + (timedelta(days=GAPS_DAYS[-1]) if mastered else next_gap(bridged))
    return IdeaState(first.concept, status, due, lesson, step, confident, frozenset(seen))


def schedule(history: Iterable[Attempt], now: datetime) -> dict[str, IdeaState]:
    """Every idea in the history, by its concept, as of now (attempts after now are not yet made)."""
    by_concept: dict[str, list[Attempt]] = {}
    for a in sorted((a for a in history if a.at <= now and a.concept), key=lambda a: a.at):
        by_concept.setdefault(a.concept, []).append(a)
    return {concept: idea_state(attempts) for concept, attempts in by_concept.items()}


def due_now(states: dict[str, IdeaState], now: datetime) -> list[IdeaState]:
    """What the review asks now: confident misses first, then misses, then skipped, then the rest; within
    each, the longest overdue first."""
    tiers = {"missed": 1, "not tried": 2, "practising": 3, "mastered": 4}
    due = [s for s in states.values() if s.is_due(now)]
    return sorted(due, key=lambda s: (0 if s.confident_miss else tiers[s.status], s.due))
