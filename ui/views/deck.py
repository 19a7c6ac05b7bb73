"""The deck builder's tables: pure functions, a deck in, a pandas table out."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from classroom.decks import KIND_NAMES, Deck, Problem, step_title

DECK_COLUMNS = ["step", "kind", "lesson", "what", "flag"]


def deck_table(
    deck: Deck,
    lesson_titles: Mapping[str, str],
    lesson_of: Mapping[int, str],
    found: list[Problem],
    prediction_titles: Mapping[str, str] | None = None,
):
    """One row per step, numbered from 1 as the presenter's bar counts them; a step naming what the app lacks
    is flagged. lesson_of: step index -> its lesson's id, where one is known. prediction_titles: as step_title."""
    flags = {p.number: p.what for p in found}
    rows = [
        {
            "step": i + 1,
            "kind": KIND_NAMES[s.kind],
            "lesson": lesson_titles.get(lesson_of.get(i, ""), lesson_of.get(i, "")),
            "what": step_title(s, lesson_titles, prediction_titles=prediction_titles),
            "flag": flags.get(i + 1, ""),
        }
        for i, s in enumerate(deck.steps)
    ]
    return pd.DataFrame(rows, columns=DECK_COLUMNS)
