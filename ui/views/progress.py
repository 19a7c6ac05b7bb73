"""My progress as a table: numbers in (the scheduler's states), a DataFrame out. No streamlit."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pandas as pd

from classroom.schedule import IdeaState

COLUMNS = ["lesson", "idea", "status", "next review"]


def when(due: datetime | None, now: datetime) -> str:
    """A due date as a learner reads it: now, today, tomorrow, in N days."""
    if due is None:
        return "–"
    if due <= now:
        return "due now"
    days = (due.date() - now.date()).days
    return "later today" if days == 0 else "tomorrow" if days == 1 else f"in {days} days ({due:%d %b})"


def progress_table(
    ideas: dict[str, list[str]],
    states: dict[str, IdeaState],
    now: datetime,
    label: Callable[[str], str],
    title: Callable[[str], str],
) -> pd.DataFrame:
    """One row per idea of each lesson (ideas: lesson -> its concepts), then any other idea in the record."""
    rows, listed = [], set()
    for lesson, concepts in ideas.items():
        for concept in concepts:
            listed.add(concept)
            s = states.get(concept)
            rows.append(
                [title(lesson), label(concept), s.status if s else "not tried", when(s.due if s else None, now)]
            )
    for concept, s in states.items():
        if concept not in listed:
            rows.append([title(s.lesson), label(concept), s.status, when(s.due, now)])
    return pd.DataFrame(rows, columns=COLUMNS)
