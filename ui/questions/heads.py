"""The heads lesson's predictions: what the student is asked, and the wrong idea behind each wrong answer.

Each names the quiz generator that practises its idea (`concept`) and that idea (`idea`, as the generator's
@generator(..., idea=...) names it). A wrong option's text that quotes this input's numbers takes them from
encoder_core's result, and a test recomputes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

import streamlit as st

from encoder_core.lessons import heads as core
from encoder_core.lessons.heads import TopKeyChoice
from encoder_core.model.head_patterns import HeadLabel, head_label, label_heads
from ui.frame.predict import Option, Prediction, Trap, fingerprint, percent, revealed, tolerance_for
from ui.room.numbers import number_choice
from ui.room.registry import CannotAsk, Run, lesson_questions, run_key
from ui.views import heads as view

LESSON = "heads"

WEIGHT_COUNT_TOLERANCE = 0.02  # a count: within 2 %, so a token miscounted (T ± 1) is already wrong
# What a student holding each misconception of HeadMechanics.weight_count_traps would type, and why.
COUNT_TRAPS = {
    "layers": "That counts every layer: the question is about one layer, whose weights are H × T × T.",
    "width": "Attention weights are not per feature: a weight says how much one query takes from one key, and the "
    "same weight multiplies all of that key's value features. H × T × T, not times d.",
    "one head": "Every head computes its own T × T grid, one weight per query–key pair: H × T × T, not one grid.",
    "per token": "One weight per token is too few: every query has one weight for every key, T × T per head.",
}


def weight_count(n_heads: int, model_name: str, traps: dict[str, int], answer: int) -> Prediction:
    """traps: HeadMechanics.weight_count_traps; answer: the model's count (only to state the tolerance)."""
    q = Prediction(
        LESSON,
        "weight-count",
        f"One attention layer of {model_name}, with {n_heads} heads, runs on your sentence. How many attention "
        "weights does it compute? (count the tokens in the charts above, [CLS] and [SEP] included)",
        concept="heads_weight_count",
        idea="attention-weight-count",
        tolerance=WEIGHT_COUNT_TOLERANCE,
        traps=tuple(Trap(value, COUNT_TRAPS[name]) for name, value in traps.items()),
        too_high="One layer computes one weight per head, query and key, H × T × T: not multiplied by the layers "
        "or by the width d.",
        too_low="Every head computes its own T × T grid, one weight per query–key pair (not one per token), and T "
        "counts [CLS] and [SEP] too.",
    )
    return replace(q, prompt=f"{q.prompt} Right within {percent(tolerance_for(q, answer))}.")


# Why a head that is not the answer is not the one looking back, by what it does instead ({head}, {mass}).
WRONG_HEAD = {
    "next token": "Attention runs both ways: {head} looks at the next token ({mass:.2f}), not the previous one.",
    "[CLS]": "Not every head tracks position: {head} parks its weight on [CLS] ({mass:.2f}).",
    "[SEP]": "Not every head tracks position: {head} parks its weight on [SEP] ({mass:.2f}).",
    "self": "Looking at itself is not looking back: {head} puts its weight on its own token ({mass:.2f}).",
    "previous token": "{head} looks back too ({mass:.2f}), but another head does so more.",
    "broad": "Not every head has a sharp pattern: {head} spreads its weight (its largest mass is {mass:.2f}).",
}


def head_name(layer: int, head: int) -> str:
    return f"layer {layer}, head {head}"


def previous_token(candidates: Sequence[HeadLabel], model_name: str, left_out: bool = False) -> Prediction:
    """Which of these heads (encoder_core.lessons.heads.previous_token_choice's candidates) looks back most.
    left_out: heads too close to the answer to call were left out of the options (the prompt says so)."""
    options = []
    for lab in candidates:
        name = head_name(lab.layer, lab.head)
        said = WRONG_HEAD[lab.pattern].format(head=name, mass=lab.mass)
        options.append(Option(name, said[:1].upper() + said[1:]))
    note = " (A head that looks back nearly as much as the answer is not offered: too close to call.)"
    return Prediction(
        LESSON,
        "previous-token",
        f"In {model_name}, on your sentence: which of these heads puts the most weight on the token just before "
        f"each token?{note if left_out else ''}",
        tuple(options),
        concept="heads_pattern",
        idea="head-pattern",
    )


