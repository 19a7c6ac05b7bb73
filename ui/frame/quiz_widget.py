"""The "Check yourself" widget: a question the model computed, graded on submit, scored per lesson.

Everything a student does here lives in st.session_state:
  _quiz_seed        the session's quiz number (also the `quiz_seed` link parameter on the Quiz page)
  _quiz_position    per widget (key_prefix): (quiz number, index of the question shown)
  _quiz_feedback    per widget: the last graded answer, shown until the next question
  _quiz_log         every counted answer, one row each (first answer per question only)
Question i of quiz s is encoder_core.quiz.question_for(lesson, s, i): the same link, the same questions.
"""

from __future__ import annotations

import math
import re
import secrets
from collections.abc import Callable
from datetime import datetime

import pandas as pd
import streamlit as st

from classroom.learners import Event
from encoder_core.lessons import LESSON_TITLES
from encoder_core.quiz import CHOICE_KINDS, LESSONS, Grade, Question, generators, grade, question_for
from ui.views.figures import attention_grid_chart

from . import learner
from .charts import show_chart, show_table
from .params import Param
from .sections import Section
from .state import show_notices

# Session-state keys (the module docstring says what each holds).
LINK_CHECKED_KEY = "_quiz_link_checked"
LINK_NOTICE_KEY = "_quiz_link_notice"
SESSION_SEED_KEY = "_quiz_seed"
POSITIONS_KEY = "_quiz_position"
FEEDBACK_KEY = "_quiz_feedback"
LOG_KEY = "_quiz_log"
REVIEW_PREFIX = "review_"  # the quiz page's review questions: their answers are recorded as reviews
QUIZ_PAGE = "pages/quiz.py"
QUIZ_SUMMARY = "questions from every lesson, answered by the model itself"
MAX_QUIZ_SEED = 999_999
QUIZ_SEED = Param("quiz_seed", 0, "int", 0, MAX_QUIZ_SEED)
QUIZ_QUESTION = Param("question", 1, "int", 1, 10_000)  # the Quiz page's question number, 1-based as shown
LOG_COLUMNS = ["time", "lesson", "question id", "question", "your answer", "correct answer", "result", "likely slip"]
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def escape_md(text: object) -> str:
    """Show text literally in st.markdown: every markdown/HTML-significant character backslash-escaped."""
    return _MD_SPECIAL.sub(r"\\\1", str(text)).replace("\n", "  \n")


def fresh_quiz_seed() -> int:
    return secrets.randbelow(MAX_QUIZ_SEED) + 1  # never 0: 0 is the default quiz, left out of links


def repair_link_seed() -> None:
    """Call before ui.frame.sections.start on the Quiz page: a quiz_seed in the link that is not a number at all is
    replaced by a fresh quiz number, written back to the link (so it reproduces), with a notice.
    Numbers out of range or with decimals are left to QUIZ_SEED.parse, which clamps or rounds them."""
    if not st.session_state.get(LINK_CHECKED_KEY):
        st.session_state[LINK_CHECKED_KEY] = True
        raw = st.query_params.get(QUIZ_SEED.name)
        if raw is not None and not _is_number(raw):
            fresh = fresh_quiz_seed()
            st.query_params[QUIZ_SEED.name] = str(fresh)
            shown = "".join(ch if ch.isprintable() and ch != "`" else "?" for ch in raw[:24])
            shown += "..." if len(raw) > 24 else ""
            st.session_state[LINK_NOTICE_KEY] = (
                f"`quiz_seed={shown}` is not a quiz number, so a new quiz ({fresh}) was started; "
                "the link in the address bar now opens this same quiz."
            )
    if SESSION_SEED_KEY in st.session_state and QUIZ_SEED.key not in st.session_state:
        st.session_state[QUIZ_SEED.key] = st.session_state[SESSION_SEED_KEY]  # coming back from another page
    notice = st.session_state.get(LINK_NOTICE_KEY)
    if notice:
        show_notices([notice])


def _is_number(raw: str) -> bool:
    try:
        return math.isfinite(float(str(raw).strip()))
    except ValueError:
        return False


def new_quiz() -> None:
    """Button callback: a fresh quiz number (the widget keyed quiz_seed shows it, the link follows)."""
    st.session_state[QUIZ_SEED.key] = fresh_quiz_seed()


def current_quiz_seed() -> int:
    """The quiz number in force: the Quiz page's control if it ran, else the session's, else the link's, else 0."""
    if QUIZ_SEED.key in st.session_state:
        seed = QUIZ_SEED.clamp(int(st.session_state[QUIZ_SEED.key]))
    elif SESSION_SEED_KEY in st.session_state:
        seed = st.session_state[SESSION_SEED_KEY]
    else:
        raw = st.query_params.get(QUIZ_SEED.name)
        seed = QUIZ_SEED.parse(raw)[0] if raw is not None and _is_number(raw) else QUIZ_SEED.default
    st.session_state[SESSION_SEED_KEY] = seed
    return seed


