"""Predict, then see: a lesson asks the student to commit to a prediction before the live model answers.

Students who commit to a prediction before a demonstration learn markedly more from it than those who
only watch (Crouch et al. 2004). So a lesson section asks first:

- the question lives in `st.container(key="predict-<lesson>-<name>")`, its answer in
  `st.container(key="reveal-<lesson>-<name>")`;
- until the student commits (or asks to skip), the answer is not computed and the reveal is not drawn:
  neither its numbers nor its chart reach the browser;
- a commit belongs to the sentence and settings it was made on (`context`): change either and the
  question is asked again, on the new input;
- the reveal scores the guess (right or wrong; for a number, how many times too large or too small),
  names the misconception behind a wrong choice, and shows the model's answer with the chart that proves it.

Nothing here reads the URL: a link cannot claim that a prediction was committed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import streamlit as st

from .modes import lecture_mode
from .sections import rerun_whole_page

MAX_WORD = 40  # characters of a typed word kept
STATE_KEY = "_predictions"  # {question key: Commit}: what this visit committed, per question
LOG_KEY = "_predictions_log"  # {question key + context: (lesson, concept, right)}: the panel and the review


@dataclass(frozen=True)
class Option:
    label: str
    misconception: str = ""  # the wrong idea behind choosing this option when it is wrong


@dataclass(frozen=True)
class Question:
    lesson: str
    name: str
    prompt: str
    options: tuple[Option, ...] = ()  # a choice; none: the student types a number (or a word: `word=True`)
    word: bool = False  # the student types a word; the page passes predict_then_see a `score` for it
    concept: str = ""  # what a wrong answer says the student should practise (the quiz's generator prefix)
    factor: float = 2.0  # a number within this factor of the answer counts as right
    too_high: str = ""  # for a number: the misconception behind a guess far too large
    too_low: str = ""  # ... and far too small

    @property
    def key(self) -> str:
        return f"{self.lesson}-{self.name}"

    @property
    def numeric(self) -> bool:
        return not self.options and not self.word


@dataclass(frozen=True)
class Commit:
    context: str  # fingerprint of the sentence and settings the prediction was made on
    guess: int | float | str | None  # option index, number or word; None: skipped


@dataclass(frozen=True)
class Verdict:
    right: bool
    said: str  # one sentence that scores the guess
    misconception: str  # the wrong idea behind it ("" when right)


def judge(q: Question, guess: int | float, answer: int | float) -> Verdict:
    """Score a committed guess against the model's answer."""
    if not q.numeric:
        right = int(guess) == int(answer)
        said = "Right." if right else f"Not quite: the model says “{q.options[int(answer)].label}”."
        return Verdict(right, said, "" if right else q.options[int(guess)].misconception)
    return judge_number(q, float(guess), float(answer))


def judge_number(q: Question, guess: float, answer: float) -> Verdict:
    """A number is scored on a log scale: how many times too large or too small it was."""
    if answer == 0 or guess == 0:
        right = guess == answer
        said = "Right: exactly 0." if right else f"Not quite: the model's value is {answer:.3g}."
        return Verdict(right, said, "" if right else (q.too_high if guess > answer else q.too_low))
    if (guess > 0) != (answer > 0):
        return Verdict(False, f"Not quite: the model's value is {answer:.3g}, of the other sign.", q.too_low)
    ratio = guess / answer
    right = 1 / q.factor <= ratio <= q.factor
    times = max(ratio, 1 / ratio)
    times_text = f"{times:,.0f}" if times >= 10 else f"{times:.1f}"
    if right:
        said = f"Right: within a factor of {times_text} of the model's {answer:.3g}."
        return Verdict(True, said, "")
    direction = "too large" if ratio > 1 else "too small"
    said = f"Not quite: about {times_text} times {direction} (the model's value is {answer:.3g})."
    return Verdict(False, said, q.too_high if ratio > 1 else q.too_low)


def fingerprint(*parts: object) -> str:
    """A short, stable digest of what a prediction was made on (a long sentence need not be stored)."""
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]


def _commits() -> dict[str, Commit]:
    return st.session_state.setdefault(STATE_KEY, {})


def _choice_key(q: Question) -> str:
    return f"_predict_guess_{q.key}"


def _commit(q: Question, context: str, skip: bool) -> None:
    """Button callback: keep the guess (or the skip) for this context. A second click changes nothing."""
    commits = _commits()
    if q.key in commits and commits[q.key].context == context:
        return
    guess = None if skip else st.session_state.get(_choice_key(q))
    if q.word and isinstance(guess, str):  # a typed word (an option's label is kept whole)
        guess = guess.strip()[:MAX_WORD] or None
    if guess is None and not skip:
        st.session_state[f"_predict_empty_{q.key}"] = True
        return
    if q.options and guess is not None:  # the chosen label, as its option's index
        guess = next(i for i, o in enumerate(q.options) if o.label == guess)
    commits[q.key] = Commit(context, guess)
    if guess is not None:  # the sidebar's record of predictions counts it: the page, not the section, reruns
        rerun_whole_page()


