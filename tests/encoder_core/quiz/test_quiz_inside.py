"""The "Looking inside" quiz: each generator's answer recomputed independently (numpy, pandas' ranks, the
model's own forward with a hook or a key padding mask, its recorded hidden states)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from quiz_checks import checked_questions, lesson_checks, lesson_generators

from encoder_core.model.tokenizer import MASK
from encoder_core.quiz.inside import LAYER_KNOCKOUT_OPTIONS, lab_mlm

GENS = lesson_generators("inside")


def test_the_lesson_has_at_least_five_generators_each_with_a_check():
    assert len(GENS) >= 5 and set(GENS) == set(CHECKS)


def encoded(text):
    model, tok = lab_mlm()
    enc = tok.encode(text)
    return model, tok, torch.tensor([enc.ids]), enc.tokens.index(MASK)


def log_probs(model, ids, position, **forward):
    with torch.inference_mode():
        logits, out = model(ids, **forward)
    return torch.log_softmax(logits[0, position], -1), out


def check_rollout(q):
    a0, a1 = (np.array(m) for m in q.inputs["layers"])
    eye = np.eye(len(a0))
    r0, r1 = 0.5 * a0 + 0.5 * eye, 0.5 * a1 + 0.5 * eye
    r0, r1 = r0 / r0.sum(1, keepdims=True), r1 / r1.sum(1, keepdims=True)
    assert q.answer == pytest.approx((r1 @ r0)[q.inputs["query"], q.inputs["key"]], abs=1e-9)


def check_spearman(q):
    model, _, ids, pos = encoded(q.inputs["text"])
    logp, out = log_probs(model, ids, pos)
    answer = int(logp.argmax())
    drops, attention = [], []
    for j in range(ids.shape[1]):
        if j == pos:
            continue
        hidden = torch.zeros_like(ids, dtype=torch.bool)
        hidden[0, j] = True
        drops.append(float(logp[answer] - log_probs(model, ids, pos, key_padding_mask=hidden)[0][answer]))
        attention.append(float(out.attentions[-1][0, :, pos, j].mean()))
    rho = pd.Series(attention).rank().corr(pd.Series(drops).rank())
    assert q.answer == pytest.approx(rho, abs=1e-4)


def head_zeroed(model, layer, head, ids, pos):
    """log-softmax at the [MASK] with one head's slice of the context zeroed before W_O (a hook on the dense)."""
    d = model.config.d_head

    def zero_head(module, args):
        context = args[0].clone()
        context[..., head * d : (head + 1) * d] = 0.0
        return (context,)

    handle = model.bert.encoder.layer[layer].attention.output.dense.register_forward_pre_hook(zero_head)
    try:
        return log_probs(model, ids, pos)[0]
    finally:
        handle.remove()


def check_knockout_factor(q):
    model, _, ids, pos = encoded(q.inputs["text"])
    logp, _ = log_probs(model, ids, pos)
    answer = int(logp.argmax())
    knocked = head_zeroed(model, q.inputs["layer"], q.inputs["head"], ids, pos)
    assert q.answer == pytest.approx(math.exp(float(knocked[answer] - logp[answer])), rel=1e-4)


def check_knockout_importance(q):
    """Every head (hooked) or every token (a key padding mask) knocked out in the model's own forward: the
    answer is the one that lowers the answer's log-probability most."""
    model, _, ids, pos = encoded(q.inputs["text"])
    logp, _ = log_probs(model, ids, pos)
    answer = int(logp.argmax())
    knocked = {}
    if q.inputs["part"] == "head":
        for layer in range(model.config.n_layers):
            for head in range(model.config.n_heads):
                knocked[f"layer {layer}, head {head}"] = float(head_zeroed(model, layer, head, ids, pos)[answer])
    else:
        tokens = lab_mlm()[1].encode(q.inputs["text"]).tokens
        for j in range(ids.shape[1]):
            if j != pos:
                hidden = torch.zeros_like(ids, dtype=torch.bool)
                hidden[0, j] = True
                knocked[f"token {j} ({tokens[j]})"] = float(
                    log_probs(model, ids, pos, key_padding_mask=hidden)[0][answer]
                )
    assert q.answer == min(knocked, key=knocked.get)
    assert all(c in knocked for c in q.choices)


def check_completeness(q):
    gap = float(q.prompt.split("f(x) − f(baseline) = ")[1].split(",")[0])
    rest = sum(float(row[1]) for row in q.table[1])
    assert q.answer == pytest.approx(gap - rest, abs=q.tolerance)
    assert f"token {q.inputs['token']} " in q.prompt and len(q.table[1]) >= 3


def check_logit_lens(q):
    model, _, ids, pos = encoded(q.inputs["text"])
    _, out = log_probs(model, ids, pos)
    with torch.inference_mode():
        stages = [torch.log_softmax(model.cls.predictions(h[0, pos]), -1) for h in out.hidden_states]
    answer = int(stages[-1].argmax())
    tops = [int(s.argmax()) == answer for s in stages]
    first = next(i for i in range(len(tops)) if all(tops[i:]))
    names = ["the embeddings"] + [f"after layer {i}" for i in range(len(stages) - 1)]
    assert q.answer == names[first]


def check_layer_knockout(q):
    model, _ = lab_mlm()
    dense = model.bert.encoder.layer[q.inputs["layer"]].attention.output.dense
    with torch.inference_mode():
        assert torch.equal(dense(torch.zeros(3, dense.in_features)), dense.bias.expand(3, -1))
    assert q.answer == LAYER_KNOCKOUT_OPTIONS["bias"]


CHECKS = lesson_checks("inside", globals())


@pytest.mark.parametrize("name", sorted(GENS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    qs = checked_questions("inside", GENS[name], CHECKS[name])
    assert sum(bool(q.mistakes) for q in qs) >= 0.75 * len(qs)
