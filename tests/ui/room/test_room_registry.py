"""Each lesson registers its own room questions (ui/room/registry.py): the room offers every one of them,
in the lessons' order, and no file of the room names a lesson."""

from __future__ import annotations

import pytest

from encoder_core.lessons import LESSON_IDS
from encoder_core.lessons import tradeoffs as core
from encoder_core.model.tokenizer import english_tokenizer
from ui.room import registry
from ui.room.registry import CannotAsk, Run, middle_word, predictions, register_room_question, word_positions

OFFERED = {  # what the lecturer's picker offers, each lesson's in the order it registers them: the prediction
    # each asks ("<lesson>-<name>" of its Prediction)
    "attention-rows": "attention-rows",
    "attention-drop": "attention-drop",
    "attention-look-ahead": "attention-look-ahead",
    "padding-leak": "padding-leak-trend",
    "padding-pad-count": "padding-pad-count",
    "padding-pad-share": "padding-pad-share",
    "masking-loss": "masking-loss",
    "masking-hardest": "masking-hardest",
    "masking-fill": "masking-fill",
    "block-ffn-shape": "block-ffn-shape",
    "block-norm-std": "block-norm-std",
    "block-ffn-token": "block-ffn-token",
    "block-deep-growth": "block-deep-growth",
    "heads-previous-token": "heads-previous-token",
    "heads-top-key": "heads-top-key",
    "heads-weight-count": "heads-weight-count",
    "outputs-tag-shape": "outputs-tag-shape",
    "outputs-probe-or-scratch": "outputs-probe-or-scratch",
    "outputs-closest-sentence": "outputs-closest-sentence",
    "tradeoffs-mismatch": "tradeoffs-mask-mismatch",
    "tradeoffs-cache-saving": "tradeoffs-cache-saving",
    "tradeoffs-first-cut": "tradeoffs-first-cut",
    "inside-head": "inside-head",
    "inside-token": "inside-token",
    "inside-explanation": "inside-explanation",
}


def test_every_lessons_room_questions_are_offered_in_the_lessons_order():
    found = predictions()
    assert {k: p.lesson for k, p in found.items()} == {k: asks.split("-")[0] for k, asks in OFFERED.items()}
    assert list(found) == list(OFFERED)  # each lesson's in the order its page asks them
    lessons = [p.lesson for p in found.values()]
    assert lessons == sorted(lessons, key=LESSON_IDS.index)
    assert next(iter(found)) == "attention-rows"  # the picker's first, as before


def asked_on_pages() -> set[str]:
    """Every prediction a lesson's page asks, by its key ("<lesson>-<name>"): each Prediction(...) its question
    module builds, read from the source."""
    import ast
    from pathlib import Path

    keys = set()
    for path in sorted((Path(__file__).resolve().parents[3] / "ui" / "questions").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Prediction" and len(node.args) >= 2:
                lesson, name = node.args[:2]
                lesson = path.stem if isinstance(lesson, ast.Name) else lesson.value  # LESSON: the module's own
                keys.add(f"{lesson}-{name.value}")
    return keys


def test_every_prediction_a_lesson_asks_can_be_put_to_a_room():
    assert len(asked_on_pages()) == len(OFFERED) == 25
    assert asked_on_pages() == set(OFFERED.values()) and set(OFFERED) == set(predictions())


def test_a_lesson_registers_its_questions_from_its_own_module():
    for key, p in predictions().items():
        assert p.ask.__module__ == f"ui.questions.{p.lesson}", key
        assert p.charts.__module__ == f"ui.questions.{p.lesson}", key


def test_a_key_belongs_to_one_lesson_and_a_lesson_must_exist():
    p = predictions()["padding-leak"]
    with pytest.raises(ValueError, match="padding lesson's already"):
        register_room_question("block", "padding-leak", "x", ask=p.ask, step=0, charts=p.charts)
    with pytest.raises(ValueError, match="not a lesson"):
        register_room_question("no-such-lesson", "x", "x", ask=p.ask, step=0, charts=p.charts)
    try:
        again = register_room_question("padding", p.key, p.title, ask=p.ask, step=0, charts=p.charts)
        assert predictions()["padding-leak"] is again  # a module run twice replaces its own
    finally:
        registry._registered["padding-leak"] = p
    assert predictions()["padding-leak"] is p


@pytest.mark.parametrize("sentence", ["the cat sat on the mat", "[CLS] [SEP]", "one"])
def test_the_words_of_a_sentence_are_the_ones_mlm_may_choose(sentence):
    tok = english_tokenizer()
    enc = tok.encode(sentence)
    run = Run(None, "", tok, list(enc.ids), list(enc.tokens), {})
    assert word_positions(run) == core.eligible_positions(tok, list(enc.ids))
    if word_positions(run):
        assert middle_word(run) == word_positions(run)[len(word_positions(run)) // 2]
    else:
        with pytest.raises(CannotAsk, match="no word"):
            middle_word(run)
