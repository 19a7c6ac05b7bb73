"""The padding lesson's computations: the mask's invariants, the pad leak, the zero-key check, the fast path.

A test that runs the lesson on a model takes `lesson_model` (conftest.py): every model the sidebar offers."""

import math

import numpy as np
import pytest
import torch
from independent import gap_with_pads_by_hand

from encoder_core.data.examples import seed001_example
from encoder_core.lessons.padding import (
    LEAK_MIN_PADS,
    LEAK_ROUNDING,
    LEAK_TREND_MARGIN,
    LEAK_TRENDS,
    PAD_SHARE_MIN,
    PAD_SHARE_TOLERANCE,
    PadLeak,
    accepted_trends,
    even_is_far,
    even_share,
    fast_path_pad_outputs,
    leak_ends,
    leak_trend,
    mean_pad_share,
    pad_count,
    pad_leak,
    padded_attention,
    seed001_tensors,
    zero_key_pad_check,
)


def seed_batch(tok, extra_pads=0):
    return tok.pad(
        [tok.encode("the cat sat on the mat", "it was happy"), tok.encode("the cat sat")], extra_pads=extra_pads
    )


def test_default_batch_is_the_seed_batch(lesson_model):
    b = seed_batch(lesson_model.tokenizer)
    assert b.lengths == [12, 5] and b.ids.shape == (2, 12)
    assert b.tokens[1] == ["[CLS]", "the", "cat", "sat", "[SEP]"] + ["[PAD]"] * 7
    assert b.key_padding_mask[1].tolist() == [False] * 5 + [True] * 7
    assert not bool(b.key_padding_mask[0].any())
    assert b.segments[0].tolist() == [0] * 8 + [1] * 4
    assert bool((b.ids[1, 5:] == lesson_model.config.pad_id).all())  # the pads are the model's own pad id


@pytest.mark.parametrize("extra", [0, 9])
def test_masked_pad_columns_are_exactly_zero_at_every_layer_and_head(lesson_model, extra):
    model = lesson_model.encoder
    b = seed_batch(lesson_model.tokenizer, extra)
    for layer in range(model.config.n_layers):
        for head in range(model.config.n_heads):
            pa = padded_attention(model, b, 1, layer, head)
            n = pa.n_real
            assert n == 5 and pa.masked.shape == (12 + extra, 12 + extra)
            assert bool((pa.masked[:, n:] == 0).all()) and pa.masked_pad_column_max == 0.0
            assert pa.pad_mass_masked == [0.0] * n
            # Unmasked, a softmax over finite scores gives every pad key some weight in every real row.
            assert min(pa.pad_mass_unmasked) > 0.0
            # ... and every head gives the pads a visible share somewhere (trained heads may all but
            # ignore [PAD] in some rows: MiniLM's least is 7e-9, the MLM's 1e-4).
            assert max(pa.pad_mass_unmasked) > 1e-4
            if lesson_model.choice == "small":  # random weights spread every row of every head over the pads
                assert min(pa.pad_mass_unmasked) > 1e-4
            torch.testing.assert_close(pa.masked.sum(-1), torch.ones(12 + extra))
            torch.testing.assert_close(pa.unmasked.sum(-1), torch.ones(12 + extra))
            torch.testing.assert_close(torch.tensor(pa.pad_mass_unmasked), pa.unmasked[:n, n:].sum(-1))


def test_padded_attention_rejects_a_bad_row_layer_or_head(lesson_model):
    model, cfg = lesson_model.encoder, lesson_model.config
    b = seed_batch(lesson_model.tokenizer)
    with pytest.raises(ValueError):
        padded_attention(model, b, 2, 0, 0)
    with pytest.raises(ValueError):
        padded_attention(model, b, 1, cfg.n_layers, 0)
    with pytest.raises(ValueError):
        padded_attention(model, b, 1, 0, cfg.n_heads)
    padded_attention(model, b, 1, cfg.n_layers - 1, cfg.n_heads - 1)  # the last layer and head exist


@pytest.mark.parametrize("extra", [0, 5, 32])
def test_pad_leak_gap_is_zero_with_the_mask_and_not_without(lesson_model, extra):
    b = seed_batch(lesson_model.tokenizer, extra)
    leak = pad_leak(lesson_model.encoder, b, 1)
    assert leak.n_pads == 7 + extra
    assert leak.gap_masked <= 1e-6
    assert leak.gap_unmasked > 1e-4
    assert len(leak.per_token_masked) == len(leak.per_token_unmasked) == 5
    assert leak.pad_counts[0] == 0 and leak.pad_counts[-1] == 7 + extra
    assert leak.curve_masked[0] == 0.0 and leak.curve_unmasked[0] == 0.0  # no pads: nothing to leak
    assert max(leak.curve_masked) <= 1e-6
    assert min(leak.curve_unmasked[1:]) > 1e-4
    # The curve's last point is this batch's row: the same gap.
    assert leak.curve_unmasked[-1] == pytest.approx(leak.gap_unmasked, rel=1e-9)
    assert len(set(np.round(leak.curve_unmasked[1:], 9))) > 1  # it depends on how many pads there are


