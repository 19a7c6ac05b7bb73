"""A room's answers turned into what the lecturer sees: per question, how many answered, how many got
it right, and the share choosing each option; the most-missed question first. Plain Python, no UI.

A stored answer is already an option's text (ui/room/quiz.answer_option makes it from a quiz answer), so
nothing here needs the quiz engine: a question is anything with its options (`choices`, empty when the
answer is typed) and its `answer`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .store import OptionCount

MAX_OPTIONS = 6  # a typed answer can take many values: the five most chosen, then the rest together
REST = "all other answers"


@dataclass(frozen=True)
class OptionShare:
    option: str
    count: int
    share: float  # of the question's answers, 0..1
    correct: bool


@dataclass(frozen=True)
class QuestionResult:
    index: int  # 0-based; the pages number questions from 1
    question_id: str
    answered: int
    right: int
    options: tuple[OptionShare, ...]  # choices in their shown order; typed answers most chosen first

    @property
    def missed(self) -> float:
        return (self.answered - self.right) / self.answered if self.answered else 0.0


class Asked(Protocol):
    """What summarize needs of a question (encoder_core.quiz.Question has it): a choice question's options
    in their shown order, none for a typed answer, and the right answer."""

    choices: tuple[str, ...]
    answer: object


def summarize(counts: Sequence[OptionCount], questions: Mapping[int, Asked] | None = None) -> list[QuestionResult]:
    """One result per answered question, most missed first (then more answers, then lower number).

    questions (index -> question) lists a choice question's options that nobody chose, with 0.
    """
    questions = questions or {}
    by_index: dict[int, list[OptionCount]] = {}
    for c in counts:
        by_index.setdefault(c.question_index, []).append(c)
    results = []
    for index, rows in by_index.items():
        answered = sum(r.count for r in rows)
        right = sum(r.count for r in rows if r.correct)
        chosen: dict[str, list] = {}
        for r in rows:
            entry = chosen.setdefault(r.option, [0, False])
            entry[0] += r.count
            entry[1] = entry[1] or r.correct
        q = questions.get(index)
        if q is not None and q.choices:  # a choice question (a typed answer has no choices)
            order = list(q.choices) + sorted(o for o in chosen if o not in q.choices)
            picked = {o: chosen.get(o, [0, False]) for o in order}
            options = [OptionShare(o, n, n / answered, o == q.answer or ok) for o, (n, ok) in picked.items()]
        else:
            ranked = sorted(chosen.items(), key=lambda kv: (-kv[1][0], kv[0]))
            options = [OptionShare(o, n, n / answered, ok) for o, (n, ok) in ranked[: MAX_OPTIONS - 1]]
            rest = ranked[MAX_OPTIONS - 1 :]
            if len(rest) == 1:
                options.append(OptionShare(rest[0][0], rest[0][1][0], rest[0][1][0] / answered, rest[0][1][1]))
            elif rest:
                n = sum(v[0] for _, v in rest)
                options.append(OptionShare(REST, n, n / answered, False))
        results.append(QuestionResult(index, rows[0].question_id, answered, right, tuple(options)))
    return sorted(results, key=lambda r: (-r.missed, -r.answered, r.index))
