"""Predict, then see: a lesson asks the student to commit to a prediction before the live model answers.

Students who commit to a prediction before a demonstration learn markedly more from it than those who
only watch (Crouch et al. 2004). So a lesson section asks first:

- the question lives in `st.container(key="predict-<lesson>-<name>")`, its answer in
  `st.container(key="reveal-<lesson>-<name>")`;
- until the student commits (or asks to skip), the answer is not computed and the reveal is not drawn:
  neither its numbers nor its chart reach the browser;
- a commit belongs to the sentence and settings it was made on (`context`): change either and the
  question is asked again, on the new input;
- the reveal scores the guess (right or wrong; for a number, how far off it was), names the misconception
  behind a wrong choice, and shows the model's answer with the chart that proves it;
- a choice's options are shown in an order drawn once per visit and question (stable across reruns),
  lettered in that order, so "the second one" is never the answer by habit;
- before the commit the student says how sure they are: a confident miss is the one best remembered once
  corrected (Butterfield & Metcalfe 2001), so the record keeps it and the review brings it back first;
- a number is right within a tolerance narrower than the distance to every named misconception's value
  (its `traps`), so the wrong idea the question is there to catch is never scored as right.

Nothing here reads the URL: a link cannot claim that a prediction was committed.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import streamlit as st

from classroom.learners import Event

from . import learner
from .modes import lecture_mode
from .sections import current_section_index, rerun_whole_page

MAX_WORD = 40  # characters of a typed word kept
STATE_KEY = "_predictions"  # {question key: Commit}: what this visit committed, per question
LOG_KEY = "_predictions_log"  # {question key + context: Logged}: the panel and the review
ORDER_SEED_KEY = "_predictions_order_seed"  # drawn once per visit: the options' order per question
CONFIDENCE = ("sure", "a guess")
REVIEW_STEP = 2  # the quiz page's "Review what I missed" section (pages/quiz.py lists it third)
REVIEW_LINK = {"step": str(REVIEW_STEP)}
LETTERS = "ABCDEFGHIJ"


@dataclass(frozen=True)
class Option:
    label: str
    misconception: str = ""  # the wrong idea behind choosing this option when it is wrong


@dataclass(frozen=True)
class Trap:
    """A named misconception's own value for a number question: what a student holding it would type."""

    value: float
    misconception: str


@dataclass(frozen=True)
class Prediction:
    lesson: str
    name: str
    prompt: str
    options: tuple[Option, ...] = ()  # a choice; none: the student types a number (or a word: `word=True`)
    word: bool = False  # the student types a word; the page passes predict_then_see a `score` for it
    concept: str = ""  # the quiz generator (its name) that practises this idea: the review asks it anew
    idea: str = ""  # the idea, named as that generator names it (`@generator(lesson, idea=...)`): a test compares
    tolerance: float = 0.25  # a number within this share of the answer counts as right (0.25: within 25 %) ...
    traps: tuple[Trap, ...] = ()  # ... narrowed so that each of these values is judged wrong
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
    sure: bool | None = None  # the student said "sure" (True) or "a guess" (False); None: skipped


@dataclass(frozen=True)
class Verdict:
    right: bool
    said: str  # one sentence that scores the guess
    misconception: str  # the wrong idea behind it ("" when right)
    counted: bool = True  # False: no model can call this guess wrong (a word of the student's own), not a miss


@dataclass(frozen=True)
class Logged:
    """One committed (or skipped) prediction, as the sidebar's record and the review read it."""

    lesson: str
    concept: str
    right: bool | None  # None: skipped, or a guess no model can mark wrong
    sure: bool | None = None

    @property
    def confident_miss(self) -> bool:
        return self.right is False and self.sure is True


def judge(q: Prediction, guess: int | float, answer: int | float) -> Verdict:
    """Score a committed guess against the model's answer."""
    if not q.numeric:
        right = int(guess) == int(answer)
        said = "Right." if right else f"Not quite: the model says “{q.options[int(answer)].label}”."
        return Verdict(right, said, "" if right else q.options[int(guess)].misconception)
    return judge_number(q, float(guess), float(answer))


