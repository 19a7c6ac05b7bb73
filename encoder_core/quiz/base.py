"""Self-check questions: what a question is, how an answer is graded, and how questions are drawn.

A generator turns a seed into one Question. It draws its own numbers (random.Random and
torch.Generator, both seeded, so the same seed always gives the same question), runs
encoder_core on them and states what came out: the answer is computed, never typed in.
`inputs` keeps the drawn numbers so anyone can recompute the answer independently.
`mistakes` names the wrong answers a student is likely to compute from the same inputs, so that
grade() can say what went wrong; checked() keeps only those a response cannot confuse with the
answer or with each other, and refuses a tolerance that would let a guess of 0 pass.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

import torch

from ..lessons import LESSON_IDS
from ..model.model import Encoder, teaching_model
from ..model.tokenizer import WordPieceTokenizer, english_tokenizer
from ..typed_input import parse_int_tuple  # noqa: F401  (the generators and the quiz's users read it from here)
from .sentences import sentence  # noqa: F401  (the generators import it from here)

LESSONS = LESSON_IDS
KINDS = ("exact", "numeric", "choice", "token", "cell")
CHOICE_KINDS = ("choice", "token", "cell")


@dataclass(frozen=True)
class QuizFigure:
    """An attention-style grid the question is about: rows are queries, columns keys."""

    weights: list[list[float]]  # (T_q, T_k)
    query_tokens: list[str]
    key_tokens: list[str]
    title: str
    alt: str  # one sentence with the key numbers, for readers who cannot see the chart
    in_prompt: bool = False  # True: the question asks the student to read it, so show it with the question


@dataclass(frozen=True)
class Mistake:
    """A wrong answer a student is likely to compute from the same inputs, and what went wrong to get it."""

    answer: float | str  # of the question's kind: a number, a shape such as "(2, 3)", or one of the options
    diagnosis: str  # a full sentence, shown when the student's answer matches this one


@dataclass(frozen=True)
class Question:
    prompt: str
    kind: str  # one of KINDS
    answer: float | str  # a number for "numeric", otherwise the exact text expected (or the right choice)
    explanation: str  # the working, with the computed numbers
    choices: tuple[str, ...] = ()
    tolerance: float = 0.0  # numeric only; the prompt states it (see precision())
    decimals: int | None = None  # numeric only: the decimal places the prompt asks for
    mistakes: tuple[Mistake, ...] = ()  # the likeliest wrong answers, most likely first
    figure: QuizFigure | None = None
    table: tuple[tuple[str, ...], tuple[tuple, ...]] | None = None  # (columns, rows) shown with the prompt
    inputs: dict = field(default_factory=dict)
    id: str = ""  # "<generator name>:<seed>", stable across runs; filled in by @generator
    lesson: str = ""  # filled in by @generator

    @property
    def answer_text(self) -> str:
        if self.kind == "numeric":
            return format_number(float(self.answer), self.tolerance, self.decimals)
        return str(self.answer)


@dataclass(frozen=True)
class Grade:
    correct: bool
    message: str
    parsed: float | str | tuple | None  # None: the response could not be read as an answer of this kind
    mistake: Mistake | None = None  # the known mistake the wrong answer matches, if any

    @property
    def valid(self) -> bool:
        return self.parsed is not None


# ---------------------------------------------------------------- reading answers


def format_number(x: float, tolerance: float = 0.0, decimals: int | None = None) -> str:
    """The asked decimals, else enough for the tolerance: an integer answer as an integer with separators."""
    if tolerance == 0 and float(x).is_integer():
        return f"{int(x):,}"
    if decimals is None:
        decimals = 3 if tolerance == 0 else max(0, min(6, 1 - math.floor(math.log10(tolerance))))
    return f"{x:,.{decimals}f}"


@dataclass(frozen=True)
class Precision:
    """How a numeric answer is asked for and graded."""

    decimals: int  # decimal places the prompt asks for
    tolerance: float  # how far off an answer may be and still count

    @property
    def rule(self) -> str:
        """The sentence a prompt ends with."""
        places = "place" if self.decimals == 1 else "places"
        return f"Give {self.decimals} decimal {places}; answers within ±{self.tolerance:g} count."


RELATIVE_TOLERANCE = 0.02  # room for rounding along the way: 2% of the answer


def precision(answer: float, decimals: int = 2, relative: float = RELATIVE_TOLERANCE) -> Precision:
    """Decimals enough to show two significant digits of the answer (at least `decimals`), and a tolerance
    relative to the answer's size with a floor of half the last asked digit.

    A fixed ±0.01 would mark a guess of 0 right for an answer of 0.009: here a non-zero answer always
    shows two significant digits, so the floor stays below a tenth of it and 0 is always wrong.
    An answer that is 0 by construction (a LayerNorm's mean) is stated as exactly 0.
    """
    if answer != 0:
        decimals = max(decimals, 1 - math.floor(math.log10(abs(answer))))
    floor = 0.5 * 10.0**-decimals
    tolerance = max(floor, float(f"{relative * abs(answer):.2g}"))
    return Precision(decimals, tolerance)


_THOUSANDS = re.compile(r"[+-]?[1-9]\d{0,2}(,\d{3})+(\.\d+)?")  # "0,125" is a decimal comma
_FRACTION = re.compile(r"([+-]?\d+)/(\d+)")


def parse_number(text: str) -> float | None:
    """A number as a person might type it: 0.25, .25, 1e-3, 1,234,567, 0,25 (decimal comma), 3/4, 25%.

    A percent sign is dropped, not divided out: questions that want a percentage say so.
    None when it is not a finite number.
    """
    s = str(text).strip().replace("\u2212", "-")
    s = re.sub(r"[\s_\u2009\u202f]", "", s).removesuffix("%")
    if not s:
        return None
    if _THOUSANDS.fullmatch(s):
        s = s.replace(",", "")
    elif s.count(",") == 1 and "." not in s:
        s = s.replace(",", ".")
    fraction = _FRACTION.fullmatch(s)
    try:
        value = float(Fraction(s)) if fraction and int(fraction.group(2)) else float(s)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    return value if math.isfinite(value) else None


def normalise(text: str) -> str:
    """Case and spacing do not matter; a trailing full stop neither."""
    return re.sub(r"\s+", " ", str(text)).strip().casefold().rstrip(".").strip()


def closed(text: str) -> str:
    """Text ending a sentence: a full stop added unless it already ends on one (no "they move..")."""
    text = str(text).rstrip()
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _number_matches(question: Question, x: float, target: float) -> bool:
    return abs(x - float(target)) <= question.tolerance + 1e-9 * max(1.0, abs(float(target)))


def _read(question: Question, raw: str) -> tuple[object, str] | str:
    """(what to compare, how to show it), or a message when the response cannot be read for this kind."""
    if question.kind == "numeric":
        x = parse_number(raw)
        if x is None:
            return "Please enter a number (for example 0.25 or 1,024)."
        return x, format_number(x, question.tolerance, question.decimals)
    if question.kind == "exact":
        if parse_int_tuple(str(question.answer)) is not None:
            got = parse_int_tuple(raw)
            if got is None:
                return "Please enter whole numbers separated by commas, for example (2, 3, 4)."
            return got, "(" + ", ".join(str(v) for v in got) + ")"
        got = normalise(raw)
        return (got, raw.strip()) if got else "Please type an answer."
    picked = {normalise(c): c for c in question.choices}.get(normalise(raw))
    return (picked, picked) if picked is not None else "Please pick one of the options."


def _same(question: Question, got: object, target: float | str) -> bool:
    """Does a read response match a target answer (the right one or a mistake's)?"""
    if question.kind == "numeric":
        return _number_matches(question, float(got), target)
    if question.kind == "exact":
        shape = parse_int_tuple(str(target))
        return got == (shape if shape is not None else normalise(str(target)))
    return got == target


def grade(question: Question, response: str | None) -> Grade:
    """Right or wrong, with a message that gives the correct answer and, for a known slip, what went wrong.

    Never raises on odd input.
    """
    read = _read(question, "" if response is None else str(response))
    if isinstance(read, str):
        return Grade(False, read, None)
    got, shown = read
    right = question.answer_text
    tol = f" (within ±{question.tolerance:g})" if question.kind == "numeric" and question.tolerance else ""
    if _same(question, got, question.answer):
        return Grade(True, f"Right: {closed(right + tol)}", got)
    verb = "picked" if question.kind in CHOICE_KINDS else "entered"
    message = f"Not quite: you {verb} {closed(shown)} The answer is {closed(right + tol)}"
    mistake = next((m for m in question.mistakes if _same(question, got, m.answer)), None)
    if mistake is not None:
        message += f"\n{closed(mistake.diagnosis)}"  # on its own line: the point of the feedback
    return Grade(False, message, got, mistake)


def checked(q: Question) -> Question:
    """A generator's question, checked: options complete and distinct, a non-zero answer that a guess of 0 cannot
    pass, and only the mistakes that are really wrong answers (the first of any two a response could confuse)."""
    if q.kind not in KINDS:
        raise ValueError(f"unknown kind {q.kind!r}")
    if q.kind in CHOICE_KINDS:
        if q.answer not in q.choices or any(not str(c).strip() for c in q.choices):
            raise ValueError("a choice question needs its answer among non-empty options")
        if len({normalise(c) for c in q.choices}) != len(q.choices):
            raise ValueError("two options read the same")
        if any(m.answer not in q.choices for m in q.mistakes):
            raise ValueError("a mistake of a choice question must be one of its options")
    if q.kind == "numeric" and float(q.answer) != 0 and q.tolerance >= abs(float(q.answer)):
        raise ValueError("the tolerance lets a guess of 0 pass")
    kept: list[Mistake] = []
    for m in q.mistakes:
        read = (float(m.answer), "") if q.kind == "numeric" else _read(q, str(m.answer))
        if isinstance(read, str):
            raise ValueError(f"the mistake {m.answer!r} is not an answer of kind {q.kind}")
        if _apart(q, read[0], q.answer) and all(_apart(q, read[0], k.answer) for k in kept):
            kept.append(m)
    return replace(q, mistakes=tuple(kept))


def _apart(q: Question, got: object, target: float | str) -> bool:
    """Can no single response match both? Numbers need their tolerance windows not to overlap: a mistake
    entered to the asked decimals must not land in the answer's window, or in another mistake's."""
    if q.kind == "numeric":
        return abs(float(got) - float(target)) > 2 * q.tolerance + 1e-9 * max(1.0, abs(float(target)))
    return not _same(q, got, target)


# ---------------------------------------------------------------- the registry

Generator = Callable[[int], Question]
GENERATORS: dict[str, list[Generator]] = {lesson: [] for lesson in LESSONS}


def generator(lesson: str, idea: str = ""):
    """Register `fn(r: random.Random, g: torch.Generator) -> Question` as `gen(seed) -> Question` for a lesson.

    The wrapper seeds both sources of randomness from `seed` and fills in the id and lesson. idea: a short
    name of the one idea its questions practise; a lesson's prediction that sends a student here to
    practise (its `concept`) names the same idea, and a test checks the two agree.
    """
    if lesson not in LESSONS:
        raise ValueError(f"unknown lesson {lesson!r}; choose one of {LESSONS}")

    def register(fn: Callable[[random.Random, torch.Generator], Question]) -> Generator:
        @functools.wraps(fn)
        def gen(seed: int) -> Question:
            if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
                raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
            # Python's Random takes any int; torch wants < 2**63, and distinct generators
            # should not share a stream, so the torch seed is derived from both.
            r = random.Random(f"{fn.__name__}:{seed}")
            g = torch.Generator().manual_seed(r.getrandbits(62))
            try:
                q = checked(fn(r, g))
            except ValueError as e:
                raise ValueError(f"{fn.__name__}({seed}): {e}") from e
            return replace(q, id=f"{fn.__name__}:{seed}", lesson=lesson)

        gen.lesson = lesson
        gen.idea = idea
        GENERATORS[lesson].append(gen)
        return gen

    return register


def generators(lesson: str | None = None) -> list[Generator]:
    """The generators of one lesson, or of every lesson in lesson order."""
    if lesson is None:
        return [g for name in LESSONS for g in GENERATORS[name]]
    if lesson not in GENERATORS:
        raise ValueError(f"unknown lesson {lesson!r}; choose one of {LESSONS}")
    return list(GENERATORS[lesson])


def draw(lesson: str | None, seed: int) -> Question:
    """One question. seed picks the generator (seed mod n) and that generator's own seed (seed div n)."""
    gens = generators(lesson)
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return gens[seed % len(gens)](seed // len(gens))


def round_order(lesson: str | None, quiz_seed: int, round_: int) -> list[int]:
    """Every generator once (its index in generators(lesson)), in an order seeded by quiz and round.

    A mixed quiz deals the lessons round-robin, in a fresh shuffled lesson order each pass, so the first
    questions of every quiz come from every lesson that has questions, however many lessons there are.
    """
    r = random.Random(f"{lesson}:{quiz_seed}:{round_}")
    gens = generators(lesson)
    if lesson is not None:
        order = list(range(len(gens)))
        r.shuffle(order)
        return order
    index = {g: i for i, g in enumerate(gens)}
    piles = [[index[g] for g in GENERATORS[name]] for name in GENERATORS if GENERATORS[name]]
    for pile in piles:
        r.shuffle(pile)
    order: list[int] = []
    while piles:
        r.shuffle(piles)
        order += [pile.pop() for pile in piles]
        piles = [pile for pile in piles if pile]
    return order


def question_seed(lesson: str | None, quiz_seed: int, index: int) -> int:
    """The seed of question `index` in quiz `quiz_seed`: every n questions use each generator once (round_order),
    so a quiz does not repeat a kind of question before it has shown all of them."""
    n = len(generators(lesson))
    rounds, position = divmod(index, n)
    return n * (quiz_seed * 100_003 + index) + round_order(lesson, quiz_seed, rounds)[position]


def question_for(lesson: str | None, quiz_seed: int, index: int) -> Question:
    return draw(lesson, question_seed(lesson, quiz_seed, index))


# ---------------------------------------------------------------- helpers shared by the generators


@functools.lru_cache(maxsize=1)
def tokenizer() -> WordPieceTokenizer:
    return english_tokenizer()


@functools.lru_cache(maxsize=4)
def small_model(seed: int) -> Encoder:
    """The pages' seeded small model (shared here: read it, never change it)."""
    return teaching_model(seed)


def count_of(n: int, noun: str) -> str:
    """'1 sequence', '3 sequences': no 'sequence(s)' in a question."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def signed_sum(values, decimals: int | None = None) -> str:
    """'0.5 − 1.2 + 0.3': a sum written with its signs, never '+ -1.2'."""

    def show(v: float) -> str:
        return f"{abs(v):g}" if decimals is None else f"{abs(v):.{decimals}f}"

    values = [float(v) for v in values]
    text = ("−" if values[0] < 0 else "") + show(values[0])
    for v in values[1:]:
        text += f" {'−' if v < 0 else '+'} {show(v)}"
    return text


def fmt_list(values, decimals: int = 3) -> str:
    return "[" + ", ".join(f"{float(v):.{decimals}f}" for v in values) + "]"


def label(i: int, token: str) -> str:
    """A token's option text: its position first, as on the heatmaps' axes ('3 sat')."""
    return f"{i} {token}"


def grid(t: torch.Tensor, decimals: int = 4) -> list[list[float]]:
    return [[round(float(v), decimals) for v in row] for row in t]
