"""MLM corruption (counts, 80/10/10, labels) and the loss, checked by independent arithmetic."""

from __future__ import annotations

from fractions import Fraction

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from encoder_core import EncoderConfig, MaskedLanguageModel, WordTokenizer, loss_breakdown, preset
from encoder_core.objectives.mlm_masking import (
    IGNORE_INDEX,
    KEPT,
    MASKED,
    NOT_CHOSEN,
    RANDOM,
    MaskCounts,
    exact_counts,
    mask_tokens,
    round_half_up,
)

TOK = WordTokenizer()
SPECIAL = TOK.special_ids  # [PAD], [UNK], [CLS], [SEP], [MASK]
V = TOK.vocab_size


def _gen(seed):
    return torch.Generator().manual_seed(seed)


# ---------------------------------------------------------------- counts


def test_seed002_exercise1_200_tokens():
    # Seed 002, exercise 1: 15% of 200 = 30 positions; 80/10/10 -> 24 [MASK], 3 random, 3 unchanged.
    assert exact_counts(200) == MaskCounts(eligible=200, chosen=30, masked=24, random=3, kept=3)


def test_mask_tokens_on_a_202_token_row():
    g = _gen(0)
    body = torch.randint(5, V, (200,), generator=g)
    ids = torch.cat([torch.tensor([TOK.cls_id]), body, torch.tensor([TOK.sep_id])])[None]
    r = mask_tokens(ids, mask_id=TOK.mask_id, special_ids=SPECIAL, vocab_size=V, generator=_gen(1))
    assert r.counts() == MaskCounts(200, 30, 24, 3, 3)
    # Counted independently of MaskingResult.counts:
    assert int((r.labels != IGNORE_INDEX).sum()) == 30
    assert int((r.inputs == TOK.mask_id).sum()) == 24  # body ids are >= 5: no [MASK] was there before
    assert r.actions[0, 0] == NOT_CHOSEN and r.actions[0, -1] == NOT_CHOSEN


def _reference_counts(n, rate, p_mask=Fraction(8, 10), p_random=Fraction(1, 10)):
    """The documented rule in exact rational arithmetic: round half up = floor(x + 1/2)."""

    def rhu(x):
        return int((x + Fraction(1, 2)).__floor__())

    chosen = min(n, rhu(Fraction(rate) * n))
    masked = rhu(p_mask * chosen)
    random = min(rhu(p_random * chosen), chosen - masked)
    return chosen, masked, random, chosen - masked - random


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 3000), rate=st.sampled_from(["0.15", "0.1", "0.2", "0.25", "0.3", "0.5", "0.05", "1", "0"]))
def test_exact_counts_against_rational_arithmetic(n, rate):
    c = exact_counts(n, float(rate))
    assert (c.chosen, c.masked, c.random, c.kept) == _reference_counts(n, Fraction(rate))
    assert c.eligible == n and c.chosen == c.masked + c.random + c.kept


def test_small_counts_and_half_up_rounding():
    # Worked by hand: n=10 -> 1.5 -> 2 chosen -> 1.6 -> 2 [MASK]; n=3 -> 0.45 -> 0 chosen.
    assert exact_counts(10) == MaskCounts(10, 2, 2, 0, 0)
    assert exact_counts(3) == MaskCounts(3, 0, 0, 0, 0)
    assert exact_counts(20) == MaskCounts(20, 3, 2, 0, 1)  # 3 -> 2.4 -> 2 [MASK], 0.3 -> 0 random
    assert exact_counts(34) == MaskCounts(34, 5, 4, 1, 0)  # 5.1 -> 5 -> 4 [MASK], 0.5 -> 1 random
    assert [round_half_up(x) for x in (0.5, 1.5, 2.5, 2.4999, -0.5)] == [1, 2, 3, 2, 0]


# ---------------------------------------------------------------- mask_tokens invariants


