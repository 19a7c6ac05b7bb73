"""A question a class room votes on: its text, its options and which one is right, where it came from,
and what the reveal draws to prove the answer. Stored with its round as JSON, so every app process
behind a proxy reads the same question. Plain data: no UI, no model, no quiz engine here.

Three sources: the quiz engine (ui/room/quiz.py turns a quiz question into one), a lesson's prediction
(ui/room/sources.py, where the lessons' models are), and the lecturer's own typed question (typed, here).
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field, replace

SOURCES = ("quiz", "lesson", "typed")
MIN_OPTIONS, MAX_OPTIONS = 2, 6
PROMPT_CHARS = 400
OPTION_CHARS = 120


class BadQuestion(ValueError):
    """A typed question that cannot be put to a room; the message says what to change."""


@dataclass(frozen=True)
class RoomQuestion:
    prompt: str
    options: tuple[str, ...]
    correct: int  # index into options; never sent to a phone before the reveal
    source: str  # one of SOURCES
    lesson: str = ""  # the lesson it belongs to ("" for a typed question)
    concept: str = ""  # a quiz generator's name: the transfer question asks the same idea anew
    explanation: str = ""  # the working, shown at the reveal
    proof: dict = field(default_factory=dict)  # what the reveal recomputes: {"kind": ..., and its inputs}
    why_wrong: tuple[str, ...] = ()  # per option, the misconception behind choosing it ("" if none or right)
    markdown: bool = False  # the prompt is a deck's typed question, Markdown with LaTeX between $: shown as written

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    def shuffled(self, seed: str) -> RoomQuestion:
        """The options in an order drawn from seed, the right one and the misconceptions following them.
        A round draws its own order once, so every phone sees the same letters; a typed question keeps
        the lecturer's order (they may have written "both of the above")."""
        if self.source == "typed":
            return self
        order = list(range(len(self.options)))
        random.Random(seed).shuffle(order)
        why = tuple(self.why_wrong[i] for i in order) if self.why_wrong else ()
        options = tuple(self.options[i] for i in order)
        return replace(self, options=options, correct=order.index(self.correct), why_wrong=why)

    @classmethod
    def from_json(cls, text: str) -> RoomQuestion:
        raw = json.loads(text)
        raw["options"] = tuple(raw["options"])
        raw["why_wrong"] = tuple(raw.get("why_wrong", ()))
        return cls(**raw)


def typed(prompt: object, options: object, correct: object) -> RoomQuestion:
    """The lecturer's own question: prompt, one option per line, the right option's number (from 1)."""
    text = str(prompt or "").strip()
    if not text:
        raise BadQuestion("Type the question first.")
    if len(text) > PROMPT_CHARS:
        raise BadQuestion(f"The question is {len(text):,} characters long; keep it to {PROMPT_CHARS}.")
    lines = [line.strip() for line in str(options or "").splitlines() if line.strip()]
    if len(lines) < MIN_OPTIONS:
        raise BadQuestion(f"Give at least {MIN_OPTIONS} options, one per line.")
    if len(lines) > MAX_OPTIONS:
        raise BadQuestion(f"Give at most {MAX_OPTIONS} options (there are {len(lines)}): a phone shows them all.")
    if any(len(line) > OPTION_CHARS for line in lines):
        raise BadQuestion(f"Keep each option to {OPTION_CHARS} characters.")
    if len({line.casefold() for line in lines}) != len(lines):
        raise BadQuestion("Two options read the same: make each one different.")
    try:
        right = int(str(correct).strip()) - 1
    except (TypeError, ValueError):
        right = -1
    if not 0 <= right < len(lines):
        raise BadQuestion(f"Say which option is right: a number from 1 to {len(lines)}.")
    return RoomQuestion(text, tuple(lines), right, "typed", why_wrong=("",) * len(lines))
