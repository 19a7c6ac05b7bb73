"""Each lesson registers its own room questions (ui/room/registry.py): the room offers every one of them,
in the lessons' order, and no file of the room names a lesson."""

from __future__ import annotations

import pytest

from encoder_core.lessons import LESSON_IDS
from encoder_core.lessons import tradeoffs as core
from encoder_core.model.tokenizer import english_tokenizer
from ui.room import registry
from ui.room.registry import CannotAsk, Run, middle_word, predictions, register_room_question, word_positions

OFFERED = {  # what the lecturer's picker offers, each lesson's in the order it registers them
    "attention-rows": "attention",
    "attention-drop": "attention",
    "attention-look-ahead": "attention",
    "padding-leak": "padding",
    "padding-pad-count": "padding",
    "padding-pad-share": "padding",
    "masking-hardest": "masking",
    "block-ffn-shape": "block",
    "block-norm-std": "block",
    "block-ffn-token": "block",
    "block-deep-growth": "block",
    "heads-previous-token": "heads",
    "heads-top-key": "heads",
    "heads-weight-count": "heads",
    "inside-head": "inside",
    "inside-token": "inside",
    "outputs-closest-sentence": "outputs",
    "tradeoffs-mismatch": "tradeoffs",
    "tradeoffs-cache-saving": "tradeoffs",
    "tradeoffs-first-cut": "tradeoffs",
}


def test_every_lessons_room_questions_are_offered_in_the_lessons_order():
    found = predictions()
    assert {k: p.lesson for k, p in found.items()} == OFFERED
    lessons = [p.lesson for p in found.values()]
    assert lessons == sorted(lessons, key=LESSON_IDS.index)
    assert next(iter(found)) == "attention-rows"  # the picker's first, as before


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
