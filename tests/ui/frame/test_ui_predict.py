"""ui.frame.predict's scoring, which every lesson's predictions share (pure: no page run here), and
one small AppTest of committing a typed word and a long option label."""

import pytest

from ui.frame.predict import Option, Question, fingerprint, judge

CHOICE = Question(
    "demo",
    "pick",
    "Which?",
    (Option("a", "the idea behind a"), Option("b"), Option("c", "the idea behind c")),
)
NUMBER = Question("demo", "count", "How many?", factor=2.0, too_high="counted too much", too_low="counted too little")


def test_a_right_choice_names_no_misconception():
    v = judge(CHOICE, 1, 1)
    assert v.right and v.said == "Right." and v.misconception == ""


@pytest.mark.parametrize("guess", [0, 2])
def test_a_wrong_choice_names_its_own_misconception_and_the_models_answer(guess):
    v = judge(CHOICE, guess, 1)
    assert not v.right and "“b”" in v.said
    assert v.misconception == CHOICE.options[guess].misconception


@pytest.mark.parametrize(("guess", "right"), [(100, True), (51, True), (199, True), (49, False), (201, False)])
def test_a_number_within_the_factor_is_right(guess, right):
    assert judge(NUMBER, guess, 100).right == right


def test_a_number_is_scored_on_a_log_scale_with_its_direction():
    high, low = judge(NUMBER, 1000, 10), judge(NUMBER, 1, 10)
    assert "100 times too large" in high.said and high.misconception == "counted too much"
    assert "10 times too small" in low.said and low.misconception == "counted too little"


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

    from ui.frame.predict import Option, Question, Verdict, predict_then_see

    word = Question("demo", "word", "Which word?", word=True)
    label = "an option label well over forty characters long, as a lesson may write"
    long = Question("demo", "long", "Which?", (Option(label), Option("b", "the idea behind b")))
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
    at.button(key="_predict_commit_demo-word").click().run()
    assert not at.exception
    assert "you typed cat" in [s.value for s in at.success]  # trimmed, and scored by the page's own score
    at.radio(key="_predict_guess_demo-long").set_value(at.radio(key="_predict_guess_demo-long").options[0])
    at.button(key="_predict_commit_demo-long").click().run()
    assert not at.exception  # the label is matched whole, not cut to a typed word's 40 characters
    assert "Right." in [s.value for s in at.success] and "the long one, revealed" in [m.value for m in at.markdown]
