"""Room questions: a quiz question offered as a choice (its diagnosed mistakes as the other options), a
transfer question on the same idea, the lecturer's typed question and what is wrong with a bad one."""

from __future__ import annotations

import pytest

from classroom.questions import BadQuestion, RoomQuestion, from_quiz, quiz_question, transfer, typed
from encoder_core.quiz import CHOICE_KINDS, grade, question_for


def test_quiz_questions_become_choices_whose_right_option_grades_right():
    offered = numeric = 0
    for i in range(40):
        q = question_for(None, 7, i)
        rq = from_quiz(q)
        if rq is None:
            assert q.kind not in CHOICE_KINDS and not q.mistakes
            continue
        offered += 1
        assert 2 <= len(rq.options) <= 6 and len(set(rq.options)) == len(rq.options)
        assert grade(q, rq.options[rq.correct]).correct, (q.id, rq.options)
        assert all(not grade(q, o).correct for i, o in enumerate(rq.options) if i != rq.correct), q.id
        assert rq.concept == q.id.split(":")[0] and rq.lesson == q.lesson
        assert RoomQuestion.from_json(rq.to_json()) == rq
        assert quiz_question(rq.proof["id"]) == q
        assert "decimal place" not in rq.prompt and rq.prompt in q.prompt  # a room picks, it does not type
        numeric += q.kind == "numeric" and "decimal place" in q.prompt
    assert offered >= 20 and numeric >= 3


def test_a_transfer_question_asks_the_same_idea_anew():
    original = from_quiz(question_for(None, 7, 0)) or from_quiz(question_for(None, 7, 1))
    again = transfer(original.concept, seed=12345)
    assert again.concept == original.concept and again.prompt != original.prompt
    assert transfer("no_such_generator", 1) is None


def test_a_typed_question_keeps_its_options_in_order():
    q = typed("  Which is right?  ", "one\n\n two \nthree", "2")
    assert (q.prompt, q.options, q.correct, q.source) == ("Which is right?", ("one", "two", "three"), 1, "typed")


@pytest.mark.parametrize(
    ("prompt", "options", "correct", "says"),
    [
        ("", "a\nb", 1, "Type the question"),
        ("x" * 401, "a\nb", 1, "keep it to 400"),
        ("Q?", "only one", 1, "at least 2"),
        ("Q?", "\n".join("abcdefg"), 1, "at most 6"),
        ("Q?", "a\nA", 1, "read the same"),
        ("Q?", "a\nb", 3, "from 1 to 2"),
        ("Q?", "a\nb", "first", "from 1 to 2"),
        ("Q?", "a\n" + "b" * 121, 1, "120 characters"),
    ],
)
def test_a_bad_typed_question_says_what_to_change(prompt, options, correct, says):
    with pytest.raises(BadQuestion, match=says):
        typed(prompt, options, correct)


def test_a_round_draws_its_own_order_the_right_option_and_the_misconceptions_follow():
    q = RoomQuestion(
        "Which?", ("a", "b", "c", "d"), 1, "quiz", why_wrong=("idea a", "", "idea c", "idea d"), concept="x"
    )
    orders = set()
    for seed in range(30):
        s = q.shuffled(str(seed))
        assert s == q.shuffled(str(seed))  # the same round, the same order on every phone
        assert sorted(s.options) == sorted(q.options) and s.options[s.correct] == "b"
        assert all(s.why_wrong[i] == q.why_wrong[q.options.index(o)] for i, o in enumerate(s.options))
        orders.add(s.options)
    assert len(orders) > 5
    assert len({q.shuffled(str(seed)).correct for seed in range(30)}) == 4  # the right one is in every place


def test_a_typed_question_keeps_the_lecturers_order_in_a_round():
    q = typed("Which?", "first\nsecond\nboth of the above", 3)
    assert q.shuffled("any") == q
