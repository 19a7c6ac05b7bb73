"""What a lesson's quiz test file (tests/encoder_core/quiz/test_quiz_<lesson>.py) runs on each generator.

The file defines check_<name>(q) for each generator <lesson>_<name>: an independent recomputation of the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from encoder_core.quiz import Question, generators, grade

SEEDS = range(20)


def lesson_generators(lesson: str) -> dict[str, Callable[[int], Question]]:
    return {g.__name__: g for g in generators(lesson)}


def lesson_checks(lesson: str, namespace: dict) -> dict[str, Callable[[Question], None]]:
    """A test file's check_<name> functions, keyed by the generator each one checks (<lesson>_<name>); a check
    that names no generator of the lesson stops the file's collection."""
    checks = {f"{lesson}_{n.removeprefix('check_')}": fn for n, fn in namespace.items() if n.startswith("check_")}
    unknown = set(checks) - set(lesson_generators(lesson))
    assert not unknown, f"checks of no {lesson} generator: {sorted(unknown)}"
    return checks


def checked_questions(lesson: str, gen: Callable[[int], Question], check: Callable[[Question], None]) -> list[Question]:
    """gen's questions for SEEDS, each recomputed by `check` and graded: its own answer right, every mistake wrong."""
    qs = [gen(s) for s in SEEDS]
    for q in qs:
        check(q)
        assert grade(q, q.answer_text).correct and q.lesson == lesson
        assert all(not grade(q, str(m.answer)).correct for m in q.mistakes)
    assert len({q.prompt for q in qs}) > 1
    return qs


def assert_practised(prediction) -> None:
    """A lesson's prediction (ui.frame.predict.Prediction) names the quiz generator that practises its idea
    (`concept`), and that generator names the same idea: the review asks anew what was missed."""
    by_name = {g.__name__: g for g in generators()}
    assert prediction.concept in by_name, f"{prediction.key}: no quiz generator {prediction.concept!r}"
    gen = by_name[prediction.concept]
    assert prediction.idea and gen.idea == prediction.idea, (prediction.key, prediction.idea, gen.idea)
    assert gen.lesson == prediction.lesson or prediction.idea  # another lesson's generator may practise it too
