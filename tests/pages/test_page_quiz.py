"""AppTests of the Quiz page and the check_yourself widget: grading, score, double submit, links."""

from __future__ import annotations

import apptest_helpers as helpers
import pytest
from apptest_helpers import all_text, no_exception
from streamlit.testing.v1 import AppTest

from encoder_core.lessons import LESSON_TITLES
from encoder_core.quiz import CHOICE_KINDS, Question, generators, question_for
from encoder_core.quiz.base import format_number
from ui.frame.predict import LOG_KEY, REVIEW_LINK, Logged
from ui.frame.quiz_widget import escape_md

pytestmark = pytest.mark.slow

PREFIX = "quiz_page"
BY_NAME = {g.__name__: g for g in generators()}


def open_quiz(query: dict | None = None) -> AppTest:
    return helpers.open_linked("quiz", query)


def shown_question(at: AppTest):
    """The question on the page, rebuilt from its answer widget's key (which carries the question id)."""
    widgets = [w for w in (*at.text_input, *at.radio) if str(w.key).startswith(f"{PREFIX}_answer_")]
    assert len(widgets) == 1
    widget = widgets[0]
    name, seed = str(widget.key).removeprefix(f"{PREFIX}_answer_").split(":")
    return BY_NAME[name](int(seed)), widget


def answer(at: AppTest, response: str) -> AppTest:
    question, widget = shown_question(at)
    if question.kind in CHOICE_KINDS:
        widget.set_value(response)
    else:
        widget.input(response)
    return at.button(key=f"{PREFIX}_submit").click().run()


def wrong_response(q: Question) -> str:
    if q.kind in CHOICE_KINDS:
        return next(c for c in q.choices if c != q.answer)
    if q.kind == "numeric":
        return str(float(q.answer) + 10 * q.tolerance + 7)
    return "(1, 1, 1, 1, 1)"


