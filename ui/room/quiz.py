"""The quiz engine's questions as room questions, and a quiz answer as the room stores it.

A numeric quiz question becomes a choice between its answer and the wrong answers its generator
diagnoses, each of which is a known misconception: the best distractors a peer-instruction question can
have. classroom/ stores the result (classroom.questions.RoomQuestion) without knowing the quiz engine.
"""

from __future__ import annotations

from classroom.questions import MAX_OPTIONS, MIN_OPTIONS, RoomQuestion
from encoder_core.quiz import CHOICE_KINDS, Grade, Question, generators
from encoder_core.quiz.base import Precision, format_number


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


def answer_option(question: Question, response: object, graded: Grade) -> str:
    """What a room stores as the chosen option: the choice itself, or a typed answer as the grader read it
    (so "0.50" and ".5" count as one option)."""
    if question.kind in CHOICE_KINDS:
        return str(response)
    parsed = graded.parsed
    if isinstance(parsed, float):
        return f"{parsed:g}"
    if isinstance(parsed, tuple):
        return "(" + ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in parsed) + ")"
    return str(parsed)
