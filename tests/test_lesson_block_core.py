"""The block lesson's computations, checked against torch recomputation, formulas and invariants."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from encoder_core import Encoder, EncoderBlock, WordTokenizer, build_encoder, param_count, preset, sinusoidal_table
from encoder_core.lessons import block as core
from encoder_core.reference import block_equivalence

SENTENCE = "the cat sat on the mat"
TEACHING_STD = 0.2  # the pages' init std for the seeded model


@pytest.fixture(scope="module")
def tokenizer() -> WordTokenizer:
    return WordTokenizer()


@pytest.fixture(scope="module")
def enc(tokenizer):
    return tokenizer.encode(SENTENCE)


@pytest.fixture(scope="module", params=["post", "pre"])
def model(request) -> Encoder:
    return build_encoder(preset("small", norm=request.param), seed=3, init_std=TEACHING_STD)


def _close(a, b, tol=1e-6):
    return torch.allclose(a, b, atol=tol, rtol=0)


@pytest.mark.parametrize("layer", [0, 1])
def test_trace_stages_fit_together(model, enc, layer):
    walk = core.walk_block(model, enc.ids, enc.segments, layer)
    t = walk.trace
    assert walk.stages == core.stages_for(model.config.norm)
    assert set(t) == set(walk.stages)
    assert _close(t["residual_1"], t["input"] + t["attention"])
    assert _close(t["ffn_activated"], F.gelu(t["ffn_hidden"]))
    assert t["ffn_hidden"].shape == (len(enc), 4 * model.config.d_model)
    if model.config.norm == "post":
        assert torch.equal(t["norm_2"], walk.block_output)
        assert _close(t["residual_2"], t["norm_1"] + t["ffn_output"])
    else:
        assert torch.equal(t["residual_2"], walk.block_output)
        assert _close(t["residual_2"], t["residual_1"] + t["ffn_output"])
    # LayerNorm stages: mean 0, population std 1 per token (gamma = 1, beta = 0 at init)
    for s in ("norm_1", "norm_2"):
        assert walk.stats[s].mean.abs().max() < 1e-5
        assert (walk.stats[s].std - 1).abs().max() < 1e-4


def test_layers_chain_and_embeddings_sum(model, enc):
    w0 = core.walk_block(model, enc.ids, enc.segments, 0)
    w1 = core.walk_block(model, enc.ids, enc.segments, 1)
    e = w0.embeddings
    assert _close(e.summed, e.token + e.position + e.segment)
    assert torch.equal(w0.trace["input"], e.normed)  # layer 0 reads the embeddings' output
    assert torch.equal(w1.trace["input"], w0.block_output)
    ids = torch.tensor(enc.ids)
    with torch.no_grad():
        assert torch.equal(e.token, model.embeddings.word_embeddings.weight[ids])
        assert torch.equal(e.position, model.embeddings.position_embeddings.weight[: len(enc)])
        expected = F.layer_norm(e.summed, (model.config.d_model,), eps=model.config.layer_norm_eps)
    assert _close(e.normed, expected, 1e-5)


def test_walk_refuses_a_missing_layer(model, enc):
    with pytest.raises(ValueError, match="layer must be in"):
        core.walk_block(model, enc.ids, enc.segments, model.config.n_layers)


def test_token_stats_match_torch():
    x = torch.randn(7, 33, generator=torch.Generator().manual_seed(0)) * 3 + 1
    stats = core.token_stats(x)
    std, mean = torch.std_mean(x, dim=-1, correction=0)
    assert _close(stats.mean, mean, 1e-5)
    assert _close(stats.std, std, 1e-5)
    assert _close(stats.l2, torch.linalg.vector_norm(x, dim=-1), 1e-4)


def test_active_units_against_numpy(model, enc):
    walk = core.walk_block(model, enc.ids, enc.segments, 0)
    u = walk.trace["ffn_hidden"].double().numpy()
    units = core.active_units(walk.trace["ffn_hidden"])
    gelu = u * 0.5 * (1 + np.vectorize(math.erf)(u / math.sqrt(2)))  # u * Phi(u), written out
    assert units.total == u.size
    assert units.gelu_positive == int((gelu > 0).sum()) == int((u > 0).sum())
    assert units.relu_positive == int((np.maximum(u, 0) > 0).sum())
    assert units.gelu_positive == units.relu_positive  # both are positive exactly where u > 0
    assert units.relu_zero == int((u <= 0).sum())
    assert units.gelu_negative == int((u < 0).sum())  # GELU keeps every negative input as a small negative
    assert -0.17 - 1e-3 < units.gelu_min < 0
    assert units.per_token_gelu_positive == (u > 0).sum(axis=1).tolist()


def test_activation_curves():
    c = core.activation_curves(-3, 3, 61)
    x = c.x.double().numpy()
    expected = x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    assert np.allclose(c.gelu.numpy(), expected, atol=1e-6)
    assert np.array_equal(c.relu.numpy(), np.maximum(c.x.numpy(), 0))


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_stage_source_is_the_running_code(norm):
    path = Path(core.stage_source("input", norm).path)
    file_lines = path.read_text().splitlines()
    for stage in core.stages_for(norm):
        src = core.stage_source(stage, norm)
        assert file_lines[src.first_line - 1].strip() == src.lines[0]
        if stage == "input":
            assert '{"input": x}' in src.lines[0]
        else:
            assert src.lines[-1].startswith(f't["{stage}"] =')
            assert [line.strip() for line in file_lines[src.first_line - 1 : src.first_line - 1 + len(src.lines)]] == (
                src.lines
            )
    # the attention stage includes the call that computes the heads
    assert "attn.self(" in core.stage_source("attention", norm).lines[0]
    # the two placements compute residual_1 on different lines
    assert core.stage_source("residual_1", "post").first_line != core.stage_source("residual_1", "pre").first_line


def test_every_stage_has_a_formula():
    for norm in ("post", "pre"):
        assert set(core.STAGE_FORMULAS[norm]) == set(core.stages_for(norm))


def test_position_tables(model):
    pos = core.position_tables(model, 40)
    assert torch.equal(pos.sinusoid, sinusoidal_table(40, model.config.d_model))
    expected = F.cosine_similarity(pos.sinusoid[:, None, :], pos.sinusoid[None, :, :], dim=-1)
    assert _close(pos.sinusoid_similarity, expected, 1e-5)
    assert _close(torch.diagonal(pos.sinusoid_similarity), torch.ones(40), 1e-5)
    # sinusoid positions: the nearer neighbour is the more similar one
    assert pos.sinusoid_similarity[0, 1] > pos.sinusoid_similarity[0, 5] > pos.sinusoid_similarity[0, 20]
    assert torch.equal(pos.learned, model.embeddings.position_embeddings.weight[:40].detach())
    assert _close(torch.diagonal(pos.learned_similarity), torch.ones(40), 1e-5)
    off = pos.learned_off_diagonal()
    assert off.numel() == 40 * 39
    assert off.sum() == pytest.approx(float(pos.learned_similarity.sum() - pos.learned_similarity.trace()), abs=1e-3)


def test_length_cap_reports_the_real_refusal(model, tokenizer):
    cap = core.length_cap(model, tokenizer, SENTENCE)
    assert cap.max_positions == 512
    assert cap.n_tokens > 512
    assert cap.kept == 512
    assert cap.truncated == cap.n_tokens - 512
    with pytest.raises(ValueError) as err:
        model(torch.ones(1, cap.n_tokens, dtype=torch.long))
    assert cap.refusal == str(err.value)
    assert str(cap.n_tokens) in cap.refusal


def test_same_seed_same_weights_for_both_placements():
    post = build_encoder(preset("small", norm="post"), seed=11, init_std=TEACHING_STD)
    pre = build_encoder(preset("small", norm="pre"), seed=11, init_std=TEACHING_STD)
    match = core.compare_weights(post, pre)
    assert match.compared == len(list(post.parameters()))
    assert match.max_abs_diff == 0.0
    assert match.only_in_first == []
    assert match.only_in_second == ["encoder.final_norm.weight", "encoder.final_norm.bias"]
    other = build_encoder(preset("small", norm="post"), seed=12, init_std=TEACHING_STD)
    assert core.compare_weights(post, other).max_abs_diff > 0


@pytest.mark.parametrize("depth", [12, 24])
def test_deep_stack_at_bert_init(enc, depth):
    study = core.deep_stack_study(enc.ids, enc.segments, depth, seed=0)
    sqrt_d = math.sqrt(study.d_model)
    assert len(study.post.residual_norms) == len(study.pre.residual_norms) == depth + 1
    assert len(study.post.grad_norms) == len(study.pre.grad_norms) == depth
    # post-norm: every block ends on a LayerNorm, the stream stays at sqrt(d)
    assert max(abs(v - sqrt_d) for v in study.post.residual_norms) < 1e-3
    # pre-norm: the stream is a plain sum. Measured: at std 0.02 and d = 64 the blocks are quiet,
    # it moves by under 5% (either way, depending on the seed)
    assert max(abs(v / sqrt_d - 1) for v in study.pre.residual_norms) < 0.05
    # the final LayerNorm puts the pre-norm output back at sqrt(d)
    assert abs(study.pre.output_norm - sqrt_d) < 1e-3
    for run in (study.post, study.pre):
        assert all(math.isfinite(g) and g > 0 for g in run.grad_norms)
    assert study.weights.max_abs_diff == 0.0
    assert study.pre.growth == study.pre.residual_norms[-1] / study.pre.residual_norms[0]
    grads = study.post.grad_norms + study.pre.grad_norms
    assert study.grad_spread == max(grads) / min(grads) < 10
    assert study.loudness == pytest.approx(0.02 * 8)


def test_deep_stack_width_scaled_init_makes_pre_norm_grow(enc):
    std = core.width_matched_std(64)
    assert std == pytest.approx(0.02 * math.sqrt(12))
    for seed in (0, 1):
        s12 = core.deep_stack_study(enc.ids, enc.segments, 12, seed, std)
        s24 = core.deep_stack_study(enc.ids, enc.segments, 24, seed, std)
        for study in (s12, s24):
            assert max(abs(v - 8.0) for v in study.post.residual_norms) < 1e-3
            assert all(math.isfinite(g) and g > 0 for g in study.post.grad_norms + study.pre.grad_norms)
        # measured: x1.5-2.0 over 12 blocks, x2.1-2.7 over 24; earlier pre-norm blocks get larger gradients
        assert s12.pre.residual_norms[-1] / s12.pre.residual_norms[0] > 1.4
        assert s24.pre.residual_norms[-1] / s24.pre.residual_norms[0] > 2.0
        assert s24.pre.grad_norms[0] > 1.5 * s24.pre.grad_norms[-1]


def test_deep_stack_gradients_match_autograd(enc):
    """The per-block gradient norm, recomputed here with torch.autograd.grad on a fresh build."""
    depth, seed = 12, 5
    study = core.deep_stack_study(enc.ids, enc.segments, depth, seed)
    model = build_encoder(preset("small", n_layers=depth, norm="pre"), seed=seed, init_std=core.BERT_INIT_STD)
    out = model(torch.tensor([enc.ids]), torch.tensor([enc.segments]), need_weights=False).hidden
    probe = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed))
    params = list(model.encoder.layer[3].parameters())
    grads = torch.autograd.grad((out * probe).sum(), params)
    expected = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))
    assert study.pre.grad_norms[3] == pytest.approx(float(expected), rel=1e-4)


def test_deep_stack_uses_at_most_64_tokens(tokenizer):
    long = tokenizer.encode(". " * 200)
    study = core.deep_stack_study(long.ids, long.segments, 12, 0)
    assert study.n_tokens == core.DEEP_STACK_MAX_TOKENS == 64


@pytest.mark.parametrize("layer", [0, 1])
def test_block_matches_torch_encoder_layer(model, enc, layer):
    walk = core.walk_block(model, enc.ids, enc.segments, layer)
    with torch.inference_mode():
        diff = block_equivalence(model.encoder.layer[layer], walk.trace["input"][None])
    assert diff <= 1e-5


@pytest.mark.parametrize("name", ["small", "bert-base"])
def test_block_params_from_modules_and_formula(name):
    config = preset(name)
    counts = core.block_params(config)
    real = EncoderBlock(config)  # a materialised block, counted independently
    assert counts.total == param_count(real) == sum(p.numel() for p in real.parameters())
    assert counts.attention == counts.attention_formula
    assert counts.ffn == counts.ffn_formula
    assert counts.norms == counts.norms_formula
    assert counts.attention + counts.ffn + counts.norms == counts.total


def test_bert_base_block_count():
    counts = core.block_params(preset("bert-base"))
    assert (counts.d_model, counts.d_ff) == (768, 3072)
    assert counts.attention == 4 * 768**2 + 4 * 768 == 2_362_368
    assert counts.ffn == 2 * 768 * 3072 + 3072 + 768 == 4_722_432
    assert counts.norms == 3072
    assert counts.total == 7_087_872