def _check_result(ids, r):
    special = torch.isin(ids, torch.tensor(SPECIAL))
    chosen = r.actions != NOT_CHOSEN
    assert torch.equal(r.eligible, ~special)
    assert not chosen[special].any()  # never a special position
    assert torch.equal(r.inputs[special], ids[special])
    # Labels: -100 exactly where not chosen, the original id where chosen.
    assert torch.all(r.labels[~chosen] == IGNORE_INDEX)
    assert torch.equal(r.labels[chosen], ids[chosen])
    masked, rand, kept = r.actions == MASKED, r.actions == RANDOM, r.actions == KEPT
    assert torch.all(r.inputs[masked] == TOK.mask_id)
    assert torch.equal(r.inputs[kept], ids[kept])
    assert not torch.isin(r.inputs[rand], torch.tensor(SPECIAL)).any()  # replacements are ordinary words
    assert torch.equal(r.inputs[~chosen], ids[~chosen])


@settings(max_examples=40, deadline=None)
@given(
    B=st.integers(1, 4),
    T=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    rate=st.floats(0.0, 1.0),
    exact=st.booleans(),
    special_share=st.floats(0.0, 1.0),
)
def test_never_special_and_labels_line_up(B, T, seed, rate, exact, special_share):
    g = _gen(seed)
    ids = torch.randint(5, V, (B, T), generator=g)
    spots = torch.rand(B, T, generator=g) < special_share
    ids[spots] = torch.tensor(SPECIAL)[torch.randint(len(SPECIAL), (int(spots.sum()),), generator=g)]
    r = mask_tokens(
        ids, mask_id=TOK.mask_id, special_ids=SPECIAL, vocab_size=V, rate=rate, exact=exact, generator=_gen(seed)
    )
    _check_result(ids, r)
    if exact:  # each row's counts follow the rule for that row's eligible tokens
        for row in range(B):
            n = int((~torch.isin(ids[row], torch.tensor(SPECIAL))).sum())
            a = r.actions[row]
            got = (int((a != NOT_CHOSEN).sum()), int((a == MASKED).sum()), int((a == RANDOM).sum()))
            c = exact_counts(n, rate)
            assert got == (c.chosen, c.masked, c.random)


def test_same_generator_seed_same_result_and_other_seed_differs():
    ids = torch.randint(5, V, (4, 50), generator=_gen(9))
    for exact in (True, False):
        runs = [
            mask_tokens(ids, mask_id=4, special_ids=SPECIAL, vocab_size=V, exact=exact, generator=_gen(s))
            for s in (5, 5, 6)
        ]
        assert torch.equal(runs[0].inputs, runs[1].inputs) and torch.equal(runs[0].actions, runs[1].actions)
        assert not torch.equal(runs[0].actions, runs[2].actions)


def test_coin_flip_rates_close_to_15_and_80_10_10():
    ids = torch.randint(5, V, (100, 1000), generator=_gen(2))  # 100k eligible tokens
    r = mask_tokens(ids, mask_id=4, special_ids=SPECIAL, vocab_size=V, exact=False, generator=_gen(3))
    n = ids.numel()
    chosen = int(r.chosen.sum())
    assert abs(chosen / n - 0.15) < 0.005  # sd is 0.0011
    for action, share in ((MASKED, 0.8), (RANDOM, 0.1), (KEPT, 0.1)):
        assert abs(int((r.actions == action).sum()) / chosen - share) < 0.015
    # Random replacements spread over the ordinary vocabulary.
    picks = r.inputs[r.actions == RANDOM]
    assert picks.unique().numel() > 0.9 * (V - len(SPECIAL))


@pytest.mark.parametrize("exact", [True, False])
def test_rate_0_and_rate_1(exact):
    ids = torch.tensor([[2, 10, 11, 12, 13, 3, 0, 0]])
    none = mask_tokens(ids, mask_id=4, special_ids=SPECIAL, vocab_size=V, rate=0.0, exact=exact, generator=_gen(0))
    assert not none.chosen.any() and torch.equal(none.inputs, ids) and torch.all(none.labels == IGNORE_INDEX)
    every = mask_tokens(ids, mask_id=4, special_ids=SPECIAL, vocab_size=V, rate=1.0, exact=exact, generator=_gen(0))
    assert every.chosen.tolist() == [[False, True, True, True, True, False, False, False]]