def tolerance_for(q: Prediction, answer: float) -> float:
    """The share of the answer within which a guess is right: q.tolerance, narrowed to half the way to the
    nearest trap, so that a student who holds a named misconception is never scored as right."""
    gaps = [abs(t.value / answer - 1) for t in q.traps if answer and t.value != answer]
    return min([q.tolerance, *(g / 2 for g in gaps)])


def percent(share: float) -> str:
    return f"{share * 100:.0f} %" if share >= 0.01 else f"{share * 100:.1g} %"


def judge_number(q: Prediction, guess: float, answer: float) -> Verdict:
    """A number is right within tolerance_for(q, answer) of the model's; a wrong one names the trap it
    lands on (within the same share of that trap's value), or else how far off it is and which way."""
    if answer == 0 or guess == 0:
        right = guess == answer
        said = "Right: exactly 0." if right else f"Not quite: the model's value is {answer:.3g}."
        return Verdict(right, said, "" if right else (q.too_high if guess > answer else q.too_low))
    if (guess > 0) != (answer > 0):
        return Verdict(False, f"Not quite: the model's value is {answer:.3g}, of the other sign.", q.too_low)
    tolerance = tolerance_for(q, answer)
    off = guess / answer - 1
    if abs(off) <= tolerance:
        return Verdict(True, f"Right: within {percent(tolerance)} of the model's {answer:.3g}.", "")
    ratio = guess / answer
    times = max(ratio, 1 / ratio)
    if times >= 2:
        times_text = f"{times:,.0f}" if times >= 10 else f"{times:.1f}"
        far = f"about {times_text} times {'too large' if ratio > 1 else 'too small'}"
    else:
        far = f"{percent(abs(off))} {'too large' if ratio > 1 else 'too small'}"
    said = f"Not quite: {far} (the model's value is {answer:.3g}; right is within {percent(tolerance)})."
    trap = next((t for t in q.traps if t.value and abs(guess / t.value - 1) <= tolerance), None)
    misconception = trap.misconception if trap else (q.too_high if ratio > 1 else q.too_low)
    return Verdict(False, said, misconception)


def option_order(q: Prediction) -> list[int]:
    """The order q's options are shown in on this visit: drawn once per visit and question, the same on
    every rerun, so the right option's place is never a habit to learn."""
    seed = st.session_state.setdefault(ORDER_SEED_KEY, secrets.randbits(32))
    return shuffled(len(q.options), f"{seed}-{q.key}")


