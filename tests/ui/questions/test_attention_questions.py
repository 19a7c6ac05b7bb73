"""The attention lesson's predictions: every fact their feedback states, recomputed by hand on the input it is
asked on; each names the quiz generator that practises its idea."""

import pytest
import torch
from quiz_checks import assert_practised

from encoder_core.lessons.attention import (
    LOOK_EXAMPLES,
    ROUNDING,
    ROW_OUTCOMES,
    compare_masks,
    drop_token,
    look_ahead_run,
    row_facts,
    row_outcome,
)
from ui.frame.predict import judge
from ui.questions import attention as questions

SENTENCES = ("the cat sat down", "the old dog slept on the warm mat near the river because it was tired")
EVERYDAY = ("the cat sat down", "my brother fixed the old bicycle", "we walked home after the film")


def misconception(q, label: str) -> str:
    return next(o.misconception for o in q.options if o.label == label)


@pytest.mark.parametrize("sentence", SENTENCES)
def test_the_row_questions_feedback_states_this_heads_numbers(lesson_model, sentence):
    enc = lesson_model.tokenizer.encode(sentence)
    cfg = lesson_model.config
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            cmp = compare_masks(lesson_model.encoder, enc.ids, layer, head)
            facts = row_facts(cmp)
            if not facts.askable:
                continue
            q = questions.same_rows(facts, enc.tokens)
            bi = cmp.bidirectional.double()
            first = float(bi[0, 1:].sum())  # what row 0 gives the tokens after it, all taken by the causal mask
            assert f"Here it had given {first:.3f} of its attention" in misconception(q, "the first row ([CLS])")
            later = [float(bi[i, i + 1 :].sum()) for i in range(len(enc.ids) - 1)]
            row = later.index(max(later))
            every = misconception(q, "every row")
            assert f"Here row {row} (“{enc.tokens[row]}”) gave {later[row]:.3f}" in every and later[row] > ROUNDING
            # The model's answer is the last row, and the options follow ROW_OUTCOMES.
            assert q.options[ROW_OUTCOMES.index(row_outcome(cmp))].label == "the last row"
            wrong = judge(q, ROW_OUTCOMES.index("every"), ROW_OUTCOMES.index("last"))
            assert not wrong.right and wrong.misconception == every
    assert_practised(questions.same_rows(facts, enc.tokens))


@pytest.mark.parametrize("sentence", SENTENCES)
def test_the_drop_questions_feedback_states_the_shifts(lesson_model, sentence):
    model, tok = lesson_model.encoder, lesson_model.tokenizer
    enc = tok.encode(sentence)
    position = len(enc.ids) - 2  # the last word
    q = questions.drop(drop_token(model, enc.ids, position))
    ids = torch.tensor([enc.ids])
    shorter = torch.cat([ids[:, :position], ids[:, position + 1 :]], dim=1)
    shifts = {}
    with torch.inference_mode():
        for causal in (True, False):
            full = model(ids, causal=causal).hidden[0, :position]
            short = model(shorter, causal=causal).hidden[0, :position]
            shifts[causal] = (full - short).norm(dim=-1)
    moved = int((shifts[False] > ROUNDING).sum())
    assert moved == position  # every vector before it moves without the mask
    assert f"here {moved} of the {position} vectors before it moved" in misconception(q, "neither")
    assert float(shifts[True].max()) <= ROUNDING  # "under it their vectors cannot move": float rounding at most
    assert "float rounding" in misconception(q, "both")
    assert_practised(q)


@pytest.mark.parametrize("lesson_model", ["mlm", "minilm"], indirect=True)
def test_the_look_ahead_questions_feedback_states_the_heads_weights(lesson_model):
    model, tok = lesson_model.encoder, lesson_model.tokenizer
    right = set()
    for sentence in EVERYDAY:
        run = look_ahead_run(model, tok, sentence)
        la, tokens = run.question, run.tokens
        q = questions.look_ahead(la, tokens, run.example_mass)
        # The head's weights on this sentence and on the example, by hand.
        ids = torch.tensor([tok.encode(sentence).ids])
        with torch.inference_mode():
            row = model(ids).attentions[run.layer][0, run.head, la.query]
            example = tok.encode(next(e for e in LOOK_EXAMPLES if tok.encode(e).tokens == run.example_tokens))
            w = model(torch.tensor([example.ids])).attentions[run.layer][0, run.head]
        T = w.shape[0]
        mass = float(w[torch.arange(T - 1), torch.arange(1, T)].mean())
        best = max(la.options, key=lambda p: float(row[p]))
        labels = [o.label for o in q.options]
        assert len(set(labels)) == len(labels) and labels[la.answer] == f"“{tokens[best]}” (token {best})"
        right.add(tokens[best])
        for option, position in zip(q.options, la.options):
            if position == best:
                assert option.misconception == ""
                continue
            text = option.misconception
            assert f"on the example it put {mass:.2f} of a token's attention" in text  # the habit, by hand
            assert f"and {option.label} {float(row[position]):.2f}." in text
            assert f"gives “{tokens[best]}” (token {best}) {float(row[best]):.2f} of its attention" in text
        assert f"“{tokens[la.query]}” (token {la.query})" in q.prompt
        assert_practised(q)
    assert len(right) == len(EVERYDAY)  # a different right option on each sentence
