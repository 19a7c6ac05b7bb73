"""Attention against the seeds' worked examples and against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from encoder_core import EncoderConfig, SelfAttention, additive_mask, attention
from encoder_core.data.examples import seed001_example, seed002_scores


def test_seed001_published_numbers():
    ex = seed001_example()
    assert ex.row0 == [0.258, 0.020, 0.044, 0.677]  # printed in seed 001
    assert ex.future_mass_row0 == 0.742
    assert ex.row_sums == [1.0, 1.0, 1.0, 1.0]
    torch.testing.assert_close(ex.weights_bidirectional.sum(-1), torch.ones(4))
    torch.testing.assert_close(ex.weights_causal.sum(-1), torch.ones(4))


def test_seed001_snippet_verbatim_agrees():
    # The seed's own code (global torch.manual_seed(7), plain softmax), run in a private RNG scope.
    with torch.random.fork_rng():
        torch.manual_seed(7)
        X = torch.randn(4, 3)
        Wq, Wk, _Wv = torch.randn(3, 3), torch.randn(3, 3), torch.randn(3, 2)  # Wv: drawn, as the seed does
    weights = torch.softmax((X @ Wq) @ (X @ Wk).T / math.sqrt(3), dim=-1)
    ex = seed001_example()
    torch.testing.assert_close(ex.weights_bidirectional, weights, atol=1e-6, rtol=0)
    assert torch.round(weights[0], decimals=3).tolist() == pytest.approx([0.258, 0.020, 0.044, 0.677], abs=1e-6)
    # Causal: the same scores with the future set to -inf, renormalised by hand.
    expected = torch.exp((X @ Wq) @ (X @ Wk).T / math.sqrt(3)) * torch.ones(4, 4).tril()
    expected = expected / expected.sum(-1, keepdim=True)
    torch.testing.assert_close(ex.weights_causal, expected, atol=1e-6, rtol=0)
    assert torch.all(ex.weights_causal.triu(1) == 0)


def _np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_seed002_exercise3_asserts_hold():
    T, dk = 6, 4
    Q, K = seed002_scores(T, dk, seed=0)
    # The exercise's inputs, drawn again here.
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(Q.numpy(), rng.standard_normal((T, dk)))
    np.testing.assert_array_equal(K.numpy(), rng.standard_normal((T, dk)))

    V = torch.eye(T, dtype=torch.float64)  # output = weights: checks the weights @ v product too
    out_bi, bidirectional = attention(Q, K, V)
    out_c, causal = attention(Q, K, V, causal=True)
    torch.testing.assert_close(out_bi, bidirectional)
    torch.testing.assert_close(out_c, causal)
    bidirectional, causal = bidirectional.numpy(), causal.numpy()

    assert bidirectional[0, 1:].sum() > 0.1
    assert np.allclose(causal[0, 1:].sum(), 0.0, atol=1e-6)
    assert causal[0, 1:].sum() == 0.0  # -inf masking: exactly zero, not just small
    assert np.all((bidirectional > 1e-9).sum(axis=1) == T)

    # And the exercise's own numpy reference.
    scores = Q.numpy() @ K.numpy().T / np.sqrt(dk)
    np.testing.assert_allclose(bidirectional, _np_softmax(scores), atol=1e-12)
    cs = scores.copy()
    cs[np.triu(np.ones((T, T)), k=1).astype(bool)] = -1e9
    np.testing.assert_allclose(causal, _np_softmax(cs), atol=1e-12)


def test_row_with_every_key_masked_is_zero_not_nan():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 5, 4, generator=g) for _ in range(3))  # (B, H, T, d)
    kpm = torch.tensor([[False, False, True, True, True], [True] * 5])
    out, w = attention(q, k, v, key_padding_mask=kpm)
    assert not torch.isnan(out).any() and not torch.isnan(w).any()
    assert torch.all(w[1] == 0) and torch.all(out[1] == 0)
    # Row 0 unaffected by row 1: equal to attention over its 2 real keys alone.
    out0, w0 = attention(q[:1, :, :, :], k[:1, :, :2], v[:1, :, :2])
    torch.testing.assert_close(w[0, :, :, :2], w0[0])
    torch.testing.assert_close(out[0], out0[0])
    # Causal + padding: query 0 sees only key 0; masking key 0 leaves query 0 nothing.
    kpm = torch.tensor([[True, False, False, False, False]] * 2)
    out, w = attention(q, k, v, causal=True, key_padding_mask=kpm)
    assert torch.all(w[:, :, 0] == 0) and torch.all(out[:, :, 0] == 0)
    torch.testing.assert_close(w[:, :, 1:].sum(-1), torch.ones(2, 3, 4))


def test_three_dim_input_with_padding_mask():
    # (B, T, d) without a head axis: the mask must broadcast per batch row, not per query.
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(2, 4, 3, generator=g) for _ in range(3))
    kpm = torch.tensor([[False, False, False, True], [False, True, True, True]])
    out, w = attention(q, k, v, key_padding_mask=kpm)
    assert torch.all(w[0, :, 3] == 0) and torch.all(w[1, :, 1:] == 0)
    torch.testing.assert_close(w[1, :, 0], torch.ones(4))
    torch.testing.assert_close(out[1], v[1, :1].expand(4, 3))


def test_additive_mask_values():
    m = additive_mask(3, causal=True)
    inf = float("-inf")
    assert m.tolist() == [[0.0, inf, inf], [0.0, 0.0, inf], [0.0, 0.0, 0.0]]
    kpm = torch.tensor([[False, True, False]])
    assert additive_mask(3, key_padding_mask=kpm).shape == (1, 1, 1, 3)
    assert additive_mask(3) is None


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
def test_sdpa_path_equals_explicit_path(causal, padded):
    cfg = EncoderConfig(vocab_size=10, d_model=32, n_heads=4)
    torch.manual_seed(3)
    sa = SelfAttention(cfg).eval()
    x = torch.randn(3, 7, 32)
    kpm = torch.zeros(3, 7, dtype=torch.bool)
    if padded:
        kpm[1, 5:] = True
        kpm[2, 2:] = True
    kpm = kpm if padded else None
    with torch.no_grad():
        explicit, w = sa(x, causal=causal, key_padding_mask=kpm, need_weights=True)
        fused, none = sa(x, causal=causal, key_padding_mask=kpm, need_weights=False)
    assert none is None and w.shape == (3, 4, 7, 7)
    torch.testing.assert_close(fused, explicit, atol=1e-6, rtol=0)


def test_self_attention_against_nn_multihead_attention():
    # nn.MultiheadAttention with the same projections (no output projection: set it to identity).
    cfg = EncoderConfig(vocab_size=10, d_model=24, n_heads=3)
    torch.manual_seed(4)
    sa = SelfAttention(cfg).eval()
    mha = torch.nn.MultiheadAttention(24, 3, batch_first=True).eval()
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]))
        mha.in_proj_bias.copy_(torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]))
        mha.out_proj.weight.copy_(torch.eye(24))
        mha.out_proj.bias.zero_()
        x = torch.randn(2, 6, 24)
        kpm = torch.tensor([[False] * 6, [False] * 4 + [True] * 2])
        ours, w = sa(x, key_padding_mask=kpm)
        theirs, tw = mha(x, x, x, key_padding_mask=kpm, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(ours, theirs, atol=1e-6, rtol=0)
    torch.testing.assert_close(w, tw, atol=1e-6, rtol=0)
