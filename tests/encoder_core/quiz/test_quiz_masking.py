"""The masking quiz's generators on the trained model: each answer recomputed independently (the model's own
forward and PyTorch's cross-entropy), the way test_quiz_inside.py does it. The masking generators that need no
model keep their checks in test_quiz_engine.py."""

import pytest
import torch
import torch.nn.functional as F
from quiz_checks import checked_questions, lesson_checks, lesson_generators

from encoder_core.quiz.inside import lab_mlm

GENS = lesson_generators("masking")


def check_hardest_position(q):
    """The largest cross-entropy against the original word, with every asked position hidden."""
    model, tok = lab_mlm()
    enc = tok.encode(q.inputs["text"])
    hidden = q.inputs["hidden"]
    inputs = torch.tensor([enc.ids])
    inputs[0, hidden] = tok.mask_id
    with torch.inference_mode():
        logits, _ = model(inputs)
    losses = F.cross_entropy(logits[0, hidden], torch.tensor([enc.ids[t] for t in hidden]), reduction="none")
    t = hidden[int(losses.argmax())]
    assert q.answer == f"position {t} (“{enc.tokens[t]}”)"
    assert len(q.choices) == len(hidden) >= 3


def check_fill_rank(q):
    """1 + the number of vocabulary entries the model finds likelier than the asked word at the [MASK]."""
    model, tok = lab_mlm()
    enc = tok.encode(q.inputs["text"])
    with torch.inference_mode():
        logits, _ = model(torch.tensor([enc.ids]))
    p = torch.softmax(logits[0, enc.tokens.index("[MASK]")].double(), -1)
    word = tok.token_to_id[q.inputs["word"]]
    assert q.answer == 1 + int((p > p[word]).sum())
    assert len(q.table[1]) == q.answer  # the word and every entry above it


CHECKS = lesson_checks("masking", globals())


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    qs = checked_questions("masking", GENS[name], CHECKS[name])
    assert sum(bool(q.mistakes) for q in qs) >= 0.75 * len(qs)