def test_pad_leak_in_float32_would_only_show_rounding_noise(lesson_model):
    """Why the gap is computed in float64: in float32 a masked batch differs by a few rounding units."""
    model = lesson_model.encoder
    b = seed_batch(lesson_model.tokenizer)
    with torch.inference_mode():
        alone = model(b.ids[1:, :5], b.segments[1:, :5]).hidden[0]
        batched = model(b.ids, b.segments, b.key_padding_mask).hidden[1, :5]
    assert float((alone - batched).abs().max()) < 1e-4
    assert pad_leak(model, b, 1).gap_masked < 1e-12


def test_pad_leak_leaves_the_model_untouched(lesson_model):
    model = lesson_model.encoder
    b = seed_batch(lesson_model.tokenizer)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    pad_leak(model, b, 1)
    fast_path_pad_outputs(model, b, 1)
    after = model.state_dict()
    assert all(after[k].dtype == torch.float32 and torch.equal(after[k], v) for k, v in before.items())
    assert not model.training


def test_pad_leak_with_a_row_that_has_no_pads(lesson_model):
    tok = lesson_model.tokenizer
    b = tok.pad([tok.encode("the cat sat")])
    leak = pad_leak(lesson_model.encoder, b, 0)
    assert leak.n_pads == 0 and leak.pad_counts == [0]
    assert leak.gap_masked == leak.gap_unmasked == 0.0


def test_seed001_tensors_are_the_worked_examples():
    X, Wq, Wk, Wv = seed001_tensors()
    w = torch.softmax((X @ Wq) @ (X @ Wk).T / 3**0.5, dim=-1)
    torch.testing.assert_close(w, seed001_example().weights_bidirectional)


def test_zero_key_pad_check_against_numpy():
    X, Wq, Wk, Wv = (t.double().numpy() for t in seed001_tensors())
    x3 = X[:3]
    scores = (x3 @ Wq) @ (x3 @ Wk).T / np.sqrt(3)
    scores = np.concatenate([scores, np.zeros((3, 1))], axis=1)  # a zero key scores 0 against every query
    w = np.exp(scores) / np.exp(scores).sum(1, keepdims=True)
    v = np.concatenate([x3 @ Wv, np.zeros((1, 2))])
    alone_w = np.exp(scores[:, :3]) / np.exp(scores[:, :3]).sum(1, keepdims=True)
    gap = np.abs(w @ v - alone_w @ (x3 @ Wv)).max()

    c = zero_key_pad_check()
    assert c.pad_weight_unmasked == pytest.approx(w[:, 3].tolist(), abs=1e-6)
    # What seed 7's tensors give (the source text quotes other figures for its version of the check).
    assert [round(p, 3) for p in c.pad_weight_unmasked] == [0.002, 0.984, 0.085]
    assert c.gap_unmasked == pytest.approx(gap, abs=1e-5) and c.gap_unmasked > 1e-4
    assert c.gap_masked < 1e-6  # 3 keys alone vs 4 with one masked: float32 rounding at most
    assert bool((c.weights_masked[:, 3] == 0).all())
    torch.testing.assert_close(c.weights_unmasked[3], torch.full((4,), 0.25))  # zero query: uniform
    torch.testing.assert_close(c.outputs_masked[3], c.mean_real_value)  # the pad averages the real values
    torch.testing.assert_close(c.outputs_masked[:3], c.outputs_alone)


def test_fast_path_zeroes_pad_outputs_in_eval_mode_only(lesson_model):
    model = lesson_model.encoder
    b = seed_batch(lesson_model.tokenizer, 3)
    state = torch.random.get_rng_state()
    fp = fast_path_pad_outputs(model, b, 1, seed=4)
    assert torch.equal(state, torch.random.get_rng_state())  # the fresh module's init did not touch global RNG
    assert fp.pad_positions == list(range(5, 15))
    assert fp.norms_eval == [0.0] * 10
    # Train mode computes the pad rows like any token: its final LayerNorm gives them a norm near sqrt(d_model).
    assert min(fp.norms_train) > 1.0
    assert fp.real_max_diff < 1e-4
    assert fast_path_pad_outputs(model, b, 1, seed=4).norms_train == fp.norms_train  # seeded: repeatable


