"""The forms a generator fills in, one for each way of asking: a measured number, a count, a pick among
statements, a pick among positions. Each keeps what the prompt promises (the precision asked for, the options
offered) and how the answer is graded in one place."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import replace

import torch

from .base import RELATIVE_TOLERANCE, Mistake, Question, QuizFigure, grid, label, normalise, precision


def numeric_question(
    prompt: str,
    answer: float,
    explanation: str,
    mistakes: Sequence[Mistake] = (),
    *,
    min_decimals: int = 2,
    relative: float = RELATIVE_TOLERANCE,
    **details,
) -> Question:
    """A measured number, asked to its own precision(): the prompt ends on the rule, and grading uses the
    tolerance that rule states, so what the student is told and how the answer is marked cannot drift apart.
    `details` are the Question's other fields (figure, table, inputs)."""
    p = precision(answer, min_decimals, relative)
    return Question(
        kind="numeric",
        prompt=f"{prompt} {p.rule}",
        answer=answer,
        tolerance=p.tolerance,
        decimals=p.decimals,
        mistakes=tuple(mistakes),
        explanation=explanation,
        **details,
    )


def count_question(prompt: str, answer: int, explanation: str, mistakes: Sequence[Mistake] = (), **details) -> Question:
    """A whole number, asked exactly (no tolerance). The answer and the mistakes' answers are stored as floats,
    like every numeric answer."""
    return Question(
        kind="numeric",
        prompt=prompt,
        answer=float(answer),
        mistakes=tuple(replace(m, answer=float(m.answer)) for m in mistakes),
        explanation=explanation,
        **details,
    )


def options(r: random.Random, correct: str, candidates: Iterable[str], n: int | None = None) -> tuple[str, ...]:
    """The right option plus the distinct other candidates (at most n in all, the first ones kept: put the
    mistakes first), in a seeded order. A candidate that reads like one already kept is skipped, the right one
    included, so `candidates` may simply be every statement the question knows."""
    picked = [correct]
    for c in candidates:
        if c not in picked and normalise(c) not in {normalise(p) for p in picked}:
            picked.append(c)
    if n is not None:
        picked = picked[:n]
    if len(picked) < 2:
        raise ValueError("a choice question needs at least one wrong option")
    r.shuffle(picked)
    return tuple(picked)


def choice_question(
    r: random.Random,
    prompt: str,
    correct: str,
    candidates: Iterable[str],
    explanation: str,
    mistakes: Sequence[Mistake] = (),
    *,
    kind: str = "choice",
    n: int | None = None,
    **details,
) -> Question:
    """Pick the right one among `candidates`, offered in a seeded order (see options())."""
    return Question(
        kind=kind,
        prompt=prompt,
        answer=correct,
        choices=options(r, correct, candidates, n),
        mistakes=tuple(mistakes),
        explanation=explanation,
        **details,
    )


def positions(tokens: Sequence[str]) -> tuple[str, ...]:
    """Every position as an option, in order: when the answer could be any position, each one is offered."""
    return tuple(label(i, t) for i, t in enumerate(tokens))


def position_question(
    prompt: str,
    tokens: Sequence[str],
    answer: int,
    explanation: str,
    mistakes: Sequence[tuple[int, str]] = (),
    *,
    kind: str = "token",
    **details,
) -> Question:
    """Which position? Every position is offered, in order (see positions()); the answer and each mistake,
    given as (position, diagnosis), are positions."""
    choices = positions(tokens)
    return Question(
        kind=kind,
        prompt=prompt,
        answer=choices[answer],
        choices=choices,
        mistakes=tuple(Mistake(choices[i], diagnosis) for i, diagnosis in mistakes),
        explanation=explanation,
        **details,
    )


def attention_figure(
    weights: torch.Tensor, tokens: list[str], title: str, alt: str, in_prompt: bool = False
) -> QuizFigure:
    """A self-attention grid: the same tokens label the query rows and the key columns."""
    return QuizFigure(grid(weights), tokens, tokens, title, alt, in_prompt)
