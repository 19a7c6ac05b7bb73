"""ui.frame.predict's scoring, which every lesson's predictions share (pure: no page run here), and
one small AppTest of committing a typed word and a long option label."""

import pytest

from ui.frame.predict import Option, Prediction, Trap, fingerprint, judge, lettered, shuffled, tolerance_for

CHOICE = Prediction(
    "demo",
    "pick",
    "Which?",
    (Option("a", "the idea behind a"), Option("b"), Option("c", "the idea behind c")),
)
NUMBER = Prediction(
    "demo", "count", "How many?", tolerance=0.5, too_high="counted too much", too_low="counted too little"
)
TRAPPED = Prediction(
    "demo",
    "trapped",
    "How many times more?",
    tolerance=0.4,
    traps=(Trap(16, "the naive N times"),),
    too_high="too much",
    too_low="too little",
)


def test_a_right_choice_names_no_misconception():
    v = judge(CHOICE, 1, 1)
    assert v.right and v.said == "Right." and v.misconception == ""


@pytest.mark.parametrize("guess", [0, 2])
def test_a_wrong_choice_names_its_own_misconception_and_the_models_answer(guess):
    v = judge(CHOICE, guess, 1)
    assert not v.right and "“b”" in v.said
    assert v.misconception == CHOICE.options[guess].misconception


@pytest.mark.parametrize(("guess", "right"), [(100, True), (51, True), (149, True), (49, False), (151, False)])
def test_a_number_within_the_tolerance_is_right(guess, right):
    assert judge(NUMBER, guess, 100).right == right


def test_the_tolerance_is_said_in_percent():
    assert "within 50 %" in judge(NUMBER, 120, 100).said
    assert "60 % too large" in judge(NUMBER, 240, 150).said and "within 50 %" in judge(NUMBER, 240, 150).said


def test_a_trap_narrows_the_tolerance_so_the_misconception_it_names_is_judged_wrong():
    """The trade-offs cache question: 16 (N times, the naive answer) against the model's 22.6."""
    assert tolerance_for(TRAPPED, 22.6) == pytest.approx((1 - 16 / 22.6) / 2)
    naive = judge(TRAPPED, 16, 22.6)
    assert not naive.right and naive.misconception == "the naive N times"
    assert judge(TRAPPED, 22, 22.6).right and not judge(TRAPPED, 18, 22.6).right


def test_a_number_is_scored_by_how_far_off_it_is_with_its_direction():
    high, low = judge(NUMBER, 1000, 10), judge(NUMBER, 1, 10)
    assert "100 times too large" in high.said and high.misconception == "counted too much"
    assert "10 times too small" in low.said and low.misconception == "counted too little"


def test_the_options_order_is_a_stable_permutation_that_differs_between_visits():
    assert shuffled(4, "a-q") == shuffled(4, "a-q") and sorted(shuffled(4, "a-q")) == [0, 1, 2, 3]
    orders = {tuple(shuffled(4, f"{seed}-q")) for seed in range(40)}
    assert len(orders) > 10
    firsts = [shuffled(4, f"{seed}-q")[0] for seed in range(400)]
    assert all(60 < firsts.count(i) < 140 for i in range(4))  # each option first about a quarter of the time


def test_letters_follow_the_order_shown():
    assert lettered(["c", "a", "b"]) == {"c": "A. c", "a": "B. a", "b": "C. b"}


def test_zero_and_the_wrong_sign_are_handled():
    assert judge(NUMBER, 0, 0).right
    assert not judge(NUMBER, 0, 5).right and not judge(NUMBER, 5, 0).right
    assert not judge(NUMBER, -5, 5).right


def test_a_context_is_a_short_stable_digest_of_what_it_was_made_on():
    a, b = fingerprint("the cat sat", 0, 1), fingerprint("the cat sat", 0, 2)
    assert a == fingerprint("the cat sat", 0, 1) and a != b and len(a) == 16
    assert len(fingerprint("x" * 100_000)) == 16


def _word_and_long_label_page():
    import streamlit as st

    from ui.frame.predict import Option, Prediction, Verdict, predict_then_see

    word = Prediction("demo", "word", "Which word?", word=True)
    label = "an option label well over forty characters long, as a lesson may write"
    long = Prediction("demo", "long", "Which?", (Option(label), Option("b", "the idea behind b")))
    predict_then_see(
        word,
        "ctx",
        answer=lambda: "cat",
        reveal=lambda a: st.markdown(f"the answer is {a}"),
        score=lambda g, a: Verdict(g == a, f"you typed {g}", ""),
    )
    predict_then_see(long, "ctx", answer=lambda: 0, reveal=lambda _: st.markdown("the long one, revealed"))


def test_a_typed_word_and_a_long_option_label_are_committed():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_word_and_long_label_page).run()
    at.text_input(key="_predict_guess_demo-word").input("  cat  ")
    at.radio(key="_predict_sure_demo-word").set_value("sure")
    at.button(key="_predict_commit_demo-word").click().run()
    assert not at.exception
    assert "you typed cat" in [s.value for s in at.success]  # trimmed, and scored by the page's own score
    long_label = "an option label well over forty characters long, as a lesson may write"
    assert at.radio(key="_predict_guess_demo-long").options in (
        [f"A. {long_label}", "B. b"],
        ["A. b", f"B. {long_label}"],
    )  # lettered in the order shown
    at.radio(key="_predict_guess_demo-long").set_value(long_label)
    at.radio(key="_predict_sure_demo-long").set_value("a guess")
    at.button(key="_predict_commit_demo-long").click().run()
    assert not at.exception  # the label is matched whole, not cut to a typed word's 40 characters
    assert "Right." in [s.value for s in at.success] and "the long one, revealed" in [m.value for m in at.markdown]