def score_line(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Your score this session"))


def first_seed_where(predicate) -> int:
    return next(s for s in range(1, 500) if predicate(question_for(None, s, 0)))


def test_right_then_wrong_answer_gives_feedback_and_score():
    at = open_quiz({"quiz_seed": "11"})
    no_exception(at)
    q, _ = shown_question(at)
    assert q.id == question_for(None, 11, 0).id
    assert escape_md(q.prompt) in [m.value for m in at.markdown]

    at = answer(at, q.answer_text if q.kind == "numeric" else q.answer)
    no_exception(at)
    assert at.success and "Right" in at.success[0].value
    assert any("Why:" in m.value for m in at.markdown)
    assert score_line(at).endswith("1 of 1 right.")

    at = at.button(key=f"{PREFIX}_next").click().run()
    q2, _ = shown_question(at)
    assert q2.id == question_for(None, 11, 1).id and q2.id != q.id
    assert not at.success and not at.error  # the old feedback is gone with the old question

    at = answer(at, wrong_response(q2))
    no_exception(at)
    assert at.error and "Not quite" in at.error[0].value
    assert escape_md(q2.answer_text) in at.error[0].value  # the correct answer is given
    assert score_line(at).endswith("1 of 2 right.")

    (table,) = [d.value for d in at.dataframe if "answered" in d.value.columns]  # the per-lesson score table
    table = table.set_index("lesson")
    assert table["answered"].sum() == 2 and table["right"].sum() == 1
    titles = LESSON_TITLES  # every lesson, those added later too
    for question, right in ((q, 1), (q2, 0)):
        assert table.loc[titles[question.lesson], "right"] >= right


def test_non_numeric_answer_asks_for_a_number():
    seed = first_seed_where(lambda q: q.kind == "numeric")
    at = open_quiz({"quiz_seed": str(seed)})
    at = answer(at, "twelve <b>")
    no_exception(at)
    assert any("Please enter a number" in w.value for w in at.warning)
    assert score_line(at).endswith("0 of 0 right.")  # an unreadable answer is not counted


def test_a_question_answered_twice_counts_once():
    at = open_quiz({"quiz_seed": "5"})
    q, _ = shown_question(at)
    right = q.answer_text if q.kind == "numeric" else q.answer
    at = answer(at, right)
    at = answer(at, wrong_response(q))  # a second try at the same question
    no_exception(at)
    assert score_line(at).endswith("1 of 1 right.")
    assert any("only your first answer counts" in i.value for i in at.info)


def test_invalid_quiz_seed_gives_a_notice_and_a_fresh_reproducible_quiz():
    at = open_quiz({"quiz_seed": "banana"})
    no_exception(at)
    assert "not a quiz number" in all_text(at)
    fresh = int(at.query_params["quiz_seed"])  # written back to the link, so the link reproduces the quiz
    assert fresh > 0 and any(c.value.endswith(f"quiz number {fresh}") for c in at.caption)
    q, _ = shown_question(at)
    assert q.id == question_for(None, fresh, 0).id


def test_the_same_quiz_seed_gives_the_same_question_in_fresh_sessions():
    prompts = []
    for _ in range(2):
        at = open_quiz({"quiz_seed": "4242"})
        no_exception(at)
        q, _ = shown_question(at)
        prompts.append(q.prompt)
        assert escape_md(q.prompt) in [m.value for m in at.markdown]
    assert prompts[0] == prompts[1] == question_for(None, 4242, 0).prompt


def lesson_widget_app():
    from ui.frame.quiz_widget import check_yourself

    check_yourself("masking")


def test_check_yourself_in_a_lesson_asks_that_lessons_questions():
    at = AppTest.from_function(lesson_widget_app, default_timeout=60).run()
    no_exception(at)
    assert any(c.value.startswith("Question 1 · Masked LM") for c in at.caption)
    keys = [str(w.key) for w in (*at.text_input, *at.radio)]
    assert len(keys) == 1 and keys[0].startswith("quiz_masking_answer_masking_")


def test_a_known_mistake_gets_its_diagnosis_on_the_page():
    seed = first_seed_where(lambda q: q.kind == "numeric" and q.mistakes)
    at = open_quiz({"quiz_seed": str(seed)})
    q, _ = shown_question(at)
    slip = q.mistakes[0]
    at = answer(at, format_number(float(slip.answer), q.tolerance, q.decimals))
    no_exception(at)
    assert at.error and escape_md(slip.diagnosis) in at.error[0].value
    assert escape_md(q.answer_text) in at.error[0].value


def test_a_link_opens_a_given_question_and_follows_the_student():
    at = open_quiz({"quiz_seed": "42", "question": "6"})
    no_exception(at)
    q, _ = shown_question(at)
    assert q.id == question_for(None, 42, 5).id  # question 6 of quiz 42: index 5
    assert any(c.value.startswith("Question 6 ·") for c in at.caption)
    at.button(key=f"{PREFIX}_next").click().run()
    assert shown_question(at)[0].id == question_for(None, 42, 6).id
    assert at.query_params["question"] == "7" and at.query_params["quiz_seed"] == "42"


def test_a_bad_question_number_in_a_link_gives_a_notice_and_a_valid_question():
    at = open_quiz({"quiz_seed": "42", "question": "0"})
    no_exception(at)
    assert shown_question(at)[0].id == question_for(None, 42, 0).id
    assert "`question=0`" in all_text(at)


# ---- review what I missed: the concepts of the predictions a student got wrong ----


def open_review(log: dict) -> AppTest:
    at = AppTest.from_file(helpers.APP, default_timeout=60)
    at.query_params.update(REVIEW_LINK)
    at.session_state[LOG_KEY] = log
    at.switch_page("pages/quiz.py")
    return at.run()


def review_asked(at: AppTest) -> list[str]:
    """The concepts the review asks about, in the order shown."""
    keys = [str(w.key) for w in (*at.text_input, *at.radio) if str(w.key).startswith("review_")]
    return list(dict.fromkeys(k.split("_answer_")[1].split(":")[0] for k in keys))


def test_the_review_link_lands_on_the_review_from_another_page():
    """The sidebar's "Review what I missed" is a link to the quiz with REVIEW_LINK, followed from a lesson."""
    at = AppTest.from_file(helpers.APP, default_timeout=60).run()  # a first page: the home page
    at.session_state[LOG_KEY] = {"attention-drop@a": Logged("attention", "attention_drop_last", False, sure=True)}
    at.query_params.clear()
    at.query_params.update(REVIEW_LINK)
    at.switch_page("pages/quiz.py").run()
    no_exception(at)
    assert review_asked(at) == ["attention_drop_last"] and "because you were sure" in all_text(at)


def test_review_asks_confident_misses_first_then_misses_then_skips_and_never_a_right_one():
    log = {
        "attention-drop@a": Logged("attention", "attention_drop_last", False, sure=False),
        "attention-rows@a": Logged("attention", "attention_identical_row", True, sure=True),  # right: not reviewed
        "padding-leak@b": Logged("padding", "padding_pad_weight", False, sure=True),  # sure and wrong: first
        "block-shape@c": Logged("block", "block_stage_shape", None),  # skipped: offered last
    }
    at = open_review(log)
    no_exception(at)
    assert sorted(review_asked(at)) == ["attention_drop_last", "block_stage_shape", "padding_pad_weight"]
    text = all_text(at)
    assert "3 ideas due" in text
    assert text.index("you were sure") < text.index("your prediction or answer missed") < text.index("you skipped")


def test_review_with_nothing_missed_says_how_it_fills():
    at = open_review({"attention-drop@a": Logged("attention", "attention_drop_last", True, sure=True)})
    no_exception(at)
    assert "Nothing to review just now" in all_text(at)
    assert not review_asked(at)
