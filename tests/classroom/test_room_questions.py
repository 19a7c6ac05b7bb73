"""Room questions: the lecturer's typed question and what is wrong with a bad one, and the order a round
draws for its options. (A quiz question offered as a choice: tests/ui/room/test_room_quiz.py.)"""

from __future__ import annotations

import pytest

from classroom.questions import BadQuestion, RoomQuestion, typed


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
