"""The lessons' predictions a room can vote on, each answered by the same encoder_core function the lesson's
page uses, on the lecturer's sentence, with the lesson's chart as its proof; a sentence it cannot be asked on
says why."""

from __future__ import annotations

import pytest

from encoder_core.lessons import attention as attention_core
from ui.models import trained_mlm
from ui.room.registry import CannotAsk
from ui.room.sources import asked_with, from_prediction, proof_charts


def test_the_look_ahead_question_is_the_trained_heads_favourite():
    sentence = "the old man read the book in the garden"
    q = from_prediction("attention-look-ahead", sentence, "small", 0)
    trained, _ = trained_mlm()
    run = attention_core.look_ahead_run(trained.model.bert, trained.tokenizer, sentence)
    assert run.question is not None
    assert q.correct == run.question.answer and len(q.options) == len(run.question.options)
    word = run.tokens[run.question.query]
    assert f"“{word}” (token {run.question.query})" in q.prompt and "the lab's trained MLM" in q.prompt
    win = run.question.options[run.question.answer]
    assert q.options[q.correct] == f"“{run.tokens[win]}” (token {win})"
    assert all(q.why_wrong[i] for i in range(len(q.options)) if i != q.correct)  # each wrong option's idea
    assert q.concept == "attention_look_ahead" and q.lesson == "attention"
    charts, _ = asked_with(q)
    assert len(charts) == 1  # the head on the lesson's example: its habit, not this sentence's answer
    assert len(proof_charts(q)) == 1


@pytest.mark.parametrize("sentence", ["one", "[CLS] [SEP]"])
def test_the_look_ahead_question_on_too_short_a_sentence_says_why(sentence):
    with pytest.raises(CannotAsk, match="longer"):
        from_prediction("attention-look-ahead", sentence, "small", 0)
