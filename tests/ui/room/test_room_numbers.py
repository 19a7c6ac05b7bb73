"""A lesson's number prediction as a room's choice: the model's answer among the named misconceptions' values,
far-off values with the too-high and too-low misconceptions where those are few, in ascending order."""

from __future__ import annotations

from ui.frame.predict import Prediction, Trap
from ui.room.numbers import number_choice, without_rule

ASKED = Prediction(
    "heads",
    "n",
    "How many? Right within 2 %.",
    tolerance=0.02,
    traps=(Trap(32, "per token"), Trap(512, "layers"), Trap(258, "too close to call"), Trap(64, "one head")),
    too_high="too high",
    too_low="too low",
)


def test_the_answer_and_each_named_misconception_become_options_in_ascending_order():
    q, right = number_choice(ASKED, 256)
    assert [o.label for o in q.options] == ["32", "64", "256", "512"]  # 258 lies within 2 %: left out
    assert q.options[right].label == "256" and q.options[right].misconception == ""
    assert [o.misconception for o in q.options] == ["per token", "one head", "", "layers"]
    assert q.prompt == "How many?" and q.numeric is False


def test_too_few_traps_are_filled_with_a_value_far_too_high_and_far_too_low():
    q, right = number_choice(
        Prediction("x", "n", "How many?", traps=(Trap(10, "one"),), too_high="hi", too_low="lo"), 30
    )
    assert [(o.label, o.misconception) for o in q.options] == [("10", "one"), ("30", ""), ("90", "hi")]
    q, right = number_choice(Prediction("x", "n", "How many?", too_high="hi", too_low="lo"), 300)
    assert [(o.label, o.misconception) for o in q.options] == [("100", "lo"), ("300", ""), ("900", "hi")]
    assert right == 1


def test_the_tolerance_sentence_goes_a_choice_needs_none():
    assert without_rule("Share? (0 is none, 1 is all of it; right within 5 %)") == "Share? (0 is none, 1 is all of it)"
    assert without_rule("How many weights? Right within 2 %.") == "How many weights?"
    assert without_rule("How far? (right within 25 %)") == "How far?"
