"""The block quiz's generators added after test_quiz_engine.py's: each answer recomputed independently."""

import pytest
from quiz_checks import checked_questions, lesson_checks, lesson_generators

GENS = lesson_generators("block")


def check_ffn_per_token(q):
    """The FFN applies the same two layers to each row alone; attention mixes every row into every other."""
    i = q.inputs
    assert 1 <= i["row"] <= i["T"] - 2
    expected = f"only row {i['row']}" if i["sublayer"] == "FFN" else f"every row, 0 to {i['T'] - 1}"
    assert q.answer == expected


CHECKS = lesson_checks("block", globals())


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_answers_match_an_independent_recomputation_and_grade_themselves(name):
    qs = checked_questions("block", GENS[name], CHECKS[name])
    assert {q.inputs["sublayer"] for q in qs} == {"FFN", "attention"}  # the contrast is practised both ways


def test_the_generators_the_predictions_send_a_student_to_name_their_idea():
    ideas = {name: gen.idea for name, gen in GENS.items() if gen.idea}
    assert ideas == {
        "block_final_norm": "prenorm-raw-stream",
        "block_stage_shape": "stage-shape",
        "block_layernorm_output": "layernorm-output",
        "block_ffn_per_token": "ffn-per-token",
    }
