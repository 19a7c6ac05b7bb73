"""What the review asks and what "My progress" shows: the learner's record read through the scheduler
(classroom/schedule.py), or, when the store cannot be read, this visit's predictions alone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import streamlit as st

from classroom import clock
from classroom.schedule import IdeaState, due_now, schedule
from encoder_core.lessons import LESSON_IDS, LESSON_TITLES
from encoder_core.quiz import generators

from . import learner
from .predict import REVIEW_LINK, review_items, visit_record

WHY = {
    "confident": "you were sure, and the model said otherwise",
    "missed": "your prediction or answer missed",
    "skipped": "you skipped the prediction",
    "due": "it is due again: spaced practice",
}
SEED_KEY = "_review_seeds"  # concept -> the first quiz seed of its review question this visit


@dataclass(frozen=True)
class ReviewItem:
    concept: str
    why: str  # a key of WHY
    lesson: str = ""
    step: int | None = None
    seen: frozenset[str] = frozenset()  # question ids already asked: the review asks another


def _why(state: IdeaState) -> str:
    if state.confident_miss:
        return "confident"
    return {"missed": "missed", "not tried": "skipped"}.get(state.status, "due")


def states(now: datetime | None = None) -> dict[str, IdeaState] | None:
    """Every idea in this browser's record, scheduled as of now; None when the record cannot be read."""
    history = learner.history()
    return None if history is None else schedule(history, now or clock.now())


def due_items() -> list[ReviewItem]:
    """What is due now, first things first. From the record; from this visit alone if it cannot be read."""
    now = clock.now()
    scheduled = states(now)
    if not scheduled:  # no record (none yet, or it cannot be read): this visit's predictions alone
        return [ReviewItem(concept, why) for concept, why in review_items()]
    return [ReviewItem(s.concept, _why(s), s.lesson, s.step, s.seen) for s in due_now(scheduled, now)]


def first_unseen_seed(concept: str, seen: frozenset[str]) -> int:
    """A seed whose question on concept the learner has not been asked (a question's id is
    "<generator>:<seed>", and it carries its own sentence): the first from a start fixed by the concept."""
    seed = 1 + sum(map(ord, concept)) % 997
    while f"{concept}:{seed}" in seen:
        seed += 1
    return seed


def fresh_seed(concept: str, seen: frozenset[str]) -> int:
    """This visit's first seed of the review question on concept, kept for the visit (so the question
    does not change under the learner once their answer is recorded)."""
    return st.session_state.setdefault(SEED_KEY, {}).setdefault(concept, first_unseen_seed(concept, seen))


def lesson_ideas() -> dict[str, list[str]]:
    """Each lesson's ideas (the quiz generators its predictions point at, which name an idea), in lesson order."""
    out: dict[str, list[str]] = {lesson: [] for lesson in LESSON_IDS}
    for g in generators():
        if getattr(g, "idea", "") and g.lesson in out:
            out[g.lesson].append(g.__name__)
    return out


def idea_label(concept: str) -> str:
    by_name = {g.__name__: g for g in generators()}
    g = by_name.get(concept)
    return (getattr(g, "idea", "") or concept).replace("_", " ").replace("-", " ")


def lesson_title(lesson: str) -> str:
    return LESSON_TITLES.get(lesson, lesson)


def progress_panel() -> None:
    """The sidebar: this visit's predictions, what is due, and the way to the review and to My progress."""
    record = visit_record()
    due = due_items()
    if record:
        st.markdown("**Your predictions this visit**")
        st.caption(" · ".join(f"{lesson_title(lesson)}: {r} of {n} right" for lesson, (r, n) in record.items()))
    if due:
        # The quiz page's review section, by its own step: it lands on the review, not the first tab.
        st.page_link(
            "pages/quiz.py",
            label=f"Review what I missed ({len(due)} due)",
            icon=":material/replay:",
            query_params=REVIEW_LINK,
        )
    learner.status_notice()
