"""The block lesson's computations, checked against torch recomputation, formulas and invariants."""

from __future__ import annotations

import copy
import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from encoder_core import Encoder, EncoderBlock, build_encoder, param_count, preset, sinusoidal_table
from encoder_core.lessons import block as core
from encoder_core.model import reference as reference_module
from encoder_core.model.model import stage_function
from encoder_core.model.reference import block_equivalence

SENTENCE = "the cat sat on the mat"
TEACHING_STD = 0.2  # the pages' init std for the seeded model


@pytest.fixture(scope="module")
def enc(tok):
    return tok.encode(SENTENCE)


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
    assert (walk.d_model, walk.d_ff, walk.sqrt_d) == (64, 256, 8.0)
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
    sizes = core.summarize_parts(e)
    assert list(sizes) == ["token", "position", "segment", "summed", "normed"]
    assert sizes["summed"] == core.summarize(e.summed)
    assert sizes["token"].largest == float(e.token.abs().max()) > 0


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
    assert stats.largest_mean == float(stats.mean.abs().max()) == pytest.approx(float(mean.abs().max()))
    assert stats.mean_std == float(stats.std.mean()) and stats.mean_l2 == float(stats.l2.mean())
    assert stats.std_span == core.Span(float(stats.std.min()), float(stats.std.max()))
    assert stats.l2_span.lo == float(stats.l2.min()) < stats.l2_span.hi == float(stats.l2.max())


def test_summarize():
    x = torch.tensor([[1.0, -5.0, 2.0], [0.5, 3.0, -1.0]])
    assert core.summarize(x) == core.TensorSummary(rows=2, cols=3, lo=-5.0, hi=3.0, largest=5.0)
    assert core.span([3.0, 1.0, 2.0]) == core.Span(1.0, 3.0) == core.span(torch.tensor([3.0, 1.0, 2.0]))


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
    assert c.x_span == core.Span(-3.0, 3.0)
    assert c.lowest_gelu == float(c.gelu.min()) == pytest.approx(expected.min(), abs=1e-6)


# ---- where each stage is computed: one function per stage, its source read with inspect ------------

ROOT = Path(__file__).resolve().parents[3]
# What each stage's function must do, as its source writes it: the operation the stage is named after.
# The input stage's function is its placement's method, which returns every stage: it names them all.
STAGE_OPERATIONS = {
    "attention": ("self.attention.self(", ".dense("),
    "residual_1": (" + ",),
    "norm_1": ("self.attention.output.LayerNorm(",),
    "ffn_hidden": ("self.intermediate.dense(",),
    "ffn_activated": ("self.act(",),
    "ffn_output": ("self.output", ".dense("),
    "residual_2": (" + ",),
    "norm_2": ("self.output.LayerNorm(",),
}
# The stream each residual stage adds its sublayer's output to, by placement.
SKIPPED = {
    ("post", "residual_1"): "input",
    ("pre", "residual_1"): "input",
    ("post", "residual_2"): "norm_1",
    ("pre", "residual_2"): "residual_1",
}


def block_input(model: Encoder, enc) -> torch.Tensor:
    return core.walk_block(model, enc.ids, enc.segments, 0).trace["input"][None]  # (1, T, D)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_every_stage_has_one_function_that_does_its_operation(norm):
    stages = core.stages_for(norm)
    functions = [stage_function(stage, norm) for stage in stages]
    assert len(set(functions)) == len(stages)  # no function stands for two stages
    for stage, function in zip(stages, functions):
        code = core.stage_code(stage, norm)
        assert code.qualname == function.__qualname__ == f"EncoderBlock.{function.__name__}"
        assert code.source.startswith(f"def {function.__name__}(self, ")
        for operation in STAGE_OPERATIONS.get(stage, stages):
            assert operation in code.source, (stage, operation)
        # the source shown is the file's own lines, from the line the page quotes
        shown = code.source.splitlines()
        in_file = (ROOT / code.path).read_text().splitlines()[code.first_line - 1 : code.first_line - 1 + len(shown)]
        assert textwrap.dedent("\n".join(in_file)).splitlines() == shown, stage


def test_only_the_input_stage_shows_different_code_for_the_two_placements():
    """Every stage's function serves both placements; what differs (the order, what each reads) is the
    placement's own method, shown for the input stage."""
    for stage in core.stages_for("post"):
        post, pre = core.stage_code(stage, "post"), core.stage_code(stage, "pre")
        assert (post == pre) == (stage != "input"), stage
    assert core.stage_code("input", "post").qualname == "EncoderBlock._post_norm"
    assert core.stage_code("input", "pre").qualname == "EncoderBlock._pre_norm"