def _ask(q: Question, context: str) -> None:
    if q.word:
        st.text_input(q.prompt, key=_choice_key(q), placeholder="one word", max_chars=MAX_WORD)
    elif q.numeric:
        st.number_input(q.prompt, value=None, placeholder="your guess", key=_choice_key(q), format="%g")
    else:
        st.radio(q.prompt, [o.label for o in q.options], index=None, key=_choice_key(q))
    if st.session_state.pop(f"_predict_empty_{q.key}", False):
        st.warning("Choose an answer first, or skip to see the model's.")
    buttons = (("Commit my prediction", "commit", "primary", False), ("Skip: just show me", "skip", "tertiary", True))
    for column, (label, name, kind, skip) in zip(st.columns([1, 1]), buttons):
        column.button(
            label, key=f"_predict_{name}_{q.key}", type=kind, on_click=_commit, args=(q, context, skip), width="stretch"
        )


def _said_guess(q: Question, guess: int | float | str) -> str:
    if q.word:
        return str(guess)
    return q.options[int(guess)].label if not q.numeric else f"{guess:g}"


def revealed(q: Question, context: str) -> bool:
    """Has the student committed (or skipped) q on this context? A page may lay out differently after it."""
    commit = _commits().get(q.key)
    return commit is not None and commit.context == context


def predict_then_see(
    q: Question,
    context: str,
    answer: Callable[[], Any],
    reveal: Callable[[Any], None],
    score: Callable[[Any, Any], Verdict] | None = None,
) -> None:
    """Ask q; once the student commits or skips, compute the model's answer and reveal it.

    context: fingerprint(...) of the sentence and settings the answer depends on. answer(): the model's
    answer (an option index, or a number, or whatever `score` reads), computed only after the commit.
    reveal(answer): draws the chart and numbers that prove it, inside the reveal container.
    score(guess, answer): the Verdict on a guess; by default `judge` (options and numbers).
    """
    commit = _commits().get(q.key) if revealed(q, context) else None  # a new sentence or setting: ask again
    with st.container(key=f"predict-{q.key}", border=True):
        st.markdown("**Predict first**" + (" (the model answers once you commit)" if not lecture_mode() else ""))
        if commit is None:
            _ask(q, context)
            return
        st.markdown(
            f"{q.prompt}  \nYour prediction: **{_said_guess(q, commit.guess)}**"
            if commit.guess is not None
            else f"{q.prompt}  \nSkipped: the model's answer is below."
        )
    value = answer()
    with st.container(key=f"reveal-{q.key}"):
        if commit.guess is not None:
            verdict = (score or partial(judge, q))(commit.guess, value)
            _log(q, context, verdict.right)
            (st.success if verdict.right else st.error)(verdict.said)
            if verdict.misconception:
                st.markdown(f"**The idea behind that guess:** {verdict.misconception}")
        elif q.options:
            st.info(f"The model's answer: **{q.options[int(value)].label}**.")
        elif q.numeric:
            st.info(f"The model's value: **{value:.3g}**.")
        reveal(value)


def _log(q: Question, context: str, right: bool) -> None:
    st.session_state.setdefault(LOG_KEY, {})[f"{q.key}@{context}"] = (q.lesson, q.concept, right)


def visit_record() -> dict[str, tuple[int, int]]:
    """{lesson: (right, answered)} over this visit's committed predictions."""
    out: dict[str, tuple[int, int]] = {}
    for lesson, _, right in st.session_state.get(LOG_KEY, {}).values():
        r, n = out.get(lesson, (0, 0))
        out[lesson] = (r + right, n + 1)
    return out


def missed_concepts() -> list[str]:
    """The concepts of the predictions this visit got wrong, in the order first missed."""
    seen: list[str] = []
    for _, concept, right in st.session_state.get(LOG_KEY, {}).values():
        if not right and concept and concept not in seen:
            seen.append(concept)
    return seen


def predictions_panel() -> None:
    """The sidebar's record of this visit's predictions: right / answered, per lesson."""
    record = visit_record()
    if not record:
        return
    from encoder_core.lessons import LESSON_TITLES

    st.markdown("**Your predictions this visit**")
    st.caption(
        " · ".join(f"{LESSON_TITLES.get(lesson, lesson)}: {r} of {n} right" for lesson, (r, n) in record.items())
    )
    if missed_concepts():
        # The quiz page's third section (step 2): new questions on the ideas missed.
        st.page_link("pages/quiz.py", label="Review what I missed", icon=":material/replay:", query_params={"step": 2})