@pytest.mark.parametrize("kw", [{"rate": -0.01}, {"rate": 1.5}, {"p_mask": 0.95, "p_random": 0.1}, {"p_mask": -0.1}])
def test_bad_rates_refused(kw):
    ids = torch.tensor([[2, 10, 3]])
    with pytest.raises(ValueError):
        mask_tokens(ids, mask_id=4, special_ids=SPECIAL, vocab_size=V, **kw)
    with pytest.raises(ValueError):
        exact_counts(10, **kw)


def test_bad_ids_refused():
    for ids in (torch.tensor([[2, V, 3]]), torch.tensor([[2, -1, 3]]), torch.tensor([2, 10, 3]), torch.ones(1, 3)):
        with pytest.raises(ValueError):
            mask_tokens(ids, mask_id=4, special_ids=SPECIAL, vocab_size=V)


# ---------------------------------------------------------------- loss


def test_loss_mean_equals_cross_entropy_ignore_index():
    g = _gen(4)
    logits = torch.randn(3, 7, 11, generator=g)
    labels = torch.full((3, 7), IGNORE_INDEX)
    labels[0, 1], labels[1, 4], labels[1, 5], labels[2, 0] = 3, 10, 0, 7
    lb = loss_breakdown(logits, labels)
    ref = F.cross_entropy(logits.view(-1, 11), labels.view(-1), ignore_index=-100)
    assert lb.mean == pytest.approx(float(ref), abs=1e-6)
    assert lb.n_counted == 4 and lb.n_positions == 21
    # Per position by hand: -log softmax at the label, 0 where ignored.
    logp = logits.log_softmax(-1)
    by_hand = torch.zeros(3, 7)
    for b, t in labels.ne(IGNORE_INDEX).nonzero().tolist():
        by_hand[b, t] = -logp[b, t, labels[b, t]]
    torch.testing.assert_close(lb.per_position, by_hand)
    assert torch.equal(lb.counted, labels != IGNORE_INDEX)


def test_seed004_six_positions_two_masked():
    # Seed 004: six positions, two masked -> average two token losses, not six.
    logits = torch.randn(1, 6, 8, generator=_gen(5))
    labels = torch.tensor([[-100, 3, -100, -100, 6, -100]])
    lb = loss_breakdown(logits, labels)
    l1 = float(-logits[0, 1].log_softmax(-1)[3])
    l4 = float(-logits[0, 4].log_softmax(-1)[6])
    assert (lb.n_counted, lb.n_positions) == (2, 6)
    assert lb.mean == pytest.approx((l1 + l4) / 2, abs=1e-6)
    assert lb.wrong_mean_all_positions == pytest.approx((l1 + l4) / 6, abs=1e-6)
    assert lb.wrong_mean_all_positions == pytest.approx(lb.mean / 3, abs=1e-6)


def test_loss_with_padding_and_nothing_chosen():
    logits = torch.randn(2, 4, 5, generator=_gen(6))
    labels = torch.tensor([[-100, 2, -100, -100], [-100, -100, -100, -100]])
    kpm = torch.tensor([[False] * 4, [False, False, True, True]])
    lb = loss_breakdown(logits, labels, kpm)
    assert lb.n_positions == 6 and lb.n_counted == 1
    assert lb.wrong_mean_all_positions == pytest.approx(lb.mean / 6, abs=1e-6)
    nothing = loss_breakdown(logits, torch.full((2, 4), IGNORE_INDEX))
    assert nothing.n_counted == 0 and nothing.mean != nothing.mean  # NaN: no loss to average
    with pytest.raises(ValueError):
        loss_breakdown(logits, labels[:, :3])


# ---------------------------------------------------------------- seed 004's shapes


def test_seed004_tiny_model_shapes():
    cfg = preset("tiny")
    model = MaskedLanguageModel(cfg).eval()
    mask_id = 5  # seed 004 reserves id 5 for [MASK]
    inputs = torch.tensor([[0, 1, mask_id, 3, 4]], dtype=torch.long)
    with torch.no_grad():
        logits, out = model(inputs)
    assert tuple(inputs.shape) == (1, 5)
    assert tuple(out.hidden.shape) == (1, 5, 12)
    assert tuple(logits.shape) == (1, 5, 6)
    masked_logits = logits[:, 2, :]
    assert tuple(masked_logits.shape) == (1, 6)
    loss = F.cross_entropy(masked_logits, torch.tensor([2]))
    assert loss.ndim == 0