@pytest.mark.parametrize("need_weights", [True, False])
def test_a_traced_run_records_exactly_the_stages_listed(model, enc, need_weights):
    block, x = model.encoder.layer[0], block_input(model, enc)
    stages = core.stages_for(model.config.norm)
    with torch.no_grad():
        out, weights, trace = block(x, need_weights=need_weights, return_trace=True)
        fast, fast_weights, no_trace = block(x, need_weights=need_weights)
    assert list(trace) == list(stages) and no_trace is None
    assert trace["input"] is x
    assert torch.equal(out, trace[stages[-1]])
    assert torch.equal(out, fast)  # keeping the trace changes nothing in what the block computes
    assert (weights is None) == (fast_weights is None) == (not need_weights)


def test_each_stage_function_on_the_previous_stage_gives_the_traced_value(model, enc):
    norm, block = model.config.norm, model.encoder.layer[0]
    stages = core.stages_for(norm)
    with torch.no_grad():
        _, weights, trace = block(block_input(model, enc), return_trace=True)
        for previous, stage in zip(stages, stages[1:]):
            skipped = [trace[SKIPPED[norm, stage]]] if (norm, stage) in SKIPPED else []
            value = stage_function(stage, norm)(block, *skipped, trace[previous])
            if stage == "attention":
                value, stage_weights = value  # attention hands on its weights too
                assert torch.equal(stage_weights, weights)
            assert torch.equal(value, trace[stage]), stage
        # the input stage's function, the placement's method, gives every stage from the input alone
        every_stage, _ = stage_function("input", norm)(block, trace["input"], {})
    assert len(every_stage) == len(stages)
    assert all(torch.equal(value, trace[stage]) for stage, value in zip(stages, every_stage))


def functions_called(block: EncoderBlock, x: torch.Tensor) -> list:
    """The code object of every Python function called while the block runs, in the order called."""
    called = []

    def on_event(frame, event, arg):
        if event == "call":
            called.append(frame.f_code)

    old = sys.getprofile()
    sys.setprofile(on_event)
    try:
        with torch.no_grad():
            block(x, return_trace=True)
    finally:
        sys.setprofile(old)
    return called


def test_the_function_shown_for_each_stage_is_the_one_that_ran(model, enc):
    """Run the block under a profiler: each stage's function is called, once, in the order of the stages,
    and the other placement's method never runs."""
    norm = model.config.norm
    called = functions_called(model.encoder.layer[0], block_input(model, enc))
    stage_of = {stage_function(stage, norm).__code__: stage for stage in core.stages_for(norm)}
    assert [stage_of[code] for code in called if code in stage_of] == list(core.stages_for(norm))
    other = stage_function("input", "pre" if norm == "post" else "post")
    assert other.__code__ not in called


def test_stage_code_refuses_an_unknown_stage():
    with pytest.raises(ValueError, match="unknown stage"):
        core.stage_code("norm_3", "post")


