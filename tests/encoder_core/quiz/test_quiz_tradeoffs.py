"""The trade-offs quiz: each generator's answer recomputed independently (hand formulas, numpy, a plain loop)."""

import math
import random

import numpy as np
import pytest
from quiz_checks import checked_questions, lesson_checks, lesson_generators

from encoder_core.quiz.tradeoffs import MISMATCH_CHOICES

GENS = lesson_generators("tradeoffs")


def test_the_lesson_has_at_least_six_generators_each_with_a_check():
    assert len(GENS) >= 6 and set(GENS) == set(CHECKS)


def check_append_flops(q):
    i = q.inputs
    d, f, layers = i["d"], 4 * i["d"], i["layers"]
    steps = range(i["prefix"] + 1, i["prefix"] + i["n"] + 1)
    full = sum(layers * (t * (8 * d * d + 4 * d * f) + 4 * t * t * d) for t in steps)
    row = sum(layers * ((8 * d * d + 4 * d * f) + 4 * t * d) for t in steps)
    assert q.answer == pytest.approx(full / row)


def check_attention_megabytes(q):
    i = q.inputs
    assert q.answer == pytest.approx(i["batch"] * i["heads"] * i["t"] ** 2 * 4 * i["layers"] / 2**20)


def check_rtd_count(q):
    assert q.answer == sum(a != b for a, b in zip(q.inputs["words"], q.inputs["corrupted"]))


def check_dynamic_views(q):
    n, k, e = q.inputs["n"], q.inputs["k"], q.inputs["epochs"]
    assert k == math.floor(0.15 * n + 0.5)
    c = math.comb(n, k)
    assert q.answer == pytest.approx(c * (1 - (1 - 1 / c) ** e))
    rng = random.Random(0)  # and by simulation
    sim = np.mean([len({rng.randrange(c) for _ in range(e)}) for _ in range(4000)])
    assert q.answer == pytest.approx(sim, rel=0.05)


def check_windows(q):
    n, cap, overlap = q.inputs["n"], q.inputs["cap"], q.inputs["overlap"]
    size, start, count = cap - 2, 0, 1
    while start + size < n:  # slide until a window reaches the end
        start += size - overlap
        count += 1
    assert q.answer == count


def check_wrong_mean(q):
    assert q.answer == pytest.approx(sum(q.inputs["per"]) / q.inputs["T"], abs=2e-3)


def check_append_moves(q):
    moves = q.inputs["causal"] == "bidirectional"
    assert ("Every one" in q.answer) == moves and ("None of them" in q.answer) != moves


def check_mask_mismatch(q):
    import torch

    from encoder_core.lessons.tradeoffs import eligible_positions, ordinary_word_ids
    from encoder_core.quiz.inside import lab_mlm

    model, tok = lab_mlm()
    ids = tok.encode(q.inputs["text"]).ids
    words, position = eligible_positions(tok, ids), q.inputs["position"]
    pool = ordinary_word_ids(tok)
    randoms = pool[torch.randint(len(pool), (len(words),), generator=torch.Generator().manual_seed(q.inputs["seed"]))]
    p, random_id = {}, int(randoms[words.index(position)])
    for case, token in (("masked", tok.mask_id), ("random", random_id), ("kept", ids[position])):
        row = list(ids)
        row[position] = token
        with torch.inference_mode():
            logits, _ = model(torch.tensor([row]))
        p[case] = float(torch.softmax(logits[0, position], -1)[ids[position]])
    ranked = sorted(p, key=p.get, reverse=True)
    assert q.answer == MISMATCH_CHOICES[ranked[0]] and p[ranked[0]] - p[ranked[1]] >= 0.1


def check_first_cut(q):
    from encoder_core import english_tokenizer

    pieces = english_tokenizer().encode(q.inputs["text"]).tokens[1:-1]
    room = q.inputs["cap"] - 2  # [CLS] and [SEP] keep their places
    assert len(pieces) * q.inputs["copies"] > room
    assert q.answer == f"{room % len(pieces)} {pieces[room % len(pieces)]}"


CHECKS = lesson_checks("tradeoffs", globals())


@pytest.mark.parametrize("name", sorted(GENS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    qs = checked_questions("tradeoffs", GENS[name], CHECKS[name])
    assert sum(bool(q.mistakes) for q in qs) >= 0.75 * len(qs)