def shuffled(n: int, seed: str) -> list[int]:
    """A permutation of range(n) drawn from seed (any string: a visit's, or a class-room round's)."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return order


def lettered(labels: list[str]) -> dict[str, str]:
    """{label: "A. label"} for labels in the order shown: the letters follow the displayed order."""
    return {label: f"{LETTERS[i]}. {label}" for i, label in enumerate(labels)}


def fingerprint(*parts: object) -> str:
    """A short, stable digest of what a prediction was made on (a long sentence need not be stored)."""
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:16]


def _commits() -> dict[str, Commit]:
    return st.session_state.setdefault(STATE_KEY, {})


def _choice_key(q: Prediction) -> str:
    return f"_predict_guess_{q.key}"


def _sure_key(q: Prediction) -> str:
    return f"_predict_sure_{q.key}"


def _commit(q: Prediction, context: str, skip: bool) -> None:
    """Button callback: keep the guess (or the skip) for this context. A second click changes nothing."""
    commits = _commits()
    if q.key in commits and commits[q.key].context == context:
        return
    guess = None if skip else st.session_state.get(_choice_key(q))
    if q.word and isinstance(guess, str):  # a typed word (an option's label is kept whole)
        guess = guess.strip()[:MAX_WORD] or None
    sure = st.session_state.get(_sure_key(q))
    if not skip and (guess is None or sure is None):
        st.session_state[f"_predict_empty_{q.key}"] = "answer" if guess is None else "sure"
        return
    if q.options and guess is not None:  # the chosen label, as its option's index
        guess = next(i for i, o in enumerate(q.options) if o.label == guess)
    commits[q.key] = Commit(context, guess, None if skip else sure == CONFIDENCE[0])
    # the sidebar's record counts it, a skip too (the review offers it): the page, not the section, reruns
    rerun_whole_page()


def _ask(q: Prediction, context: str) -> None:
    if q.word:
        st.text_input(q.prompt, key=_choice_key(q), placeholder="one word", max_chars=MAX_WORD)
    elif q.numeric:
        st.number_input(q.prompt, value=None, placeholder="your guess", key=_choice_key(q), format="%g")
    else:
        labels = [q.options[i].label for i in option_order(q)]
        st.radio(q.prompt, labels, index=None, key=_choice_key(q), format_func=lettered(labels).get)
    st.radio("How sure are you?", CONFIDENCE, index=None, key=_sure_key(q), horizontal=True)
    missing = st.session_state.pop(f"_predict_empty_{q.key}", None)
    if missing == "answer":
        st.warning("Choose an answer first, or skip to see the model's.")
    elif missing == "sure":
        st.warning("Say how sure you are first: sure, or a guess.")
    buttons = (("Commit my prediction", "commit", "primary", False), ("Skip: just show me", "skip", "tertiary", True))
    for column, (label, name, kind, skip) in zip(st.columns([1, 1]), buttons):
        column.button(
            label, key=f"_predict_{name}_{q.key}", type=kind, on_click=_commit, args=(q, context, skip), width="stretch"
        )


def _said_guess(q: Prediction, guess: int | float | str) -> str:
    if q.word:
        return str(guess)
    return q.options[int(guess)].label if not q.numeric else f"{guess:g}"


def revealed(q: Prediction, context: str) -> bool:
    """Has the student committed (or skipped) q on this context? A page may lay out differently after it."""
    commit = _commits().get(q.key)
    return commit is not None and commit.context == context


def predict_then_see(
    q: Prediction,
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
            _log(q, context, verdict.right if verdict.counted else None, commit.sure)
            (st.success if verdict.right or not verdict.counted else st.error)(verdict.said)
            if not verdict.right and verdict.counted and commit.sure:
                st.markdown("**One to remember:** you were sure, and the model says otherwise.")
            if verdict.misconception:
                st.markdown(f"**The idea behind that guess:** {verdict.misconception}")
        else:
            _log(q, context, None, None)
            if q.options:
                st.info(f"The model's answer: **{q.options[int(value)].label}**.")
            elif q.numeric:
                st.info(f"The model's value: **{value:.3g}**.")
        reveal(value)


def _log(q: Prediction, context: str, right: bool | None, sure: bool | None) -> None:
    """This visit's record (the sidebar), and once per commit the learner's own record (kept across visits)."""
    log, key = st.session_state.setdefault(LOG_KEY, {}), f"{q.key}@{context}"
    if key in log:
        return
    log[key] = Logged(q.lesson, q.concept, right, sure)
    if q.concept:
        learner.record(Event("prediction", q.lesson, q.concept, key, right, sure, current_section_index()))


def visit_record() -> dict[str, tuple[int, int]]:
    """{lesson: (right, answered)} over this visit's committed predictions (skips not counted)."""
    out: dict[str, tuple[int, int]] = {}
    for entry in st.session_state.get(LOG_KEY, {}).values():
        if entry.right is None:
            continue
        r, n = out.get(entry.lesson, (0, 0))
        out[entry.lesson] = (r + entry.right, n + 1)
    return out


def review_items() -> list[tuple[str, str]]:
    """(concept, why) to practise: confident misses first, then other misses, then skipped predictions;
    within each, in the order first met. A concept is listed once, under its first tier."""
    entries = list(st.session_state.get(LOG_KEY, {}).values())
    tiers = (
        ("confident", [e for e in entries if e.confident_miss]),
        ("missed", [e for e in entries if e.right is False]),
        ("skipped", [e for e in entries if e.right is None and e.sure is None]),
    )
    seen: dict[str, str] = {}
    for why, tier in tiers:
        for e in tier:
            if e.concept and e.concept not in seen:
                seen[e.concept] = why
    return list(seen.items())


def review_concepts() -> list[str]:
    return [concept for concept, _ in review_items()]


def missed_concepts() -> list[str]:
    """The concepts of the predictions this visit got wrong, confident misses first."""
    return [concept for concept, why in review_items() if why != "skipped"]