def written_out(block: EncoderBlock, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every stage of one block computed straight from its modules, each placement in full (eval: no dropout)."""
    attn, ln1, ln2 = block.attention, block.attention.output.LayerNorm, block.output.LayerNorm

    def attention(inp):
        return attn.output.dense(attn.self(inp)[0])

    def ffn(h):
        u = block.intermediate.dense(h)
        g = F.gelu(u)
        return u, g, block.output.dense(g)

    if block.config.norm == "post":
        a = attention(x)
        r1 = x + a
        h = ln1(r1)
        u, g, f = ffn(h)
        r2 = h + f
        return {
            "input": x,
            "attention": a,
            "residual_1": r1,
            "norm_1": h,
            "ffn_hidden": u,
            "ffn_activated": g,
            "ffn_output": f,
            "residual_2": r2,
            "norm_2": ln2(r2),
        }
    n1 = ln1(x)
    a = attention(n1)
    r1 = x + a
    n2 = ln2(r1)
    u, g, f = ffn(n2)
    return {
        "input": x,
        "norm_1": n1,
        "attention": a,
        "residual_1": r1,
        "norm_2": n2,
        "ffn_hidden": u,
        "ffn_activated": g,
        "ffn_output": f,
        "residual_2": r1 + f,
    }


@pytest.mark.parametrize("layer", [0, 1])
def test_trace_is_bit_identical_to_the_block_written_out(model, enc, layer):
    """The stage functions are shared by both placements: every stage is still exactly what each formula gives."""
    walk = core.walk_block(model, enc.ids, enc.segments, layer)
    with torch.no_grad():
        expected = written_out(model.encoder.layer[layer], walk.trace["input"][None])
    assert list(walk.trace) == list(expected) == list(core.stages_for(model.config.norm))
    for stage, tensor in expected.items():
        assert torch.equal(walk.trace[stage], tensor[0]), stage


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
    assert pos.learned_off_diagonal_mean == float(off.mean())
    assert pos.learned_off_diagonal_largest == float(off.abs().max())
    assert pos.neighbour_cosine == float(pos.sinusoid_similarity[0, 1])
    assert pos.farthest_cosine == float(pos.sinusoid_similarity[0, 39])


def test_length_cap_reports_the_real_refusal(model, tok):
    cap = core.length_cap(model, tok, SENTENCE)
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
    assert match.unshared == match.only_in_second
    assert core.compare_weights(pre, post).unshared == match.only_in_second
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
    assert study.grads_stable
    assert study.loudness == pytest.approx(0.02 * 8)
    assert study.sqrt_d == sqrt_d
    assert study.n_tokens == study.n_tokens_given == len(enc) and not study.cut
    for run in (study.post, study.pre):
        assert run.residual_span == core.Span(min(run.residual_norms), max(run.residual_norms))
        assert run.grad_span == core.Span(min(run.grad_norms), max(run.grad_norms))


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


def test_deep_stack_uses_at_most_64_tokens(tok):
    long = tok.encode(". " * 200)
    study = core.deep_stack_study(long.ids, long.segments, 12, 0)
    assert study.n_tokens == core.DEEP_STACK_MAX_TOKENS == 64
    assert study.n_tokens_given == len(long) > 64
    assert study.cut


def _study_with_grads(post_grads: list[float], pre_grads: list[float]) -> core.DeepStackStudy:
    def run(norm, grads):
        return core.DeepStackRun(norm, [8.0] * (len(grads) + 1), grads, 8.0)

    return core.DeepStackStudy(
        depth=len(post_grads),
        n_tokens=6,
        n_tokens_given=6,
        d_model=64,
        init_std=0.02,
        seed=0,
        post=run("post", post_grads),
        pre=run("pre", pre_grads),
        weights=core.WeightMatch(compared=1, max_abs_diff=0.0),
    )


def test_grads_stable_is_the_spread_below_its_threshold():
    assert core.STABLE_GRAD_SPREAD == 10
    steady = _study_with_grads([1.0, 2.0], [3.0, 9.9])
    assert steady.grad_spread == pytest.approx(9.9) and steady.grads_stable
    vanishing = _study_with_grads([1.0, 2.0], [0.05, 0.5])  # the smallest is in the other stack
    assert vanishing.grad_spread == pytest.approx(40.0) and not vanishing.grads_stable
    assert not _study_with_grads([1.0], [10.0]).grads_stable  # exactly 10x is no longer stable


def test_init_std_for_each_choice():
    assert core.INIT_CHOICES == ("bert", "width")
    assert core.init_std_for("bert", 64) == core.BERT_INIT_STD == 0.02
    assert core.init_std_for("width", 64) == core.width_matched_std(64)
    assert core.init_std_for("width", 768) == pytest.approx(0.02)  # BERT-base's own width needs no scaling
    with pytest.raises(ValueError, match="unknown initial weights"):
        core.init_std_for("loud", 64)
    assert core.BERT_BASE_LOUDNESS == pytest.approx(0.02 * math.sqrt(768))


@pytest.mark.parametrize("layer", [0, 1])
def test_block_matches_torch_encoder_layer(model, enc, layer):
    walk = core.walk_block(model, enc.ids, enc.segments, layer)
    with torch.inference_mode():
        diff = block_equivalence(model.encoder.layer[layer], walk.trace["input"][None])
    assert diff <= 1e-5
    check = core.check_against_pytorch(model.encoder.layer[layer], walk.trace["input"])  # (T, D): batched inside
    assert check == core.Equivalence(diff, 1e-5)
    assert check.agrees


def test_check_against_pytorch_fails_when_a_weight_is_perturbed(small_model, enc, monkeypatch):
    block = small_model.encoder.layer[0]
    x = core.walk_block(small_model, enc.ids, enc.segments, 0).trace["input"]
    original = reference_module.to_torch_layer

    def perturbed(b):
        layer = original(b)
        with torch.no_grad():
            layer.linear1.weight[0, 0] += 0.5  # one weight of PyTorch's copy, ours untouched
        return layer

    monkeypatch.setattr(reference_module, "to_torch_layer", perturbed)
    check = core.check_against_pytorch(block, x)
    assert check.max_abs_diff > 1e-3 and not check.agrees


def test_check_against_pytorch_catches_a_wrong_activation(small_model, enc):
    x = core.walk_block(small_model, enc.ids, enc.segments, 0).trace["input"]
    broken = copy.deepcopy(small_model.encoder.layer[0])
    broken.act = F.relu  # ours now ReLU; the reference keeps the config's GELU
    check = core.check_against_pytorch(broken, x)
    assert not check.agrees and check.max_abs_diff > 1e-3


def test_equivalence_verdict():
    assert core.Equivalence(1e-5, 1e-5).agrees  # the tolerance itself still agrees
    assert not core.Equivalence(1.01e-5, 1e-5).agrees
    assert not core.Equivalence(float("nan"), 1e-5).agrees


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
    assert (counts.d_model, counts.d_ff, counts.n_layers) == (768, 3072, 12)
    assert counts.total_formula == counts.total
    assert counts.stack_total == 12 * 7_087_872
    assert counts.ffn_share == pytest.approx(4_722_432 / 7_087_872)
    assert counts.attention == 4 * 768**2 + 4 * 768 == 2_362_368
    assert counts.ffn == 2 * 768 * 3072 + 3072 + 768 == 4_722_432
    assert counts.norms == 3072
    assert counts.total == 7_087_872


# ---- the answers to the lesson's predictions ------------------------------------------------


def _layer_norm_by_hand(x: np.ndarray, gain: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gain + bias


@pytest.mark.parametrize(("gain", "bias"), [(1.0, 0.0), (2.0, 0.5), ("random", "random")])
def test_norm_row_reads_the_embedding_layernorm_it_is_given(enc, gain, bias):
    """The row's statistics after the LayerNorm, recomputed in float64 numpy from the model's own gain and bias:
    1 and 0 as initialised, but never assumed (here also 2 and 0.5, and random)."""
    model = build_encoder(preset("small"), seed=4, init_std=TEACHING_STD)
    norm = model.embeddings.LayerNorm
    with torch.no_grad():
        g = torch.Generator().manual_seed(9)
        norm.weight.copy_(
            torch.rand(norm.weight.shape, generator=g) + 0.5 if gain == "random" else torch.full_like(norm.weight, gain)
        )
        norm.bias.copy_(
            torch.randn(norm.bias.shape, generator=g) if bias == "random" else torch.full_like(norm.bias, bias)
        )
    walk = core.walk_block(model, enc.ids, enc.segments, 0)
    summed = walk.embeddings.summed.double().numpy()
    after = _layer_norm_by_hand(
        summed, norm.weight.detach().double().numpy(), norm.bias.detach().double().numpy(), norm.eps
    )
    for position in range(len(enc)):
        row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, position)
        assert row.position == position
        assert row.std_before == pytest.approx(summed[position].std(), rel=1e-5)
        assert row.std_after == pytest.approx(after[position].std(), rel=1e-4, abs=1e-6)
        assert row.mean_after == pytest.approx(after[position].mean(), abs=1e-5)
    if (gain, bias) == (1.0, 0.0):  # as initialised: mean 0, std sqrt(var / (var + eps)), 1 in float32
        row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, 1)
        var = row.std_before**2
        assert row.std_after == pytest.approx(math.sqrt(var / (var + norm.eps)), rel=1e-5)
        assert abs(row.mean_after) < 1e-6
    affine = core.norm_affine(norm)
    assert affine.identity == ((gain, bias) == (1.0, 0.0))
    assert affine.gain == core.span(norm.weight.detach())
    assert affine.bias == core.span(norm.bias.detach())
    if (gain, bias) == (2.0, 0.5):
        assert (affine.gain, affine.bias) == (core.Span(2.0, 2.0), core.Span(0.5, 0.5))
        row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, 1)
        assert row.std_after == pytest.approx(2.0, rel=1e-3) and row.mean_after == pytest.approx(0.5, abs=1e-5)


def test_norm_row_refuses_a_missing_row():
    x = torch.randn(3, 8)
    with pytest.raises(ValueError, match="position must be in"):
        core.norm_row(x, x, 3)
    assert core.first_word_position(8) == 1 and core.first_word_position(1) == 0


def test_shape_choice_names_each_tensor_of_the_block(model, enc):
    """The FFN's inside is T x d_ff, its output T x d, an attention head's weights T x T, W_1 (as x @ W) d x d_ff:
    read from the trace and the modules, on both placements."""
    walk = core.walk_block(model, enc.ids, enc.segments, 0)
    T, d, d_ff = len(enc), walk.d_model, walk.d_ff
    with torch.inference_mode():
        weights = model(torch.tensor([enc.ids]), torch.tensor([enc.segments])).attentions[0][0, 0]

    def name(tensor):
        return core.SHAPE_CHOICES[core.shape_choice(tensor.shape, T, d, d_ff)]

    assert name(walk.trace["ffn_hidden"]) == name(walk.trace["ffn_activated"]) == "T x d_ff"
    assert all(name(walk.trace[s]) == "T x d" for s in ("input", "attention", "ffn_output", "residual_2"))
    assert name(weights) == "T x T"
    assert name(model.encoder.layer[0].intermediate.dense.weight.T) == "d x d_ff"
    with pytest.raises(ValueError, match="none of"):
        core.shape_choice((T, 3), T, d, d_ff)
    assert core.shape_choice((64, 64), 64, 64, 256) == 0  # T = d: the first matching choice


def _run(growth: float) -> core.DeepStackRun:
    return core.DeepStackRun("post", [8.0, 8.0 * growth], [1.0], 8.0)


def test_growth_outcome_names_each_case():
    def study(post: float, pre: float) -> core.DeepStackStudy:
        return core.DeepStackStudy(1, 6, 6, 64, 0.02, 0, _run(post), _run(pre), core.WeightMatch(0, 0.0))

    seen = [core.growth_outcome(study(p, q)) for p, q in ((1.5, 1.0), (1.0, 1.5), (1.5, 1.5), (1.0, 1.0))]
    assert seen == list(core.GROWTH_OUTCOMES)
    visible = core.GROWTH_VISIBLE
    assert core.growth_outcome(study(1.0, visible)) == "pre"
    assert core.growth_outcome(study(1.0, visible - 1e-6)) == "neither"  # a hair short of a tenth is no growth


@pytest.mark.parametrize(("init", "expected"), [("bert", "neither"), ("width", "pre")])
def test_growth_outcome_on_the_lessons_deep_stacks(enc, init, expected):
    """Post-norm's stream is pinned at sqrt(d) by every block's last LayerNorm; pre-norm's grows only with
    louder blocks. The outcome agrees with the norms the study measured, read here directly."""
    for seed in (0, 1):
        for depth in (12, 24):
            study = core.deep_stack_study(enc.ids, enc.segments, depth, seed, core.init_std_for(init, 64))
            post = study.post.residual_norms[-1] / study.post.residual_norms[0]
            pre = study.pre.residual_norms[-1] / study.pre.residual_norms[0]
            assert (post >= core.GROWTH_VISIBLE, pre >= core.GROWTH_VISIBLE) == (False, expected == "pre")
            assert core.growth_outcome(study) == expected
            # no coin toss: both streams end outside the band around the line, so the question is asked
            assert not core.GROWTH_VISIBLE / core.GROWTH_BAND < pre < core.GROWTH_VISIBLE * core.GROWTH_BAND
            assert core.growth_clear(study)


def test_a_stream_ending_near_the_line_is_too_close_to_call():
    def study(pre: float) -> core.DeepStackStudy:
        return core.DeepStackStudy(1, 6, 6, 64, 0.02, 0, _run(1.0), _run(pre), core.WeightMatch(0, 0.0))

    assert core.growth_clear(study(1.02)) and core.growth_clear(study(1.7))
    for near in (1.06, 1.09, 1.1, 1.14):
        assert not core.growth_clear(study(near))


def test_norm_std_traps_are_the_length_and_the_spread_before(enc):
    walk = core.walk_block(build_encoder(preset("small"), seed=0, init_std=TEACHING_STD), enc.ids, enc.segments, 0)
    row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, 1)
    summed = walk.embeddings.summed[1].double()
    assert core.norm_std_traps(row, 64) == pytest.approx({"length": 8.0, "kept": float(summed.std(unbiased=False))})
    close = core.NormRow(1, row.std_after * 1.05, 0.0, row.std_after)  # a spread before within 10 % of the answer
    assert set(core.norm_std_traps(close, 64)) == {"length"}


@pytest.mark.parametrize("layer", [0, 1])
def test_normalised_stages_are_exactly_the_layernorm_outputs(model, enc, layer):
    """At initialisation (gain 1, bias 0) a LayerNorm's output has spread 1 in every row; no other stage does."""
    walk = core.walk_block(model, enc.ids, enc.segments, layer)
    unit = {s for s in walk.stages if torch.allclose(walk.stats[s].std, torch.ones(len(enc)), atol=1e-4)}
    assert core.normalised_stages(model.config.norm, layer) == unit


def test_a_formula_without_its_shape():
    for norm in ("post", "pre"):
        hidden = core.stage_formula(norm, "ffn_hidden", shape=False)
        assert "4d" not in hidden and "\\in" not in hidden and hidden.startswith("u = ")
        assert core.stage_formula(norm, "ffn_hidden") == core.STAGE_FORMULAS[norm]["ffn_hidden"]
    assert set(core.FFN_WIDE_STAGES) < set(core.FFN_STAGES)


def test_ffn_output_norms_are_the_traced_ffn_outputs(model, enc):
    norms = core.ffn_output_norms(model, enc.ids, enc.segments)
    for layer in range(model.config.n_layers):
        walk = core.walk_block(model, enc.ids, enc.segments, layer)
        assert torch.allclose(norms[layer], walk.trace["ffn_output"].norm(dim=-1), atol=1e-5)


def test_ffn_token_choice_asks_the_first_layer_with_a_clear_winner():
    tokens = ["[CLS]", "a", "b", "c", "d", "[SEP]"]
    norms = torch.tensor(
        [
            [9.0, 1.0, 2.0, 3.0, 3.3, 9.0],  # layer 0: "d" leads "c" by 10 % only; [CLS] and [SEP] do not count
            [9.0, 1.0, 5.0, 2.0, 3.0, 9.0],  # layer 1: "b" leads by 5 / 3
            [0.0, 1.0, 1.0, 1.0, 1.0, 0.0],
        ]
    )
    choice = core.ffn_token_choice(norms, tokens, preferred=0)
    assert (choice.layer, choice.passed_over, choice.best) == (1, (0,), 2)
    assert choice.positions == (1, 2, 3, 4) and choice.lead == pytest.approx(5 / 3)
    assert choice.runner_up == 4  # "d" (3.0) is next; [CLS] and [SEP] (9.0) are not words
    assert core.ffn_token_choice(norms, tokens).layer == 1  # preferred: the last but one, then the nearest
    assert core.ffn_token_choice(norms[[0, 2]], tokens) is None  # no layer clears the margin
    assert core.ffn_token_choice(norms[:, :3], tokens[:3]) is None  # two words: too few
    assert core.layer_order(6, 4) == [4, 3, 5, 2, 1, 0]


ORDINARY = (
    "the cat sat on the mat",
    "a dog ran home",
    "interest rates rose again this quarter",
    "the bird flew",
    "coffee keeps me awake",
    "students learn faster when they predict first",
    "birds migrate south in winter",
)


def test_ffn_token_choice_on_minilm_leads_by_the_margin_and_follows_the_sentence(minilm):
    """On ordinary sentences the asked word's FFN output, measured here from the trace, is the longest of the
    sentence's words by FFN_TOKEN_MARGIN, the options hold it, and the answer differs between sentences."""
    answers = set()
    for text in ORDINARY:
        trained = core.ffn_norms_of(minilm.model, minilm.tokenizer, text, "MiniLM")
        choice = core.ffn_token_choice(trained.norms, trained.tokens)
        assert choice is not None, text
        enc = minilm.tokenizer.encode(text)
        walk = core.walk_block(minilm.model, enc.ids, enc.segments, choice.layer)
        lengths = walk.trace["ffn_output"].norm(dim=-1)
        words = [i for i, t in enumerate(enc.tokens) if t not in ("[CLS]", "[SEP]")]
        ranked = sorted(words, key=lambda i: -float(lengths[i]))
        assert choice.best == ranked[0] and float(lengths[ranked[0]]) >= core.FFN_TOKEN_MARGIN * float(
            lengths[ranked[1]]
        )
        assert len(set(choice.positions)) == len(choice.positions) == min(4, len(words))
        answers.add(enc.tokens[choice.best])
    assert len(answers) >= 4, answers
