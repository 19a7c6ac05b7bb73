"""A lesson's number prediction as a room question: a phone picks an option rather than typing a number, so the
options are the model's answer and what a student holding each named misconception would say (the question's
traps), and, where those are too few, a value far too high and one far too low, each with the question's
too-high or too-low misconception. Listed in ascending order, so the right one's place gives nothing away.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from classroom.questions import MAX_OPTIONS
from ui.frame.predict import Option, Prediction

MIN_CHOICES = 3  # the answer and two misconceptions: enough; fewer, and far-off values join them
FAR = 3.0  # a value "far too high" is the answer times this, "far too low" the answer divided by it
# How a number prediction states its tolerance, which a choice does not need: " Right within 2 %." or
# "(..., right within 25 %)".
_RULE = re.compile(r"\s*Right within [0-9.]+ %\.|;?,?\s*right within [0-9.]+ %(?=\))|\s*\(right within [0-9.]+ %\)")


def whole(value: float) -> str:
    return f"{round(value):,}"


def without_rule(prompt: str) -> str:
    return _RULE.sub("", prompt).replace("()", "").strip()


def number_choice(
    q: Prediction, answer: float, shown: Callable[[float], str] = whole, most: float | None = None
) -> tuple[Prediction, int]:
    """q as a choice, and the index of the right option. A trap within the question's own tolerance of the answer
    (before the lesson narrows it to judge a typed number) is too close to offer beside it, and one shown like
    another option is offered once. most: the largest value the number can take (1 for a share), if any."""
    tolerance = q.tolerance
    values = [(answer, "")] + [(t.value, t.misconception) for t in q.traps]
    if len(values) < MIN_CHOICES and answer:
        values += [(answer * FAR, q.too_high), (answer / FAR, q.too_low)]
    picked: dict[str, tuple[float, str]] = {}
    for value, why in values:
        label = shown(value)
        far_enough = value == answer or not answer or abs(value / answer - 1) > tolerance
        possible = most is None or value <= most
        if label not in picked and far_enough and possible and len(picked) < MAX_OPTIONS:
            picked[label] = (value, why)
    ordered = sorted(picked.items(), key=lambda item: item[1][0])
    options = tuple(Option(label, why) for label, (_, why) in ordered)
    right = [label for label, _ in ordered].index(shown(answer))
    return replace(q, options=options, prompt=without_rule(q.prompt)), right