def answer_key(prefix: str, question: Question) -> str:
    """The answer widget's key: one per question, so a new question starts with an empty answer."""
    return f"{prefix}_answer_{question.id}"


def _position(prefix: str, quiz_seed: int, question_key: str | None = None) -> int:
    """The index of the question shown. With question_key, the session-state key of a 1-based
    question number that the page keeps in its link, that number decides (a lecturer's link opens
    a given question) and follows the student's moves."""
    positions = st.session_state.setdefault(POSITIONS_KEY, {})
    linked = int(st.session_state.get(question_key, 1)) - 1 if question_key else 0
    seed, index = positions.get(prefix, (quiz_seed, linked))
    if seed != quiz_seed:  # another quiz: start it from its first question
        index = 0
        st.session_state.setdefault(FEEDBACK_KEY, {}).pop(prefix, None)
    elif question_key:
        index = linked
    positions[prefix] = (quiz_seed, index)
    if question_key:
        st.session_state[question_key] = index + 1
    return index


def _next_question(prefix: str, question_key: str | None = None) -> None:
    positions = st.session_state.setdefault(POSITIONS_KEY, {})
    seed, index = positions[prefix]
    positions[prefix] = (seed, index + 1)
    if question_key:
        st.session_state[question_key] = index + 2
    st.session_state.setdefault(FEEDBACK_KEY, {}).pop(prefix, None)


# A class room's hook: (question index, question, response, grade) -> a line saying what became of the answer.
OnAnswer = Callable[[int, Question, object, Grade], str]


def _submit(prefix: str, question: Question, index: int = 0, on_answer: OnAnswer | None = None) -> None:
    response = st.session_state.get(answer_key(prefix, question))
    g = grade(question, response)
    feedback = {"id": question.id, "correct": g.correct, "valid": g.valid, "message": g.message, "counted": False}
    if g.valid and on_answer is not None:
        feedback["room"] = on_answer(index, question, response, g)
    if g.valid:
        log = st.session_state.setdefault(LOG_KEY, [])
        if not any(row["question id"] == question.id for row in log):  # the first answer is the one that counts
            feedback["counted"] = True
            kind = "review" if prefix.startswith(REVIEW_PREFIX) else "quiz"
            generator = question.id.split(":", 1)[0]  # the question's id is "<generator>:<seed>"
            learner.record(Event(kind, question.lesson, generator, question.id, bool(g.correct)))
            log.append(
                {
                    "time": datetime.now().isoformat(timespec="seconds"),
                    "lesson": question.lesson,
                    "question id": question.id,
                    "question": question.prompt,
                    "your answer": str(response),
                    "correct answer": question.answer_text,
                    "result": "right" if g.correct else "wrong",
                    # the known mistake a wrong answer matched: what a lecturer looks for in the CSV
                    "likely slip": g.mistake.diagnosis if g.mistake else "",
                }
            )
    st.session_state.setdefault(FEEDBACK_KEY, {})[prefix] = feedback


def results_log() -> list[dict]:
    return list(st.session_state.get(LOG_KEY, []))


def scores() -> pd.DataFrame:
    """Counted answers per lesson this session: answered, right, percentage."""
    log = results_log()
    rows = []
    for lesson in LESSONS:
        done = [row for row in log if row["lesson"] == lesson]
        right = sum(row["result"] == "right" for row in done)
        rows.append(
            {
                "lesson": LESSON_TITLES[lesson],
                "answered": len(done),
                "right": right,
                "score": f"{100 * right / len(done):.0f}%" if done else "–",
            }
        )
    return pd.DataFrame(rows)


def _safe_cell(value: object) -> object:
    """A spreadsheet would run a typed answer starting with = + @ as a formula: make it plain text."""
    if isinstance(value, str) and value[:1] in ("=", "+", "@", "\t", "\r", "-") and not _is_number(value):
        return "'" + value
    return value


def results_csv() -> str:
    frame = pd.DataFrame(results_log(), columns=LOG_COLUMNS)
    return frame.map(_safe_cell).to_csv(index=False)


def results_download(key: str) -> None:
    st.download_button(
        "Download my results (CSV)",
        data=results_csv,
        file_name="encoder-lab-quiz-results.csv",
        mime="text/csv",
        key=key,
        on_click="ignore",
        disabled=not results_log(),
    )


def _figure(question: Question, prefix: str) -> None:
    f = question.figure
    chart = attention_grid_chart(f.weights, f.query_tokens, f.key_tokens, title=f.title, alt=f.alt)
    show_chart(chart, f"{prefix}_figure")


