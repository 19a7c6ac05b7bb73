"""The masking lesson's predictions as a student meets them: nothing on the page answers one before it is
committed (every numbers panel open; every section on one page, and each tab alone), the reveal then shows
it, the feedback states facts the model's own numbers bear out, and each prediction names a quiz generator
that practises the same idea."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from apptest_helpers import (
    all_text,
    commit_prediction,
    figures,
    no_exception,
    open_numbers,
    open_page,
    page_evidence,
    skip_predictions,
)
from quiz_checks import assert_practised

import ui.models
from encoder_core.lessons import masking as lesson
from encoder_core.training.checkpoint import fill_mask, load_small_mlm
from ui.frame.predict import LOG_KEY
from ui.questions import masking as questions

pytestmark = pytest.mark.slow

SENTENCE = "the cat sat on the mat and the dog slept on the floor"
A_RANDOM_DRAW = {"mlm_rate": "0.5", "mlm_seed": "7"}  # seven chosen: six [MASK]s and a random word
LOSS, HARDEST, FILL = "masking-loss", "masking-hardest", "masking-fill"
CHOSEN = "The chosen ones: [MASK], random and kept"
N_TABS = 7  # six sections and "Check yourself"
CHART_KEYS = ("masking_draw", "masking_split", "masking_loss", "masking_count_example", "leakage_accuracy")
CHART_KEYS += ("leakage_loss", *(f"fill_{i}" for i in range(6)))
FERRY = "the ferry was late because of [MASK] over the harbour"


@pytest.fixture(scope="module")
def trained():
    """The checkpoint the page loads for the draw (the sidebar's default, the lab's trained MLM)."""
    model, tokenizer, _ = load_small_mlm(ui.models.CHECKPOINT_DIR)
    return model, tokenizer


def evidence(at) -> str:
    """Everything on the page, every chart's numbers panel opened."""
    return page_evidence(no_exception(open_numbers(at, *CHART_KEYS)))


def tabs(query: dict | None = None):
    """The lesson opened one tab at a time, as a student clicking through before answering anything."""
    for step in range(N_TABS):
        yield step, open_page("masking", {**(query or {}), "step": str(step)}, every_section=False, skip=False)


def offered(at, key: str) -> list[str]:
    """A choice's options as labels (the radio shows each with its letter: "A. label")."""
    return [o.split(". ", 1)[1] for o in at.radio(key=f"_predict_guess_{key}").options]


def absent(marks: list[str], text: str, where: str = "") -> None:
    found = [m for m in marks if m in text]
    assert not found, f"{where}: the answer is on the page before the commit: {found}"


def draw_of(tokenizer, query: dict | None = None) -> lesson.MaskingDraw:
    q = {"mlm_rate": "0.15", "mlm_seed": "0", **(query or {})}
    ids = tokenizer.encode(SENTENCE).ids
    return lesson.draw_masks(tokenizer, ids, rate=float(q["mlm_rate"]), exact=True, seed=int(q["mlm_seed"]))


def losses_by_hand(model, draw: lesson.MaskingDraw) -> dict[int, float]:
    """Cross-entropy against the original word at each chosen position, from the model's own forward."""
    with torch.inference_mode():
        logits, _ = model(draw.result.inputs)
    chosen = [p.position for p in draw.positions if p.chosen]
    ce = F.cross_entropy(logits[0, chosen], draw.ids[0, chosen], reduction="none")
    return dict(zip(chosen, ce.tolist(), strict=True))


# ---- which positions the loss reads ----


def loss_marks(tokenizer, query) -> list[str]:
    """What answers the loss question: a position's label, anywhere on the page, or how many rows the loss reads."""
    n = draw_of(tokenizer, query).counts.chosen
    return [
        "input id,label",  # the draw table's label column
        "label -100",  # the draw's hover text
        "every other position is labelled -100",  # the draw's text alternative
        f"({n}, {tokenizer.vocab_size})",  # the shapes' last step: as many rows as chosen positions
        "Labelled (not -100)",  # the reveal's own sentence
    ]


@pytest.mark.parametrize("query", [None, A_RANDOM_DRAW])
def test_nothing_answers_the_loss_question_before_it_is_committed(trained, query):
    marks = loss_marks(trained[1], query)
    at = open_page("masking", query, skip=False)
    absent(marks, evidence(at), "every section")
    at = skip_predictions(commit_prediction(at, LOSS, CHOSEN))
    after = evidence(at)
    assert all(m in after for m in marks), [m for m in marks if m not in after]
    assert "Which positions get a label" not in all_text(at)  # the note gives way to the labels


def test_no_tab_answers_the_loss_question_before_it_is_committed(trained):
    marks = loss_marks(trained[1], A_RANDOM_DRAW)
    for step, at in tabs(A_RANDOM_DRAW):
        absent(marks, evidence(at), f"tab {step}")
        if step == 0:
            assert "Which positions get a label, and which get -100, is the prediction in “The loss”" in all_text(at)


def test_the_loss_options_are_practised_and_the_kept_word_feedback_holds():
    assert_practised(questions.LOSS)
    words = questions.LOSS_OPTIONS["words"].misconception
    assert "a kept word is read as it is and scored all the same" in words  # checked in the core's tests
    assert "copy" not in words.split("But")[0]  # no claim that a word the model sees is never scored


# ---- which chosen position carries the largest loss ----


def hardest_marks(model, draw) -> list[str]:
    by_hand = losses_by_hand(model, draw)
    best = max(by_hand.values())
    return [f"{best:.2f}", "p(original)", f"mean over the {len(by_hand)} chosen positions"]


