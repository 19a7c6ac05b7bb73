"""A thousand rendered questions, read the way a demanding student reads them.

Punctuation, options, named mistakes and the sentences the questions are built on: every
lesson, many seeds. The generators run the models, so the questions are built once per module.
"""

from __future__ import annotations

import math
import re

import pytest

from encoder_core.data.lexicon import OBJECTS
from encoder_core.model.tokenizer import english_tokenizer
from encoder_core.quiz import CHOICE_KINDS, LESSONS, Question, generators, grade
from encoder_core.quiz.base import format_number, normalise
from encoder_core.quiz.sentences import sentence

N_QUESTIONS = 1000
# "they move..": two full stops (an ellipsis of three is meant), doubled or clashing marks, a space before one.
DOUBLED = re.compile(r"(?<!\.)\.\.(?!\.)|\.{4,}|,,|;;|::|!!|\?\?|[.;:,][;:,]|[;:,]\.|\s[,;:]|\s\.(?![.\d])|  ")
PLUS_MINUS = re.compile(r"\+ ?[-−]")


@pytest.fixture(scope="module")
def rendered() -> list[Question]:
    gens = generators()
    per_generator = math.ceil(N_QUESTIONS / len(gens))
    return [g(seed) for seed in range(per_generator) for g in gens]


def texts(q: Question) -> list[str]:
    return [q.prompt, q.explanation, *q.choices, *(m.diagnosis for m in q.mistakes)]


def test_a_thousand_questions_from_every_lesson(rendered):
    assert len(rendered) >= N_QUESTIONS
    assert {q.lesson for q in rendered} == set(LESSONS)


def test_no_doubled_punctuation_and_no_plus_minus(rendered):
    for q in rendered:
        for text in texts(q):
            assert not DOUBLED.search(text), f"{q.id}: {text!r}"
            assert not PLUS_MINUS.search(text), f"{q.id}: {text!r}"
            assert "(s)" not in text, f"{q.id}: {text!r}"


def test_options_are_complete_distinct_and_hold_the_answer(rendered):
    for q in rendered:
        if q.kind not in CHOICE_KINDS:
            assert not q.choices
            continue
        assert all(str(c).strip() for c in q.choices), q.id
        assert len({normalise(c) for c in q.choices}) == len(q.choices), q.id
        assert q.answer in q.choices, q.id


def test_position_questions_offer_every_position(rendered):
    for q in rendered:
        if q.kind == "token":  # "which key / query": the answer could be any position
            labels = [re.match(r"(\d+) ", c).group(1) for c in q.choices]
            assert labels == [str(i) for i in range(len(q.choices))], q.id


def response(q: Question, answer: float | str) -> str:
    return format_number(float(answer), q.tolerance, q.decimals) if q.kind == "numeric" else str(answer)


def test_every_named_mistake_is_wrong_and_diagnosed(rendered):
    named = 0
    for q in rendered:
        for m in q.mistakes:
            named += 1
            g = grade(q, response(q, m.answer))
            assert g.valid and not g.correct, f"{q.id}: mistake {m.answer!r} grades right"
            assert m.diagnosis in g.message, f"{q.id}: {g.message!r}"
            assert not DOUBLED.search(g.message), f"{q.id}: {g.message!r}"
            if q.kind in CHOICE_KINDS:
                assert m.answer in q.choices, q.id
    assert named >= 2 * len(rendered)  # two or three per question, on the whole


def test_grading_messages_read_cleanly(rendered):
    for q in rendered[:200]:
        right = grade(q, response(q, q.answer))
        assert right.correct and not DOUBLED.search(right.message), f"{q.id}: {right.message!r}"


def test_prompts_state_their_conventions(rendered):
    for q in rendered:
        if q.kind == "numeric":
            assert "whole number" in q.prompt or re.search(r"Give \d+ decimal places?; answers within ±", q.prompt)
        if re.search(r"'\d+ |\b(position|query|key|row|token) \d", q.prompt):
            assert "from 0" in q.prompt, f"{q.id}: positions are named but not how they are numbered"


# ---------------------------------------------------------------- the sentences the questions are built on

RESTING = {"sat", "slept", "rested", "stood", "waited"}
MOVING_PREPOSITIONS = {"to", "from", "into", "over"}
FOOD = {"apple", "bread", "cake"}
READABLE = {"book", "letter"}


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    import random

    r = random.Random(0)
    return [sentence(r, n) for n in range(1, 13) for _ in range(150)]


def test_every_sentence_word_is_one_token(sentences):
    vocab = english_tokenizer().token_to_id
    for s in sentences:
        assert all(w in vocab for w in s.split()), s


def test_sentences_pair_verbs_prepositions_and_objects_sensibly(sentences):
    for s in sentences:
        words = s.split()
        for verb, prep in zip(words, words[1:]):
            assert not (verb in RESTING and prep in MOVING_PREPOSITIONS), s  # not "rested into the kitchen"
        if s.endswith("all day"):
            assert not MOVING_PREPOSITIONS & set(words), s  # not "ran to the park all day"
        for i, verb in enumerate(words):
            obj = next((w for w in words[i + 2 : i + 4] if w in OBJECTS), None)  # "the [adjective] object"
            if verb == "ate":
                assert obj in FOOD, s
            if verb == "read":
                assert obj in READABLE, s
