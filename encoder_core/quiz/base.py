"""Self-check questions: what a question is, how an answer is graded, and how questions are drawn.

A generator turns a seed into one Question. It draws its own numbers (random.Random and
torch.Generator, both seeded, so the same seed always gives the same question), runs
encoder_core on them and states what came out: the answer is computed, never typed in.
`inputs` keeps the drawn numbers so anyone can recompute the answer independently.
"""

from __future__ import annotations

import functools
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

import torch

from ..lessons import LESSON_IDS
from ..lexicon import ADJECTIVES, ANIMALS, OBJECTS, PEOPLE, PLACES, PREPOSITIONS, VERBS_INTRANSITIVE, VERBS_TRANSITIVE
from ..model import Encoder, teaching_model
from ..tokenizer import WordPieceTokenizer, english_tokenizer

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
class Question:
    prompt: str
    kind: str  # one of KINDS
    answer: float | str  # a number for "numeric", otherwise the exact text expected (or the right choice)
    explanation: str  # the working, with the computed numbers
    choices: tuple[str, ...] = ()
    tolerance: float = 0.0  # numeric only; the prompt states it
    figure: QuizFigure | None = None
    table: tuple[tuple[str, ...], tuple[tuple, ...]] | None = None  # (columns, rows) shown with the prompt
    inputs: dict = field(default_factory=dict)
    id: str = ""  # "<generator name>:<seed>", stable across runs; filled in by @generator
    lesson: str = ""  # filled in by @generator

    @property
    def answer_text(self) -> str:
        if self.kind == "numeric":
            return format_number(float(self.answer), self.tolerance)
        return str(self.answer)


@dataclass(frozen=True)
class Grade:
    correct: bool
    message: str
    parsed: float | str | tuple | None  # None: the response could not be read as an answer of this kind

    @property
    def valid(self) -> bool:
        return self.parsed is not None


# ---------------------------------------------------------------- reading answers


def format_number(x: float, tolerance: float = 0.0) -> str:
    """Enough decimals for the tolerance: an integer answer as an integer with separators."""
    if tolerance == 0 and float(x).is_integer():
        return f"{int(x):,}"
    decimals = 3 if tolerance == 0 else max(0, min(6, 1 - math.floor(math.log10(tolerance))))
    return f"{x:,.{decimals}f}"


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


_TUPLE_SEPARATORS = re.compile(r"\s*(?:,|x|×|\*|\s)\s*")


def parse_int_tuple(text: str) -> tuple[int, ...] | None:
    """'(8, 20, 48)', '8,20,48', '[8, 20, 48]', '8 x 20 x 48', 'torch.Size([8, 20, 48])' -> (8, 20, 48)."""
    s = str(text).strip().lower().replace("torch.size", "")
    s = s.strip("()[]{} ").rstrip(",").strip()
    if not s:
        return None
    parts = [p for p in _TUPLE_SEPARATORS.split(s) if p]
    if not parts or not all(re.fullmatch(r"\d+", p) for p in parts):
        return None
    return tuple(int(p) for p in parts)


def normalise(text: str) -> str:
    """Case and spacing do not matter; a trailing full stop neither."""
    return re.sub(r"\s+", " ", str(text)).strip().casefold().rstrip(".").strip()


def grade(question: Question, response: str | None) -> Grade:
    """Right or wrong, with a message that gives the correct answer. Never raises on odd input."""
    raw = "" if response is None else str(response)
    right = question.answer_text
    if question.kind == "numeric":
        x = parse_number(raw)
        if x is None:
            return Grade(False, "Please enter a number (for example 0.25 or 1,024).", None)
        target = float(question.answer)
        ok = abs(x - target) <= question.tolerance + 1e-9 * max(1.0, abs(target))
        tol = f" (within ±{question.tolerance:g})" if question.tolerance else ""
        if ok:
            return Grade(True, f"Right: {right}{tol}.", x)
        entered = format_number(x, question.tolerance)
        return Grade(False, f"Not quite: you entered {entered}; the answer is {right}{tol}.", x)
    if question.kind == "exact":
        expected = parse_int_tuple(str(question.answer))
        if expected is not None:
            got = parse_int_tuple(raw)
            if got is None:
                return Grade(False, "Please enter whole numbers separated by commas, for example (2, 3, 4).", None)
            shown = "(" + ", ".join(str(v) for v in got) + ")"
        else:
            got = normalise(raw)
            if not got:
                return Grade(False, "Please type an answer.", None)
            expected, shown = normalise(str(question.answer)), raw.strip()
        if got == expected:
            return Grade(True, f"Right: {right}.", got)
        return Grade(False, f"Not quite: you entered {shown}; the answer is {right}.", got)
    # choice, token, cell: the response must be one of the offered options
    by_text = {normalise(c): c for c in question.choices}
    picked = by_text.get(normalise(raw))
    if picked is None:
        return Grade(False, "Please pick one of the options.", None)
    if picked == question.answer:
        return Grade(True, f"Right: {right}.", picked)
    return Grade(False, f"Not quite: you picked {picked}; the answer is {right}.", picked)


