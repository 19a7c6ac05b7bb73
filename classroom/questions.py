"""A question a class room votes on: its text, its options and which one is right, where it came from,
and what the reveal draws to prove the answer. Stored with its round as JSON, so every app process
behind a proxy reads the same question. No UI here.

Three sources: the quiz engine (from_quiz), a lesson's prediction (built in ui/room/sources.py,
where the lessons' models are), and the lecturer's own typed question (typed). A numeric quiz question
becomes a choice between its answer and the wrong answers its generator diagnoses, each of which is a
known misconception: the best distractors a peer-instruction question can have.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field, replace

from encoder_core.quiz import CHOICE_KINDS, Question, generators
from encoder_core.quiz.base import Precision, format_number

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


def quiz_options(q: Question) -> tuple[tuple[str, ...], int, tuple[str, ...]] | None:
    """(options, right index, misconception per option) of a quiz question, or None if it has too few.

    Choice questions keep their options (at most MAX_OPTIONS, the diagnosed ones kept first). A typed
    question offers its answer and its diagnosed mistakes, in ascending order for numbers (so the right
    one's place gives nothing away)."""
    if q.kind in CHOICE_KINDS:
        diagnoses = {str(m.answer): m.diagnosis for m in q.mistakes}
        options = tuple(str(c) for c in q.choices)
        if len(options) > MAX_OPTIONS:  # keep the answer and the diagnosed mistakes, then the first others
            keep = [str(q.answer)] + [o for o in diagnoses if o in options]
            keep += [o for o in options if o not in keep]
            options = tuple(o for o in options if o in keep[:MAX_OPTIONS])
        return options, options.index(str(q.answer)), tuple(diagnoses.get(o, "") for o in options)
    if len(q.mistakes) + 1 < MIN_OPTIONS:
        return None
    if q.kind == "numeric":
        values = [(float(q.answer), "")] + [(float(m.answer), m.diagnosis) for m in q.mistakes]
        values = sorted(values[:MAX_OPTIONS])
        options = tuple(format_number(v, q.tolerance, q.decimals) for v, _ in values)
        right = [v for v, _ in values].index(float(q.answer))
        if len(set(options)) != len(options):  # two shown alike: not a fair choice
            return None
        return options, right, tuple(d for _, d in values)
    pairs = sorted([(str(q.answer), "")] + [(str(m.answer), m.diagnosis) for m in q.mistakes])[:MAX_OPTIONS]
    options = tuple(o for o, _ in pairs)
    return options, options.index(str(q.answer)), tuple(d for _, d in pairs)


def choice_prompt(q: Question) -> str:
    """The prompt without the sentence on how to type a number (a room picks an option instead)."""
    if q.kind == "numeric" and q.decimals is not None:
        rule = " " + Precision(q.decimals, q.tolerance).rule
        if q.prompt.endswith(rule):
            return q.prompt[: -len(rule)]
    return q.prompt


def from_quiz(q: Question) -> RoomQuestion | None:
    """A quiz engine's question as a room question, or None if it cannot be offered as a choice."""
    offered = quiz_options(q)
    if offered is None:
        return None
    options, right, why = offered
    generator_name = q.id.split(":", 1)[0]
    return RoomQuestion(
        choice_prompt(q),
        options,
        right,
        "quiz",
        lesson=q.lesson,
        concept=generator_name,
        explanation=q.explanation,
        proof={"kind": "quiz", "id": q.id},
        why_wrong=why,
    )


def generator(name: str):
    return {g.__name__: g for g in generators()}.get(name)


def transfer(concept: str, seed: int, tries: int = 20) -> RoomQuestion | None:
    """The same idea on new numbers and a new sentence: the concept's generator at a seed not used yet."""
    gen = generator(concept)
    if gen is None:
        return None
    for k in range(tries):
        q = from_quiz(gen(seed + k))
        if q is not None:
            return q
    return None


def quiz_question(q_id: str) -> Question | None:
    """The quiz question an id names ("<generator>:<seed>"), rebuilt from its generator."""
    name, _, seed = q_id.partition(":")
    gen = generator(name)
    return gen(int(seed)) if gen is not None and seed.isdigit() else None


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
