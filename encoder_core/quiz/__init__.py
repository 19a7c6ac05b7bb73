"""Self-check quizzes whose answers the model computes. No UI here: torch + numpy only.

q = draw("masking", seed=7)          # one question, the same for the same seed
grade(q, "30")                       # Grade(correct, message, parsed)
question_for(None, quiz_seed, i)     # question i of a shareable quiz, all lessons mixed
"""

import importlib
import importlib.util

from encoder_core.lessons import LESSON_IDS

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

# Each lesson's generators register themselves when its module loads (encoder_core/quiz/<id>.py, for every
# lesson of the one registry that has one): a new lesson adds its file, and nothing here changes.
for _lesson in LESSON_IDS:
    if importlib.util.find_spec(f"{__name__}.{_lesson}") is not None:
        importlib.import_module(f"{__name__}.{_lesson}")

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