def _score_line(lesson: str | None) -> str:
    log = results_log()
    done = [row for row in log if lesson is None or row["lesson"] == lesson]
    right = sum(row["result"] == "right" for row in done)
    where = "in all lessons" if lesson is None else f"in {LESSON_TITLES[lesson]}"
    return f"Your score this session {where}: {right} of {len(done)} right."


def review_question(generator_name: str, seed: int) -> Question:
    """A fresh question from one generator (a concept a student missed), on new numbers and sentences."""
    by_name = {g.__name__: g for g in generators()}
    return by_name[generator_name](seed)


def check_yourself(
    lesson: str | None,
    *,
    key_prefix: str | None = None,
    title: str | None = "Check yourself",
    question_key: str | None = None,
    on_answer: OnAnswer | None = None,
    concept: str | None = None,
    review_seed: int | None = None,
) -> None:
    """Render one self-check question for a lesson (None: all lessons mixed), its grading and the score.

    key_prefix keeps two widgets on one page apart (default: quiz_<lesson>). concept: a generator's name,
    to draw only from it (the quiz page's review), from review_seed on when given. The question follows the
    session's quiz number, so the same link gives everyone the same questions; question_key (see
    _position) puts the question's number in the link too. on_answer receives every graded answer
    (a class room sends it on) and its line is shown with the feedback.
    """
    if lesson is not None and lesson not in LESSONS:
        raise ValueError(f"unknown lesson {lesson!r}; choose one of {LESSONS}")
    prefix = key_prefix or f"quiz_{lesson or 'all'}"
    seed = current_quiz_seed()
    index = _position(prefix, seed, question_key)
    # A concept (a generator's name) draws from that generator only: a review of what was missed.
    if concept:  # a review: from review_seed (a question the learner has not seen), else from the quiz number
        question = review_question(concept, (review_seed if review_seed is not None else seed * 1_000) + index)
    else:
        question = question_for(lesson, seed, index)

    if title:
        st.subheader(title)
    st.caption(f"Question {index + 1} · {LESSON_TITLES[question.lesson]} · quiz number {seed}")
    st.markdown(escape_md(question.prompt))
    if question.table is not None:
        columns, rows = question.table
        show_table(pd.DataFrame(list(rows), columns=list(columns)), hide_index=True)
    if question.figure is not None and question.figure.in_prompt:
        _figure(question, prefix)

    key = answer_key(prefix, question)
    with st.form(f"{prefix}_form", border=False):
        if question.kind in CHOICE_KINDS:
            st.radio("Your answer", question.choices, index=None, key=key, format_func=escape_md)
        else:
            hint = "a number" if question.kind == "numeric" else "e.g. (2, 3, 4)"
            st.text_input("Your answer", key=key, placeholder=hint, max_chars=200)
        # A callback, not the button's return value: it runs before the next script run, so the
        # answer is recorded even if that run is restarted.
        st.form_submit_button(
            "Submit",
            key=f"{prefix}_submit",
            type="primary",
            on_click=_submit,
            args=(prefix, question, index, on_answer),
        )

    feedback = st.session_state.get(FEEDBACK_KEY, {}).get(prefix)
    if feedback and feedback["id"] == question.id:
        _show_feedback(question, feedback, prefix)

    st.button("New question", key=f"{prefix}_next", on_click=_next_question, args=(prefix, question_key))
    st.caption(_score_line(lesson))
    with st.expander("Your answers this session"):
        log = results_log()
        if log:
            show_table(pd.DataFrame(log, columns=LOG_COLUMNS), hide_index=True)
        else:
            st.caption("Nothing answered yet.")
        results_download(f"{prefix}_csv")


def _show_feedback(question: Question, feedback: dict, prefix: str) -> None:
    if not feedback["valid"]:
        st.warning(escape_md(feedback["message"]))
        return
    (st.success if feedback["correct"] else st.error)(escape_md(feedback["message"]))
    if feedback.get("room"):
        st.info(escape_md(feedback["room"]), icon=":material/groups:")
    if not feedback["counted"]:
        st.info("You had already answered this question: only your first answer counts towards the score.")
    st.markdown("**Why:** " + escape_md(question.explanation))
    if question.figure is not None and not question.figure.in_prompt:
        _figure(question, prefix)


__all__ = [
    "QUIZ_QUESTION",
    "QUIZ_SEED",
    "answer_key",
    "check_yourself",
    "current_quiz_seed",
    "escape_md",
    "new_quiz",
    "repair_link_seed",
    "results_csv",
    "results_download",
    "scores",
]


def check_yourself_section(lesson: str) -> Section:
    """The last section of every lesson: one question from that lesson's generators."""
    return Section(
        "Check yourself",
        "A question generated from the model itself: its answer is computed, not typed in.",
        lambda: check_yourself(lesson, title=None),
    )