def test_seed004_try_it_shapes():
    # B=8, T=20, D=48, V=1000; 12 masked positions in total.
    B, T, D, Vt = 8, 20, 48, 1000
    cfg = EncoderConfig(vocab_size=Vt, max_positions=T, d_model=D, n_heads=4, n_layers=1)
    model = MaskedLanguageModel(cfg).eval()
    g = _gen(7)
    ids = torch.randint(5, Vt, (B, T), generator=g)
    labels = torch.full((B, T), IGNORE_INDEX)
    where = torch.randperm(B * T, generator=g)[:12]
    labels.view(-1)[where] = ids.view(-1)[where]
    ids.view(-1)[where] = 4
    with torch.no_grad():
        logits, out = model(ids)
    assert tuple(out.hidden.shape) == (8, 20, 48)
    assert tuple(logits.shape) == (8, 20, 1000)
    selected = logits[labels != IGNORE_INDEX]
    assert tuple(selected.shape) == (12, 1000)
    lb = loss_breakdown(logits, labels)
    assert lb.n_counted == 12
    assert lb.mean == pytest.approx(float(F.cross_entropy(selected, labels[labels != IGNORE_INDEX])), abs=1e-5)


# ---------------------------------------------------------------- whole-word masking


def test_whole_word_masking_takes_every_piece_of_a_chosen_word_and_nothing_special():
    from encoder_core.objectives.mlm_masking import whole_word_mask

    # [CLS] w0 w1 ##1 ##1 w2 ##2 [SEP] [PAD], twice; ids 10.. are ordinary, 0-4 special
    ids = torch.tensor([[2, 10, 11, 12, 13, 14, 15, 3, 0]] * 2)
    continues = torch.tensor([[False, False, False, True, True, False, True, False, False]] * 2)
    words = [[1], [2, 3, 4], [5, 6]]
    seen_any = seen_split = False
    for seed in range(200):
        m = whole_word_mask(
            ids, continues, mask_id=4, special_ids=SPECIAL, rate=0.5, generator=_gen(seed),
            replacement_ids=torch.arange(20, 30),
        )  # fmt: skip
        assert (m.actions[:, [0, 7, 8]] == NOT_CHOSEN).all()
        for row in range(2):
            for w in words:
                acts = m.actions[row, w]
                assert (acts == acts[0]).all(), (seed, row, w, acts)  # one draw per word, for all its pieces
                seen_any |= bool(acts[0] != NOT_CHOSEN) and len(w) == 3
        chosen = m.actions != NOT_CHOSEN
        assert torch.equal(m.labels[chosen], ids[chosen]) and (m.labels[~chosen] == IGNORE_INDEX).all()
        assert (m.inputs[m.actions == MASKED] == 4).all() and torch.equal(
            m.inputs[m.actions == KEPT], ids[m.actions == KEPT]
        )
        assert ((m.inputs[m.actions == RANDOM] >= 20) & (m.inputs[m.actions == RANDOM] < 30)).all()
        seen_split |= bool(m.actions[0, 1] != m.actions[0, 2])
    assert seen_any and seen_split


def test_whole_word_masking_chooses_about_rate_of_the_words():
    from encoder_core.objectives.mlm_masking import whole_word_mask

    ids = torch.full((400, 50), 10)
    continues = torch.zeros_like(ids, dtype=torch.bool)
    continues[:, 1::2] = True  # 25 two-piece words a row
    m = whole_word_mask(
        ids,
        continues,
        mask_id=4,
        special_ids=SPECIAL,
        rate=0.15,
        generator=_gen(0),
        replacement_ids=torch.arange(20, 30),
    )
    chosen_words = (m.actions[:, 0::2] != NOT_CHOSEN).float().mean().item()
    assert 0.13 < chosen_words < 0.17
    assert torch.equal(m.actions[:, 0::2], m.actions[:, 1::2])
