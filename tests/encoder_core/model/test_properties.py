"""Properties of the whole encoder that must hold for any input, and its input validation."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from encoder_core import EncoderConfig, build_encoder

CFG = EncoderConfig(vocab_size=40, max_positions=24, d_model=32, n_heads=4, n_layers=2)
# init_std 0.2: attention far from uniform, so a leak through a mask moves outputs visibly.
MODELS = {norm: build_encoder(CFG.with_(norm=norm), seed=3, init_std=0.2) for norm in ("post", "pre")}
MODELS64 = {norm: build_encoder(CFG.with_(norm=norm), seed=3, init_std=0.2).double() for norm in ("post", "pre")}
# An invariance is exact in exact arithmetic. In float32, kernels pick a summation order by
# shape (T changes it), so the same row can move by a few ulps (~1.5e-6 seen at |h| ~ 4).
# float64 shows the invariance to 1e-12; float32 gets a tolerance of a few ulps.
GAP = {torch.float32: 1e-5, torch.float64: 1e-12}
LEAK = 1e-4  # a real leak moves outputs by far more than this
SETTINGS = settings(max_examples=30, deadline=None)


def _model(norm, dtype):
    return (MODELS if dtype == torch.float32 else MODELS64)[norm]


@st.composite
def padded_batch(draw, max_b=3, max_t=16):
    B = draw(st.integers(1, max_b))
    lengths = draw(st.lists(st.integers(1, max_t), min_size=B, max_size=B))
    T = max(lengths) + draw(st.integers(0, 3))
    seed = draw(st.integers(0, 2**16))
    ids = torch.randint(1, CFG.vocab_size, (B, T), generator=torch.Generator().manual_seed(seed))
    kpm = torch.arange(T)[None, :] >= torch.tensor(lengths)[:, None]  # True at pads
    ids[kpm] = CFG.pad_id
    return ids, kpm


@SETTINGS
@given(batch=padded_batch(), causal=st.booleans(), norm=st.sampled_from(["post", "pre"]))
def test_weights_are_distributions_and_masks_are_exact(batch, causal, norm):
    ids, kpm = batch
    T = ids.shape[1]
    with torch.no_grad():
        out = MODELS[norm](ids, key_padding_mask=kpm, causal=causal)
    for w in out.attentions:
        assert w.shape == (ids.shape[0], CFG.n_heads, T, T)
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]), atol=1e-6, rtol=0)
        assert torch.all(w >= 0)
        assert torch.all(w.masked_select(kpm[:, None, None, :].expand_as(w)) == 0)  # masked keys: exactly 0
        if causal:
            assert torch.all(w.triu(1) == 0)  # the future: exactly 0
    assert not any(torch.isnan(h).any() for h in out.hidden_states)


@SETTINGS
@given(
    T=st.integers(1, 12),
    n_pads=st.integers(1, 8),
    seed=st.integers(0, 2**16),
    norm=st.sampled_from(["post", "pre"]),
    causal=st.booleans(),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_appending_pads_changes_nothing_with_the_mask(T, n_pads, seed, norm, causal, dtype):
    model = _model(norm, dtype)
    ids = torch.randint(1, CFG.vocab_size, (1, T), generator=torch.Generator().manual_seed(seed))
    padded = torch.cat([ids, torch.full((1, n_pads), CFG.pad_id)], dim=1)
    kpm = padded == CFG.pad_id
    with torch.no_grad():
        alone = model(ids, causal=causal, need_weights=False).hidden
        masked = model(padded, key_padding_mask=kpm, causal=causal, need_weights=False).hidden[:, :T]
        unmasked = model(padded, causal=causal, need_weights=False).hidden[:, :T]
    assert float((masked - alone).abs().max()) <= GAP[dtype]
    if not causal:  # causal already hides pads that come after every real token
        assert float((unmasked - alone).abs().max()) > LEAK


@SETTINGS
@given(
    T=st.integers(2, 16),
    seed=st.integers(0, 2**16),
    norm=st.sampled_from(["post", "pre"]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_causal_dropping_the_last_token_leaves_earlier_outputs(T, seed, norm, dtype):
    model = _model(norm, dtype)
    ids = torch.randint(1, CFG.vocab_size, (2, T), generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        full_c = model(ids, causal=True).hidden[:, : T - 1]
        cut_c = model(ids[:, : T - 1], causal=True).hidden
        full_b = model(ids).hidden[:, : T - 1]
        cut_b = model(ids[:, : T - 1]).hidden
    assert float((full_c - cut_c).abs().max()) <= GAP[dtype]
    assert float((full_b - cut_b).abs().max()) > LEAK  # bidirectional: the last token reached every position


def test_same_seed_same_numbers_other_seed_different():
    ids = torch.randint(1, CFG.vocab_size, (2, 10), generator=torch.Generator().manual_seed(0))
    a, b, c = build_encoder(CFG, seed=11), build_encoder(CFG, seed=11), build_encoder(CFG, seed=12)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    with torch.no_grad():
        assert torch.equal(a(ids).hidden, b(ids).hidden)
        assert not torch.equal(a(ids).hidden, c(ids).hidden)


def test_build_encoder_leaves_the_global_rng_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    build_encoder(CFG, seed=5)
    assert torch.equal(torch.rand(3), expected)


def test_need_weights_and_trace_do_not_change_the_output():
    ids = torch.randint(1, CFG.vocab_size, (2, 9), generator=torch.Generator().manual_seed(1))
    kpm = torch.zeros(2, 9, dtype=torch.bool)
    kpm[1, 6:] = True
    for model in MODELS.values():
        with torch.no_grad():
            plain = model(ids, key_padding_mask=kpm, need_weights=False)
            traced = model(ids, key_padding_mask=kpm, return_trace=True)
        assert plain.attentions is None and traced.traces is not None
        # Fused SDPA vs the explicit softmax: equal up to float32 rounding.
        torch.testing.assert_close(plain.hidden[~kpm], traced.hidden[~kpm], atol=GAP[torch.float32], rtol=0)
        last = traced.traces[-1]
        stage = "norm_2" if model.config.norm == "post" else "residual_2"
        assert torch.equal(last[stage], traced.hidden_states[len(traced.traces)])


# ---------------------------------------------------------------- input validation

MODEL = MODELS["post"]
GOOD = torch.randint(1, CFG.vocab_size, (2, 5), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((torch.tensor([[1, 2, CFG.vocab_size]]),), {}, "token ids"),
        ((torch.tensor([[1, -1, 2]]),), {}, "token ids"),
        ((torch.zeros(0, 5, dtype=torch.long),), {}, "empty"),
        ((torch.zeros(2, 0, dtype=torch.long),), {}, "empty"),
        ((torch.ones(1, CFG.max_positions + 1, dtype=torch.long),), {}, "max_positions"),
        ((GOOD.float(),), {}, "torch.long"),
        ((GOOD[0],), {}, "shape"),
        ((GOOD, torch.zeros(2, 4, dtype=torch.long)), {}, "segments"),
        ((GOOD, torch.full((2, 5), 2)), {}, "segment ids"),
        ((GOOD, None, torch.zeros(2, 4, dtype=torch.bool)), {}, "key_padding_mask"),
        ((GOOD, None, torch.zeros(2, 5, dtype=torch.long)), {}, "bool"),
        ((GOOD, None, torch.tensor([[False] * 5, [True] * 5])), {}, "no real token"),
    ],
)
def test_bad_input_is_a_value_error(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        MODEL(*args, **kwargs)


def test_longest_allowed_input_runs():
    ids = torch.ones(1, CFG.max_positions, dtype=torch.long)
    with torch.no_grad():
        assert MODEL(ids).hidden.shape == (1, CFG.max_positions, CFG.d_model)
