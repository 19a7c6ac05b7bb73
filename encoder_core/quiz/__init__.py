"""Self-check quizzes whose answers the model computes. No UI here: torch + numpy only.

q = draw("masking", seed=7)          # one question, the same for the same seed
grade(q, "30")                       # Grade(correct, message, parsed)
question_for(None, quiz_seed, i)     # question i of a shareable quiz, all lessons mixed
"""

from . import attention, block, heads, inside, masking, outputs, padding, tradeoffs  # noqa: F401  (registers the generators)
from .base import (
    CHOICE_KINDS,
    GENERATORS,
    KINDS,
    LESSONS,
    Grade,
    Question,
    QuizFigure,
    draw,
    generators,
    grade,
    parse_int_tuple,
    parse_number,
    question_for,
    question_seed,
)

__all__ = [
    "CHOICE_KINDS",
    "GENERATORS",
    "KINDS",
    "LESSONS",
    "Grade",
    "Question",
    "QuizFigure",
    "draw",
    "generators",
    "grade",
    "parse_int_tuple",
    "parse_number",
    "question_for",
    "question_seed",
]
