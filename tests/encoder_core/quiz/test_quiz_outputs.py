"""The outputs quiz: each generator's answer recomputed independently (formulas, numpy, a plain loop)."""

import numpy as np
import pytest
from quiz_checks import checked_questions, lesson_checks, lesson_generators

from encoder_core.data.lexicon import ANIMALS, OBJECTS, PEOPLE, PLACES, VERBS_INTRANSITIVE, VERBS_TRANSITIVE
from encoder_core.quiz.outputs import PROBE_CHOICES

GENS = lesson_generators("outputs")


def test_the_lesson_has_at_least_six_generators_each_with_a_check():
    assert len(GENS) >= 6 and set(GENS) == set(CHECKS)


def check_head_shape(q):
    i = q.inputs
    expected = {"sentence": (i["B"], i["C"]), "tagging": (i["B"], i["T"], i["C"]), "qa": (i["B"], i["T"], 2)}
    assert q.answer == str(expected[i["task"]])


def check_scored_positions(q):
    assert q.answer == len(q.inputs["text"].split())  # one scored position per word, however many pieces


def check_span_decode(q):
    logits = np.array(q.inputs["logits"])
    n = len(logits)
    best = max(((s, e) for s in range(n) for e in range(s, n)), key=lambda p: logits[p[0], 0] + logits[p[1], 1])
    assert q.answer == str(best)


def check_start_probability(q):
    scores, pos = np.array(q.inputs["scores"]), q.inputs["position"]
    lo, hi = q.inputs["passage"]
    assert lo <= pos <= hi
    assert q.answer == pytest.approx(np.exp(scores[pos]) / np.exp(scores[lo : hi + 1]).sum(), rel=1e-5)


def check_mean_pool(q):
    hidden, n = np.array(q.inputs["hidden"]), q.inputs["n_real"]
    assert q.answer == pytest.approx(hidden[:n, 0].mean(), abs=1e-6)


NOT_OTHER = set(PEOPLE + ANIMALS + OBJECTS + PLACES + VERBS_INTRANSITIVE + VERBS_TRANSITIVE)
NOT_OTHER |= {"boys", "girls", "cats", "dogs", "birds", "bank", "water"}
NOT_OTHER |= {"went", "came", "counted", "fished", "swam", "paid", "kept"}


def check_majority_baseline(q):
    words = [w for text in q.inputs["texts"] for w in text.split()]
    assert q.answer == pytest.approx(sum(w not in NOT_OTHER for w in words) / len(words))


def check_probe_parameters(q):
    i = q.inputs
    assert q.answer == i["D"] * i["C"] + i["C"]


def check_segment_of(q):
    first_b = len(q.inputs["a"].split()) + 2  # [CLS], A's words (one token each), then the first [SEP]
    assert q.answer == f"{first_b} {q.inputs['b'].split()[0]}"


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def frozen_word_vectors(encoder, tok, words):
    """Each (one-piece) word's final vector in "the ___ was there", position 2, by a plain loop."""
    import torch

    rows = [tok.encode(f"the {w} was there").ids for w in words]
    with torch.inference_mode():
        return unit(np.stack([encoder(torch.tensor([row])).hidden[0, 2].numpy() for row in rows]))


def check_probe_features(q):
    from encoder_core.model.model import teaching_model
    from encoder_core.quiz.inside import lab_mlm

    model, tok = lab_mlm()
    train, test = q.inputs["train"], q.inputs["test"]
    assert not set(train) & set(test) and len(set(train.values())) == 2
    accuracy = {}
    for name, encoder in (("pre-trained", model.bert), ("random", teaching_model(q.inputs["seed"]))):
        labels = sorted(set(train.values()))
        vectors = frozen_word_vectors(encoder, tok, list(train))
        means = unit(np.stack([vectors[[v == lab for v in train.values()]].mean(0) for lab in labels]))
        guessed = (frozen_word_vectors(encoder, tok, list(test)) @ means.T).argmax(-1)
        accuracy[name] = np.mean([labels[g] == lab for g, lab in zip(guessed, test.values())])
    gap = accuracy["pre-trained"] - accuracy["random"]
    expected = "same" if abs(gap) <= 0.1 else "pre-trained" if gap > 0 else "random"
    assert q.answer == PROBE_CHOICES[expected]


def check_closest_pooled(q):
    vectors = {n: np.array(v) for n, v in q.inputs["vectors"].items()}
    pooled, anchor = {n: v.mean(0) for n, v in vectors.items()}, q.inputs["anchor"]
    cosine = {n: unit(pooled[anchor]) @ unit(p) for n, p in pooled.items() if n != anchor}
    ranked = sorted(cosine, key=cosine.get, reverse=True)
    assert q.answer == ranked[0] and cosine[ranked[0]] - cosine[ranked[1]] >= 0.05 - 1e-6


CHECKS = lesson_checks("outputs", globals())


@pytest.mark.parametrize("name", sorted(GENS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    checked_questions("outputs", GENS[name], CHECKS[name])
