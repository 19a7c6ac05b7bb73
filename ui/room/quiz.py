"""The quiz engine's questions as room questions, and a quiz answer as the room stores it.

A numeric quiz question becomes a choice between its answer and the wrong answers its generator
diagnoses, each of which is a known misconception: the best distractors a peer-instruction question can
have. classroom/ stores the result (classroom.questions.RoomQuestion) without knowing the quiz engine.
"""

from __future__ import annotations

import random
import re

from classroom.questions import MAX_OPTIONS, RoomQuestion
from encoder_core.quiz import CHOICE_KINDS, Grade, Question, generators, grade
from encoder_core.quiz.base import Precision, format_number, normalise, parse_int_tuple

ROOM_MIN_OPTIONS = 3  # two options make a coin toss: half the room right by guessing
ROOM_OPTIONS = 4  # the answer and three wrong ones when the generator diagnoses fewer
# How a room picks instead of typing: the prompt's instructions on how to type an answer go.
TYPING_HINTS = (
    (re.compile(r"\s*\((?:a|one) whole number[^)]*\)"), ""),
    (re.compile(r"\s*A whole number(?:; commas are fine)?\."), ""),
    (re.compile(r"\s*\(for example \(\d+(?:, \d+)*\)\)"), ""),
    (re.compile(r"\s*Answer like \(\d+(?:, \d+)*\)\."), ""),
    (re.compile(r"\s*Give it as a fraction, e\.g\. [\d.]+\."), ""),
    (re.compile(r"\s*Enter the percentage as a number \([^)]*\)\."), " (in %)"),
    (re.compile(r"Give (\w+) whole numbers: (.+?) \(for example [^)]*\)\."), r"What are the \2 counts?"),
    (re.compile(r"\s*Give \d+ decimal places?; answers within ±[\d.,e+-]+ count\."), ""),
)


def quiz_options(q: Question) -> tuple[tuple[str, ...], int, tuple[str, ...]] | None:
    """(options, right index, misconception per option) of a quiz question, or None if it cannot get
    ROOM_MIN_OPTIONS honest ones.

    Choice questions keep their options (at most MAX_OPTIONS, the diagnosed ones kept first). A typed
    question offers its answer and its diagnosed mistakes; when those are fewer than ROOM_OPTIONS, plausible
    wrong values join them (wrong_values), each checked wrong by the quiz's own grader and apart from every
    other option. Numbers in ascending order, shapes sorted (the round shuffles them anyway)."""
    if q.kind in CHOICE_KINDS:
        diagnoses = {str(m.answer): m.diagnosis for m in q.mistakes}
        options = tuple(str(c) for c in q.choices)
        if len(options) > MAX_OPTIONS:  # keep the answer and the diagnosed mistakes, then the first others
            keep = [str(q.answer)] + [o for o in diagnoses if o in options]
            keep += [o for o in options if o not in keep]
            options = tuple(o for o in options if o in keep[:MAX_OPTIONS])
        if len(options) < ROOM_MIN_OPTIONS:
            return None
        return options, options.index(str(q.answer)), tuple(diagnoses.get(o, "") for o in options)
    if q.kind == "numeric":
        values = [(float(q.answer), "")] + [(float(m.answer), m.diagnosis) for m in q.mistakes]
        values = values[:MAX_OPTIONS]
        for extra in wrong_values(q, [v for v, _ in values], ROOM_OPTIONS - len(values)):
            values.append((extra, ""))
        values.sort()
        options = tuple(format_number(v, q.tolerance, q.decimals) for v, _ in values)
        right = [v for v, _ in values].index(float(q.answer))
        if len(set(options)) != len(options) or len(options) < ROOM_MIN_OPTIONS:  # two shown alike: not fair
            return None
        return options, right, tuple(d for _, d in values)
    pairs = [(str(q.answer), "")] + [(str(m.answer), m.diagnosis) for m in q.mistakes]
    pairs = pairs[:MAX_OPTIONS]
    for extra in wrong_shapes(q, [o for o, _ in pairs], ROOM_OPTIONS - len(pairs)):
        pairs.append((extra, ""))
    if len(pairs) < ROOM_MIN_OPTIONS or len({normalise(o) for o, _ in pairs}) != len(pairs):
        return None
    pairs.sort(key=lambda pair: (parse_int_tuple(pair[0]) or (), pair[0]))
    options = tuple(o for o, _ in pairs)
    return options, options.index(str(q.answer)), tuple(d for _, d in pairs)