def test_nothing_answers_the_largest_loss_before_it_is_committed(trained):
    model, tokenizer = trained
    draw = draw_of(tokenizer, A_RANDOM_DRAW)
    marks = hardest_marks(model, draw)
    at = commit_prediction(open_page("masking", A_RANDOM_DRAW, skip=False), LOSS, CHOSEN)
    assert "masking_loss" not in figures(at)
    absent(marks, evidence(at), "every section, the loss question answered")
    for step, tab in tabs(A_RANDOM_DRAW):
        absent(marks, evidence(tab), f"tab {step}")
    by_hand = losses_by_hand(model, draw)
    best = max(by_hand, key=by_hand.get)
    right = questions.position_label(draw.positions[best])
    assert right in offered(at, HARDEST)
    at = no_exception(commit_prediction(at, HARDEST, right))
    assert "Right." in [s.value for s in at.success] and "masking_loss" in figures(at)
    after = evidence(at)
    assert all(m in after for m in marks), [m for m in marks if m not in after]


def test_a_wrong_position_is_told_its_loss_and_the_largest(trained):
    model, tokenizer = trained
    draw = draw_of(tokenizer, A_RANDOM_DRAW)
    by_hand = losses_by_hand(model, draw)
    best = max(by_hand, key=by_hand.get)
    wrong = min(by_hand, key=by_hand.get)
    at = commit_prediction(open_page("masking", A_RANDOM_DRAW, skip=False), LOSS, CHOSEN)
    at = no_exception(commit_prediction(at, HARDEST, questions.position_label(draw.positions[wrong])))
    assert any(e.value.startswith("Not quite") for e in at.error)
    text = all_text(at)
    p = questions.probability_text
    assert f"(a loss of {by_hand[wrong]:.2f} nats)" in text and f"probability {p(math.exp(-by_hand[wrong]))}" in text
    assert f"at position {best}, “{draw.positions[best].token}” gets only {p(math.exp(-by_hand[best]))}" in text
    assert f"({by_hand[best]:.2f} nats)" in text
    assert questions.HARDEST_IDEA[draw.positions[wrong].fate] in text


def test_a_position_within_the_margin_counts_too(trained):
    model, tokenizer = trained
    for seed in range(40):  # a draw whose two largest losses come within the margin, with a third far below
        query = {"mlm_rate": "0.5", "mlm_seed": str(seed)}
        draw = draw_of(tokenizer, query)
        choice = lesson.hardest_choice(draw, lesson.mlm_forward(model, draw.result.inputs, draw.result.labels))
        if choice.asked and len(choice.right) >= 2:
            break
    else:
        pytest.fail("no draw with two losses within the margin")
    close = next(i for i in choice.right if i != choice.answer)
    at = commit_prediction(open_page("masking", query, skip=False), LOSS, CHOSEN)
    at = no_exception(commit_prediction(at, HARDEST, questions.position_label(draw.positions[choice.positions[close]])))
    said = " ".join(s.value for s in at.success)
    assert f"Right: its loss, {choice.losses[close]:.2f} nats, is within 0.5 of the largest" in said
    assert "so both count" in said and not at.error


def test_a_draw_too_close_to_call_asks_nothing_and_says_why(trained):
    at = no_exception(commit_prediction(open_page("masking", skip=False), LOSS, CHOSEN))  # "on" 0.13, "the" 0.02
    assert f"_predict_guess_{HARDEST}" not in [r.key for r in at.radio]
    assert "within 0.5 nats of the largest on this draw: too close to call" in all_text(at)
    assert "masking_loss" in figures(at)


def test_the_largest_loss_question_is_practised(trained):
    model, tokenizer = trained
    draw = draw_of(tokenizer, A_RANDOM_DRAW)
    choice = lesson.hardest_choice(draw, lesson.mlm_forward(model, draw.result.inputs, draw.result.labels))
    assert_practised(questions.hardest(choice, draw.positions, "the lab's trained MLM"))


# ---- fill in the blank ----


def test_nothing_answers_the_fill_question_before_it_is_committed(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    ranking = fill_mask(model, tokenizer, FERRY, top_k=tokenizer.vocab_size)[0]
    first = ranking[0][0]
    marks = ["token,probability,word piece", f"“{first}” (", "is the model's choice", "first choice is"]
    query = {"fill_sentence": FERRY}
    at = open_page("masking", query, skip=False)
    absent(marks, evidence(at), "every section")
    assert "fill_0" not in figures(at)
    for step, tab in tabs(query):
        absent(marks, evidence(tab), f"tab {step}")
    rank = next(r for r, (w, _) in enumerate(ranking, start=1) if w == "fog")
    assert rank > 5  # the case: a word that fits, far down this model's list
    at = no_exception(commit_prediction(at, FILL, "fog", typed=True))
    said = " ".join(s.value for s in at.success)
    assert f"“fog” is the model's choice {rank:,} of {tokenizer.vocab_size:,}" in said
    assert f"The model's first choice is “{first}”" in said and "Not counted as a miss" in said
    assert not at.error and "The idea behind that guess" not in all_text(at)
    (logged,) = [v for k, v in at.session_state[LOG_KEY].items() if k.startswith(FILL)]
    assert logged.right is None  # the record does not count it: neither right nor a miss
    after = evidence(at)
    assert "fill_0" in figures(at) and "token,probability,word piece" in after


def test_the_fill_question_is_practised():
    assert_practised(questions.FILL)