# ---- the answers to the lesson's predictions ----


def pad_share_by_hand(model, batch, row, layer, head) -> float:
    """Without the mask: softmax(q k^T / sqrt(d_head)) of one head written out from the block's weights,
    its weight on the row's pad keys summed per real query, averaged over the real queries."""
    cfg = model.config
    block = model.encoder.layer[layer]
    with torch.inference_mode():
        x = model(batch.ids, batch.segments).hidden_states[layer][row]  # no mask: the pads are ordinary tokens
        h = x if cfg.norm == "post" else block.attention.output.LayerNorm(x)
        sa, cols = block.attention.self, slice(head * cfg.d_head, (head + 1) * cfg.d_head)
        q = (h @ sa.query.weight.T + sa.query.bias)[:, cols].double()
        k = (h @ sa.key.weight.T + sa.key.bias)[:, cols].double()
    w = torch.softmax(q @ k.T / math.sqrt(cfg.d_head), dim=-1)
    n = batch.lengths[row]
    return float(w[:n, n:].sum(-1).mean())


@pytest.mark.parametrize("extra", [0, 6])
def test_mean_pad_share_is_the_weight_on_the_pads_by_hand(lesson_model, extra):
    model, b = lesson_model.encoder, seed_batch(lesson_model.tokenizer, extra)
    for layer in range(model.config.n_layers):
        for head in range(model.config.n_heads):
            share = mean_pad_share(padded_attention(model, b, 1, layer, head))
            assert share == pytest.approx(pad_share_by_hand(model, b, 1, layer, head), abs=1e-5)
            assert 0.0 < share < 1.0


def test_mean_pad_share_is_zero_without_pads(lesson_model):
    tok = lesson_model.tokenizer
    b = tok.pad([tok.encode("the cat sat"), tok.encode("a dog")])  # the first row is the longest: no pads
    assert mean_pad_share(padded_attention(lesson_model.encoder, b, 0, 0, 0)) == 0.0


def test_the_leak_curve_reaches_min_pads_and_keeps_the_batch_point(lesson_model):
    b = seed_batch(lesson_model.tokenizer)  # 7 pads on the single sentence
    leak = pad_leak(lesson_model.encoder, b, 1, min_pads=LEAK_MIN_PADS)
    assert leak.pad_counts[0] == 0 and leak.pad_counts[-1] == LEAK_MIN_PADS and 7 in leak.pad_counts
    assert leak.pad_counts == sorted(set(leak.pad_counts))
    # The batch's own point is still the batch's gap, now in the middle of the curve.
    assert leak.curve_unmasked[leak.pad_counts.index(7)] == pytest.approx(leak.gap_unmasked, rel=1e-9)
    assert max(leak.curve_masked) <= LEAK_ROUNDING
    # A batch wider than min_pads keeps its own width as the curve's end.
    wide = pad_leak(lesson_model.encoder, seed_batch(lesson_model.tokenizer, 12), 1, min_pads=LEAK_MIN_PADS)
    assert wide.pad_counts[-1] == 19 and LEAK_MIN_PADS in wide.pad_counts


@pytest.mark.parametrize("text", ["the cat sat", "a very long sentence about nothing in particular at all"])
def test_without_the_mask_more_pads_move_the_outputs_further(lesson_model, text):
    tok = lesson_model.tokenizer
    leak = pad_leak(lesson_model.encoder, tok.pad([tok.encode(text)]), 0, min_pads=LEAK_MIN_PADS)
    assert leak.n_pads == 0 and leak.pad_counts[-1] == LEAK_MIN_PADS and 1 in leak.pad_counts
    assert leak_trend(leak) == "grows", leak.curve_unmasked
    by_hand = {p: gap_with_pads_by_hand(lesson_model.encoder, tok, text, p) for p in (1, LEAK_MIN_PADS)}
    assert leak.curve_unmasked[leak.pad_counts.index(1)] == pytest.approx(by_hand[1], rel=1e-9)
    assert leak.curve_unmasked[-1] == pytest.approx(by_hand[LEAK_MIN_PADS], rel=1e-9)
    assert by_hand[LEAK_MIN_PADS] > 1.1 * by_hand[1]  # what "grows" says, seen without the lesson's code


def test_leak_trend_names_each_case():
    def leak(curve):
        counts = list(range(len(curve)))
        return PadLeak(0, counts[-1], 0.0, curve[-1], [], [], counts, [0.0] * len(curve), curve)

    seen = [leak_trend(leak(c)) for c in ([0, 1.0, 2.0], [0, 1.0, 1.05], [0, 1e-9, 2e-9], [0, 2.0, 1.0])]
    assert seen == list(LEAK_TRENDS)
    assert leak_trend(leak([0, 0.0, 1.0])) == "grows"  # nothing at one pad, then a move
    with pytest.raises(ValueError):
        leak_trend(leak([0, 1.0]))  # one pad count: no trend to read


