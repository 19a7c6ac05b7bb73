"""The padding quiz generators added after test_quiz_engine.py: each answer recomputed independently (numpy).

The older generators are checked in test_quiz_engine.py; a generator checked here defines check_<name> below."""

import numpy as np
import pytest
from quiz_checks import checked_questions, lesson_checks, lesson_generators

GENS = lesson_generators("padding")


def check_leak_trend(q):
    s, values = np.array(q.inputs["scores"]), np.array(q.inputs["values"])
    alone = np.exp(s) @ values / np.exp(s).sum()
    # Each zero-key pad adds e^0 = 1 to the denominator and nothing to the numerator.
    changes = [abs(np.exp(s) @ values / (np.exp(s).sum() + p) - alone) for p in q.inputs["pads"]]
    assert all(b > a for a, b in zip(changes, changes[1:]))
    assert q.answer == "It changes, and further with every pad added."
    assert f"{changes[-1]:.3f} with {q.inputs['pads'][-1]} pads" in q.explanation


CHECKS = lesson_checks("padding", globals())


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    checked_questions("padding", GENS[name], CHECKS[name])
