"""The quiz engine's questions in a room: a quiz question offered as a choice (its diagnosed mistakes as the
other options), a transfer question on the same idea, and a quiz answer stored as the grader read it."""

from __future__ import annotations

from classroom.questions import RoomQuestion
from classroom.results import summarize
from classroom.store import OptionCount
from encoder_core.quiz import CHOICE_KINDS, grade, question_for
from ui.room.quiz import answer_option, from_quiz, quiz_question, transfer


def choice_question():
    return next(q for q in (question_for(None, s, 0) for s in range(1, 500)) if q.kind == "choice")


def numeric_question():
    return next(q for q in (question_for(None, s, 0) for s in range(1, 500)) if q.kind == "numeric")


def test_quiz_questions_become_choices_whose_right_option_grades_right():
    offered = numeric = 0
    for i in range(40):
        q = question_for(None, 7, i)
        rq = from_quiz(q)
        if rq is None:
            assert q.kind not in CHOICE_KINDS and not q.mistakes
            continue
        offered += 1
        assert 3 <= len(rq.options) <= 6 and len(set(rq.options)) == len(rq.options)
        assert grade(q, rq.options[rq.correct]).correct, (q.id, rq.options)
        assert all(not grade(q, o).correct for i, o in enumerate(rq.options) if i != rq.correct), q.id
        assert rq.concept == q.id.split(":")[0] and rq.lesson == q.lesson
        assert RoomQuestion.from_json(rq.to_json()) == rq
        assert quiz_question(rq.proof["id"]) == q
        assert "decimal place" not in rq.prompt and rq.prompt[:60] in q.prompt  # a room picks, it does not type
        numeric += q.kind == "numeric" and "decimal place" in q.prompt
    assert offered >= 20 and numeric >= 3


def test_a_transfer_question_asks_the_same_idea_anew():
    original = from_quiz(question_for(None, 7, 0)) or from_quiz(question_for(None, 7, 1))
    again = transfer(original.concept, seed=12345)
    assert again.concept == original.concept and again.prompt != original.prompt
    assert transfer("no_such_generator", 1) is None


def test_typed_answers_are_stored_as_the_grader_read_them():
    q = numeric_question()
    for typed in (q.answer_text, f" {q.answer_text} "):
        assert answer_option(q, typed, grade(q, typed)) == f"{float(q.answer_text.replace(',', '')):g}"
    c = choice_question()
    assert answer_option(c, c.answer, grade(c, c.answer)) == c.answer and c.kind in CHOICE_KINDS


def test_a_quiz_question_has_options_exactly_when_it_is_a_choice():
    """classroom.results.summarize tells a choice question by its options (it does not know the quiz's kinds)."""
    for seed in range(1, 16):
        for i in range(10):
            q = question_for(None, seed, i)
            assert bool(q.choices) == (q.kind in CHOICE_KINDS), q.id
    q = numeric_question()
    (r,) = summarize([OptionCount(0, q.id, "1", False, 1)], {0: q})
    assert [o.option for o in r.options] == ["1"]  # a typed answer lists only what was answered


TYPING_HINTS = (
    "whole number",
    "for example",
    "decimal place",
    "commas are fine",
    "Answer like",
    "Enter the",
    "Give it",
)


def test_every_quiz_question_in_a_room_has_three_honest_options_and_no_typing_hint():
    """Over many quiz numbers: no prompt left asking how to type, at least 3 options (a 2-option question is a
    coin toss), each distinct, the right one graded right by the quiz's grader and every other graded wrong."""
    offered = built = 0
    for seed in range(1, 41):
        for i in range(10):
            q = question_for(None, seed, i)
            rq = from_quiz(q)
            if rq is None:
                continue
            offered += 1
            assert not [h for h in TYPING_HINTS if h in rq.prompt], (q.id, rq.prompt)
            assert 3 <= len(rq.options) <= 6 and len(set(rq.options)) == len(rq.options), (q.id, rq.options)
            assert grade(q, rq.options[rq.correct]).correct, (q.id, rq.options)
            assert all(
                not grade(q, o).correct and grade(q, o).valid for k, o in enumerate(rq.options) if k != rq.correct
            )
            assert len(rq.why_wrong) == len(rq.options) and rq.why_wrong[rq.correct] == ""
            built += len(rq.options) > 1 + len(q.mistakes) and q.kind not in CHOICE_KINDS
    assert offered >= 380 and built >= 50  # nearly every question, many with wrong values built here


def test_a_question_that_cannot_get_three_honest_options_is_not_offered():
    from dataclasses import replace

    from encoder_core.quiz.base import Mistake

    shape = next(q for q in (question_for(None, s, i) for s in range(1, 80) for i in range(10)) if q.kind == "exact")
    lone = replace(shape, answer="softmax", mistakes=(Mistake("argmax", "a hard choice"),))
    assert from_quiz(lone) is None  # a word with one diagnosed mistake: nothing honest to add
    two = replace(choice_question(), choices=("yes", "no"), answer="yes", mistakes=())
    assert from_quiz(two) is None