def test_accepted_trends_count_a_neighbour_only_on_a_bands_edge():
    def leak(curve):
        counts = list(range(len(curve)))
        return PadLeak(0, counts[-1], 0.0, curve[-1], [], [], counts, [0.0] * len(curve), curve)

    assert accepted_trends(leak([0, 1.0, 2.0])) == {"grows"}  # clearly growing
    assert accepted_trends(leak([0, 1.0, 1.0])) == {"same"}
    assert accepted_trends(leak([0, 1.0, 1.12])) == {"grows", "same"}  # 1.12 is within 5 % of the edge at 1.1
    assert accepted_trends(leak([0, 1.0, 0.88])) == {"shrinks", "same"}
    assert accepted_trends(leak([0, 1e-9, 2e-9])) == {"still"}
    assert leak_ends(leak([0, 1.0, 1.5, 2.0])) == ((1, 1.0), (3, 2.0))
    assert LEAK_TREND_MARGIN > 0


@pytest.mark.parametrize("text", ["the cat sat", "she slept"])
def test_the_leak_trend_grows_and_counts_same_too_only_near_the_edge(lesson_model, text):
    tok = lesson_model.tokenizer
    leak = pad_leak(lesson_model.encoder, tok.pad([tok.encode(text)]), 0, min_pads=LEAK_MIN_PADS)
    (_, first), (_, last) = leak_ends(leak)
    near_edge = last / first < 1.1 * (1 + LEAK_TREND_MARGIN)  # the small model on "she slept": 1.14
    assert accepted_trends(leak) == ({"grows", "same"} if near_edge else {"grows"})


# (pair A, pair B, single, extra pads): ordinary inputs a student might type.
EVERYDAY_BATCHES = (
    ("the cat sat on the mat", "it was happy", "the cat sat", 0),
    ("my brother fixed the old bicycle", "it works again", "we walked home", 0),
    ("the ferry was late", "fog covered the harbour", "she slept", 2),
    ("children played football in the park", "the sun was out", "rain fell all day long", 0),
    ("a dog barked", "it was late", "the unbelievably fluffy cat sat on the doormat", 3),
)


def test_pad_count_by_counting_and_what_each_miscount_gives(tok):
    answers = set()
    for a, b, single, extra in EVERYDAY_BATCHES:
        pair_enc, single_enc = tok.encode(a, b), tok.encode(single)
        count = pad_count(pair_enc, single_enc, extra)
        batch = tok.pad([pair_enc, single_enc], extra_pads=extra)
        assert count.answer == int(batch.key_padding_mask[1].sum())  # the batch's own pads on the single row
        # By hand: every word piece is a token; a pair adds [CLS] and two [SEP], a single sentence [CLS] and [SEP].
        pieces = [len(tok.encode(w).tokens) - 2 for w in (a + " " + b).split()]
        single_pieces = [len(tok.encode(w).tokens) - 2 for w in single.split()]
        n_pair, n_single = sum(pieces) + 3, sum(single_pieces) + 2
        assert count.answer == max(n_pair, n_single) + extra - n_single
        expected = {
            "one_sep": max(n_pair - 1, n_single) + extra - n_single,
            "cls_each": max(n_pair + 1, n_single) + extra - n_single,
            "words": max(len((a + " " + b).split()) + 3, len(single.split()) + 2) + extra - (len(single.split()) + 2),
            "no_extra": max(n_pair, n_single) - n_single,
        }
        for name, n in count.miscounts.items():
            assert n == expected[name] != count.answer
        assert ("words" in count.miscounts) <= (count.split is not None)
        if count.split is not None:
            word, parts = count.split
            assert len(tok.encode(word).tokens) - 2 == len(parts) > 1
        answers.add(count.answer)
    assert len(answers) >= 4, answers  # the right option comes from the sentences


def test_even_share_and_when_it_is_far_enough_to_name(lesson_model):
    pa = padded_attention(lesson_model.encoder, seed_batch(lesson_model.tokenizer), 1, 0, 0)
    assert even_share(pa) == pytest.approx(7 / 12)
    assert even_is_far(0.2, 0.6) and not even_is_far(0.5, 0.6) and not even_is_far(0.0, 0.6)
    assert PAD_SHARE_MIN > 0 and PAD_SHARE_TOLERANCE == 0.25