def key_option(position: int, token: str) -> str:
    """A key as the charts label it: its position, then the token (a word twice in a sentence stays two)."""
    return f"{position} {token}"


def top_key_misconception(choice: TopKeyChoice, tokens: Sequence[str], key: int) -> str:
    """Why `key` is not where the asked word looks most, with this row's weights."""
    q, best, w = choice.query, choice.best, choice.weights
    than = f"{w[key]:.2f} on “{tokens[key]}”, {w[best]:.2f} on “{tokens[best]}”"
    if key == q:
        return f"A token need not look at itself most: “{tokens[q]}” puts {than}."
    if key == q + 1:
        return f"This head does not simply look one token ahead: “{tokens[q]}” puts {than}."
    if tokens[key] == "[CLS]":
        return f"Many heads park a word's weight on [CLS], but not this one for “{tokens[q]}”: it puts {than}."
    return f"“{tokens[q]}” puts {than}: a trained head picks its word, not just a neighbour or a sink."


def top_key(choice: TopKeyChoice, tokens: Sequence[str], model_name: str) -> Prediction:
    """Which key the asked word of the sentence gives its largest weight in one head of a trained model."""
    q = choice.query
    options = tuple(
        Option(key_option(k, tokens[k]), top_key_misconception(choice, tokens, k)) for k in choice.positions
    )
    passed = (
        f" (Layer {choice.preferred[0]}, head {choice.preferred[1]} gives no word of your sentence a favourite that "
        f"leads by {choice.margin:.2f} of its weight, so this asks about layer {choice.layer}, head {choice.head}.)"
        if choice.passed_over
        else ""
    )
    return Prediction(
        LESSON,
        "top-key",
        f"In {model_name}, layer {choice.layer}, head {choice.head}: which token does “{tokens[q]}” (position {q}) "
        f"put the most weight on?{passed}",
        options,
        concept="heads_top_key",
        idea="query-top-key",
    )


class GridQuestions(NamedTuple):
    """What "All heads at once" asks about a trained model's heads on the sentence: which head looks back
    (prev) and where one word looks (word), each None when the sentence gives no clear answer."""

    run: object  # the model's AttentionRun on the sentence
    name: str
    labels: dict
    context: str  # the fingerprint both predictions are committed under
    prev_choice: object
    prev_q: Prediction | None
    word_choice: TopKeyChoice | None
    word_q: Prediction | None

    @property
    def prev_open(self) -> bool:
        """The head question is asked and not yet committed or skipped on this sentence."""
        return self.prev_q is not None and not revealed(self.prev_q, self.context)

    @property
    def word_open(self) -> bool:
        """The word question is asked and not yet committed or skipped on this sentence."""
        return self.word_q is not None and not revealed(self.word_q, self.context)


def grid_questions(run, labels: dict, name: str, trained: bool, pretrained: bool) -> GridQuestions:
    """trained: the model's heads were shaped by learning (on random weights there is nothing to predict);
    pretrained: it is MiniLM, whose word question the lesson asks."""
    prev_choice = core.previous_token_choice(labels) if trained else None
    prev_q = None
    if prev_choice is not None:
        rivals = [head_label(labels, *c) for c in prev_choice.candidates]
        prev_q = previous_token(rivals, name, left_out=bool(prev_choice.too_close))
    skip = core.positional_heads(labels)  # their label would answer the word question
    word_choice = core.top_key_choice(run.attentions, run.tokens, skip=skip) if pretrained else None
    word_q = top_key(word_choice, run.tokens, name) if word_choice else None
    context = fingerprint(name, run.tokens)
    return GridQuestions(run, name, labels, context, prev_choice, prev_q, word_choice, word_q)


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON, "heads_sentence")

GRID_STEP = 2  # "All heads at once" asks both
MAP_TOKENS = 64  # the large map's tokens, as the page draws it
TRAINED = {"mlm", "minilm"}  # only a trained model's heads were shaped by learning: random ones have no habit


def _heads_run(run: Run, models: set[str] = TRAINED, needs: str = "a trained model (the lab's MLM or MiniLM)"):
    """Every head's attention on the lecturer's sentence, and each head's label, as the page computes them."""
    if run.proof.get("model") not in models:
        raise CannotAsk(
            f"This question is about heads that learned something: choose {needs} as the model (the sidebar's, or "
            "the deck step's)."
        )
    return _attention_run(run_key(run), run)