# ---------------------------------------------------------------- the registry

Generator = Callable[[int], Question]
GENERATORS: dict[str, list[Generator]] = {lesson: [] for lesson in LESSONS}


def generator(lesson: str):
    """Register `fn(r: random.Random, g: torch.Generator) -> Question` as `gen(seed) -> Question` for a lesson.

    The wrapper seeds both sources of randomness from `seed` and fills in the id and lesson.
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
            q = fn(r, g)
            if q.kind not in KINDS:
                raise ValueError(f"{fn.__name__} produced an unknown kind {q.kind!r}")
            return replace(q, id=f"{fn.__name__}:{seed}", lesson=lesson)

        gen.lesson = lesson
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


def question_seed(lesson: str | None, quiz_seed: int, index: int) -> int:
    """The seed of question `index` in quiz `quiz_seed`: every n questions use each generator once, in a
    shuffled order, so a quiz does not repeat a kind of question before it has shown all of them."""
    n = len(generators(lesson))
    rounds, position = divmod(index, n)
    order = list(range(n))
    random.Random(f"{lesson}:{quiz_seed}:{rounds}").shuffle(order)
    return n * (quiz_seed * 100_003 + index) + order[position]


def question_for(lesson: str | None, quiz_seed: int, index: int) -> Question:
    return draw(lesson, question_seed(lesson, quiz_seed, index))


# ---------------------------------------------------------------- helpers shared by the generators


def options(r: random.Random, correct: str, wrong: Sequence[str], n: int | None = None) -> tuple[str, ...]:
    """The right option plus distinct wrong ones (at most n in all), in a seeded order."""
    picked = [correct]
    for w in wrong:
        if w not in picked and normalise(w) not in {normalise(p) for p in picked}:
            picked.append(w)
    if n is not None:
        picked = picked[:n]
    if len(picked) < 2:
        raise ValueError("a choice question needs at least one wrong option")
    r.shuffle(picked)
    return tuple(picked)


def sentence(r: random.Random, n_words: int) -> str:
    """A plain sentence of exactly n_words words (1..12), every word one piece of the vocabulary (one token)."""
    if not 1 <= n_words <= 12:
        raise ValueError("n_words must be in 1..12")
    subj, adj, adj2 = r.choice(PEOPLE[:-2] + ANIMALS), r.choice(ADJECTIVES), r.choice(ADJECTIVES)
    vi, vt, obj = r.choice(VERBS_INTRANSITIVE), r.choice(VERBS_TRANSITIVE), r.choice(OBJECTS)
    prep, place = r.choice(PREPOSITIONS), r.choice(PLACES)
    templates = {
        1: [subj],
        2: ["the", subj],
        3: ["the", subj, vi],
        4: ["the", adj, subj, vi],
        5: ["the", subj, vt, "the", obj],
        6: ["the", subj, vi, prep, "the", place],
        7: ["the", adj, subj, vt, "the", adj2, obj],
        8: ["the", subj, vi, prep, "the", place, "all", "day"],
        9: ["the", adj, subj, vt, "the", obj, prep, "the", place],
        10: ["the", adj, subj, vt, "the", adj2, obj, prep, "the", place],
        11: ["the", adj, subj, vt, "the", obj, prep, "the", place, "all", "day"],
        12: ["the", adj, subj, vt, "the", adj2, obj, prep, "the", place, "all", "day"],
    }
    return " ".join(templates[n_words])


@functools.lru_cache(maxsize=1)
def tokenizer() -> WordPieceTokenizer:
    return english_tokenizer()


@functools.lru_cache(maxsize=4)
def small_model(seed: int) -> Encoder:
    """The pages' seeded small model (shared here: read it, never change it)."""
    return teaching_model(seed)


def fmt_list(values, decimals: int = 3) -> str:
    return "[" + ", ".join(f"{float(v):.{decimals}f}" for v in values) + "]"


def label(i: int, token: str) -> str:
    """A token's option text: its position first, as on the heatmaps' axes ('3 sat')."""
    return f"{i} {token}"


def grid(t: torch.Tensor, decimals: int = 4) -> list[list[float]]:
    return [[round(float(v), decimals) for v in row] for row in t]
