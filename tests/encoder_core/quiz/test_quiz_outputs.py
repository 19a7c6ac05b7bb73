"""The outputs quiz: each generator's answer recomputed independently (formulas, numpy, a plain loop)."""

import numpy as np
import pytest
from quiz_checks import checked_questions, lesson_checks, lesson_generators

from encoder_core.data.lexicon import ANIMALS, OBJECTS, PEOPLE, PLACES, VERBS_INTRANSITIVE, VERBS_TRANSITIVE

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


CHECKS = lesson_checks("outputs", globals())


@pytest.mark.parametrize("name", sorted(GENS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    checked_questions("outputs", GENS[name], CHECKS[name])