@st.cache_data(show_spinner=False, max_entries=16)
def _attention_run(key: tuple, _run: Run):
    """Every head's attention on the sentence and each head's label, once per model and sentence (key: run_key):
    a question, its answer and its chart all read it."""
    enc = _run.tokenizer.encode(_run.proof["sentence"], max_length=_run.model.config.max_positions, truncate=True)
    attention = core.run_encoder(_run.model, enc)
    return attention, label_heads(attention.attentions, attention.tokens)


def _previous(run: Run):
    attention, labels = _heads_run(run)
    choice = core.previous_token_choice(labels)
    if choice is None:
        raise CannotAsk("On this sentence too few heads stand apart from the one that looks back most: try another.")
    return attention, labels, choice


def _previous_question(run: Run) -> tuple[Prediction, int]:
    _, labels, choice = _previous(run)
    rivals = [head_label(labels, *c) for c in choice.candidates]
    asked = previous_token(rivals, "this model", left_out=bool(choice.too_close))  # the room's prompt names it
    return asked, choice.answer


def _previous_chart(run: Run) -> list:
    attention, labels, choice = _previous(run)
    best, m = choice.candidates[choice.answer], min(len(attention.tokens), MAP_TOKENS)
    weights = attention.attentions[best[0], best[1], :m, :m]
    return [
        view.head_map_chart(weights, attention.tokens[:m], head_label(labels, *best), len(attention.tokens), run.name)
    ]


def _top_key(run: Run):
    attention, labels = _heads_run(run, {"minilm"}, "all-MiniLM-L6-v2, whose heads the lesson asks about")
    choice = core.top_key_choice(attention.attentions, attention.tokens, skip=core.positional_heads(labels))
    if choice is None:
        raise CannotAsk("No word of this sentence has a favourite that leads clearly in any head: try another.")
    return attention, choice


def _top_key_question(run: Run) -> tuple[Prediction, int]:
    attention, choice = _top_key(run)
    return top_key(choice, attention.tokens, "this model"), choice.answer  # the room's prompt names the model


def _top_key_chart(run: Run) -> list:
    attention, choice = _top_key(run)
    return [view.top_key_chart(choice, attention.tokens, run.name)]


register(
    "heads-previous-token",
    "Heads: which head looks back at the token before?",
    ask=_previous_question,
    step=GRID_STEP,
    charts=_previous_chart,
)
register(
    "heads-top-key",
    "Heads: in a pretrained head, which token does a word put the most weight on?",
    ask=_top_key_question,
    step=GRID_STEP,
    charts=_top_key_chart,
)


SPLIT_STEP = 0  # "Split d into heads" asks the count
ON_THE_CHARTS = "(count the tokens in the charts above, [CLS] and [SEP] included)"


@st.cache_data(show_spinner=False, max_entries=16)
def _mechanics_run(key: tuple, _run: Run):
    """Layer 0, head 0 of the model on the sentence, as the lesson's first section runs it, once per model and
    sentence (key: run_key)."""
    enc = _run.tokenizer.encode(_run.proof["sentence"], max_length=_run.model.config.max_positions, truncate=True)
    return core.head_mechanics(_run.model, enc, 0, 0)


def _weight_count(run: Run):
    """One layer's attention weights on the lecturer's sentence (H x T x T), as a choice among the named miscounts."""
    mech = _mechanics_run(run_key(run), run)
    cfg = run.model.config
    asked = weight_count(cfg.n_heads, "this model", mech.weight_count_traps(cfg.n_layers), mech.n_weights)
    asked = replace(asked, prompt=asked.prompt.replace(f" {ON_THE_CHARTS}", ""))  # the room's lead lists the tokens
    return mech, number_choice(asked, mech.n_weights)


register(
    "heads-weight-count",
    "Heads: how many attention weights does one layer compute?",
    ask=lambda run: _weight_count(run)[1],
    step=SPLIT_STEP,
    charts=lambda run: [view.own_weights_chart(_weight_count(run)[0])],
    lead=lambda run: f"It reads {len(run.tokens)} tokens: {' '.join(run.tokens)}. ",
)