def _wrong(q: Question, shown: str) -> bool:
    """The quiz's own grader reads this option as a valid answer, and a wrong one."""
    graded = grade(q, shown)
    return graded.valid and not graded.correct


def wrong_values(q: Question, taken: list[float], n: int) -> list[float]:
    """Up to n plausible wrong numbers for a numeric question: off by one, doubled, halved, 1 - p for a share,
    a tenth off, drawn in an order fixed by the question's id (not always the same neighbours). Each is shown
    at the question's decimals, graded wrong, and more than twice the tolerance from every other option
    (so no option is nearly another); a count stays a whole number, a share stays in 0..1, a positive stays
    positive."""
    if n <= 0:
        return []
    a = float(q.answer)
    known = [a, *taken]
    whole = a.is_integer() and q.tolerance == 0
    share = all(0 <= v <= 1 for v in known)
    positive = all(v >= 0 for v in known)
    if whole:
        pool = [a + 1, a - 1, 2 * a, a // 2, a + 2, a - 2, 10 * a, a + max(1, round(0.1 * a))]
    elif share:
        pool = [1 - a, a / 2, 2 * a, a + 0.1, a - 0.1, (1 + a) / 2, a * a]
    else:
        pool = [2 * a, a / 2, -a, 1.5 * a, 0.75 * a, a + abs(a) * 0.2 + 1, a - abs(a) * 0.2 - 1, 10 * a]
    first, rest = pool[:3], pool[3:]
    rng = random.Random(q.id or str(a))
    rng.shuffle(first)
    rng.shuffle(rest)
    gap = max(2 * q.tolerance, 1e-9)
    chosen: list[float] = []
    for v in first + rest:
        if len(chosen) == n:
            break
        if (share and not 0 <= v <= 1) or (positive and v < 0) or (whole and v != int(v)):
            continue
        shown = format_number(v, q.tolerance, q.decimals)
        v = float(shown.replace(",", ""))
        if any(abs(v - k) <= gap for k in known + chosen) or (v == 0 and a != 0) or not _wrong(q, shown):
            continue
        chosen.append(v)
    return chosen


def wrong_shapes(q: Question, taken: list[str], n: int) -> list[str]:
    """Up to n plausible wrong shapes for a shape question ("(B, T, d)"): two sizes swapped, one left out,
    one off by one; none for an answer that is not a shape. Each graded wrong, none a repeat."""
    shape = parse_int_tuple(str(q.answer))
    if n <= 0 or shape is None:
        return []
    pool: list[tuple[int, ...]] = []
    for i in range(len(shape) - 1):
        swapped = list(shape)
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        pool.append(tuple(swapped))
    if len(shape) > 1:
        pool += [shape[1:], shape[:-1]]
    for i in range(len(shape)):
        pool += [shape[:i] + (shape[i] + 1,) + shape[i + 1 :], shape[:i] + (max(0, shape[i] - 1),) + shape[i + 1 :]]
    rng = random.Random(q.id or str(shape))
    rng.shuffle(pool)
    seen = {parse_int_tuple(t) for t in taken} | {shape}
    chosen: list[str] = []
    for candidate in pool:
        shown = "(" + ", ".join(str(v) for v in candidate) + ")"
        if len(chosen) == n:
            break
        if candidate in seen or not _wrong(q, shown):
            continue
        seen.add(candidate)
        chosen.append(shown)
    return chosen


def choice_prompt(q: Question) -> str:
    """The prompt without its instructions on how to type the answer (a room picks an option instead)."""
    text = q.prompt
    if q.kind == "numeric" and q.decimals is not None:
        rule = " " + Precision(q.decimals, q.tolerance).rule
        if text.endswith(rule):
            text = text[: -len(rule)]
    if q.kind not in CHOICE_KINDS:
        for pattern, replacement in TYPING_HINTS:
            text = pattern.sub(replacement, text)
    return text.strip()


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
