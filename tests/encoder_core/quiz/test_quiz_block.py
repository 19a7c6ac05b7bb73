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


def test_a_sublayers_output_read_at_the_hook_points_is_that_sublayer_written_out():
    """The per-token question runs one sublayer on h through the block's hook points; here each is written out
    with F.linear from the block's weights (the FFN: W_2 GELU(W_1 h); attention: W_O of softmax(q k^T / √d) v)."""
    import torch
    import torch.nn.functional as F

    from encoder_core.quiz.block import built_block, sublayer_output

    block = built_block(16)
    h = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode():
        ffn = F.linear(F.gelu(F.linear(h, block.intermediate.dense.weight, block.intermediate.dense.bias)),
                       block.output.dense.weight, block.output.dense.bias)  # fmt: skip
        sa, H = block.attention.self, block.config.n_heads
        projections = (sa.query, sa.key, sa.value)
        q, k, v = (F.linear(h, p.weight, p.bias).view(1, 5, H, -1).transpose(1, 2) for p in projections)
        heads = (torch.softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, -1) @ v).transpose(1, 2).reshape(1, 5, 16)
        attn = F.linear(heads, block.attention.output.dense.weight, block.attention.output.dense.bias)
        torch.testing.assert_close(sublayer_output(block, h, "ffn"), ffn)
        torch.testing.assert_close(sublayer_output(block, h, "attn"), attn)
