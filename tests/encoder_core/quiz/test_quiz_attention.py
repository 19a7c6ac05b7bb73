"""The attention quiz generators added after test_quiz_engine.py: each answer recomputed independently (numpy).

The older generators are checked in test_quiz_engine.py; a generator checked here defines check_<name> below."""

import numpy as np
import pytest
from quiz_checks import checked_questions, lesson_checks, lesson_generators

GENS = lesson_generators("attention")


def softmax(x) -> np.ndarray:
    e = np.exp(np.asarray(x, float) - np.max(x))
    return e / e.sum()


def check_look_ahead(q):
    i, asked = q.inputs["query"], q.inputs["asked"]
    row = softmax(q.inputs["scores"])
    offered = [i - 1, i, i + 1, i + 2]
    best = max(offered, key=lambda p: row[p])
    assert q.answer == f"{best} {asked[best]}" and best == i + 1  # the habit holds on the new sentence too
    assert sorted(q.choices) == sorted(f"{p} {asked[p]}" for p in offered)
    shown = np.array(q.figure.weights)
    # What the prompt and the figure's alternative say: every row but the last is brightest right after it.
    assert [int(r.argmax()) for r in shown[:-1]] == list(range(1, len(shown)))
    assert q.figure.in_prompt and q.figure.query_tokens == q.inputs["shown"] != asked


CHECKS = lesson_checks("attention", globals())


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    checked_questions("attention", GENS[name], CHECKS[name])
