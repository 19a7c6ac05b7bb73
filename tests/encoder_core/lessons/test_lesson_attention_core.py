"""The attention lesson's computations: invariants, an independent attention, the seed's numbers.

A test that runs the lesson on a model takes `lesson_model` (conftest.py): every model the sidebar offers."""

import math

import pytest
import torch

from encoder_core import build_encoder, preset
from encoder_core.lessons.attention import (
    DROP_OUTCOMES,
    LOOK_EXAMPLES,
    LOOK_MARGIN,
    MOVE_MARGIN,
    ROUNDING,
    ROW_MARGIN,
    DropLastResult,
    ahead_head,
    all_attention,
    compare_masks,
    contrast_word,
    drop_is_clear,
    drop_last_token,
    drop_outcome,
    drop_token,
    fewest_shared,
    last_word_position,
    layer_attention,
    look_ahead,
    look_ahead_run,
    moved_count,
    next_token_mass,
    row_facts,
    row_outcome,
    seed001_reading,
    shared_prefix_word,
    unchanged_rows,
)

BANK_A = "she sat on the bank of the river"
BANK_B = "she sat on the bank and counted the money"
SENTENCES = ["the cat sat down", "the old dog slept on the warm mat near the river because it was tired"]
# (layer, head) of heads that already look only backwards, so the causal mask changes them by less than 1e-3:
# MiniLM's previous-token head. Random weights spread every head of the small model over all tokens.
BACKWARD_HEADS = {"small": set(), "mlm": set(), "minilm": {(0, 2)}}


def reference_weights(block, x, head, causal):
    """softmax(q k^T / sqrt(d_head)) for one head of a post-norm block, written out by hand."""
    cfg = block.config
    sl = slice(head * cfg.d_head, (head + 1) * cfg.d_head)
    sa = block.attention.self
    with torch.no_grad():
        q = (x @ sa.query.weight.T + sa.query.bias)[:, sl]
        k = (x @ sa.key.weight.T + sa.key.bias)[:, sl]
    scores = q @ k.T / math.sqrt(cfg.d_head)
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1)


@pytest.mark.parametrize("sentence", SENTENCES)
def test_mask_comparison_invariants_at_every_layer_and_head(lesson_model, sentence):
    model = lesson_model.encoder
    ids = lesson_model.tokenizer.encode(sentence).ids
    for layer in range(model.config.n_layers):
        for head in range(model.config.n_heads):
            c = compare_masks(model, ids, layer, head)
            T = len(ids)
            assert c.bidirectional.shape == c.causal.shape == (T, T)
            assert max(abs(s - 1) for s in c.row_sums_bidirectional + c.row_sums_causal) < 1e-5
            assert c.max_row_sum_error < 1e-5
            assert bool((c.causal.triu(1) == 0).all()) and c.causal_upper_max == 0.0
            assert c.last_row_max_diff == 0.0  # same input: the mask removes nothing from the last row
            assert torch.equal(c.bidirectional[-1], c.causal[-1])
            # Same input, so each causal row is the bidirectional row cut at the diagonal and renormalised.
            kept = c.bidirectional.double().tril()
            torch.testing.assert_close(c.causal.double(), kept / kept.sum(-1, keepdim=True), rtol=0, atol=1e-6)
            # Without the mask, some query looks ahead: the two grids differ (but in a head that looks back only).
            looks_ahead = float((c.bidirectional - c.causal).abs().max()) > 1e-3
            assert looks_ahead == ((layer, head) not in BACKWARD_HEADS[lesson_model.choice])


def test_mask_comparison_matches_a_hand_written_attention_and_the_model_runs(lesson_model):
    model = lesson_model.encoder
    assert model.config.norm == "post"  # reference_weights reads the block input itself, as post-norm does
    ids = torch.tensor([lesson_model.tokenizer.encode(SENTENCES[0]).ids])
    with torch.inference_mode():
        bi_run, causal_run = model(ids), model(ids, causal=True)
    for layer in range(model.config.n_layers):
        x = bi_run.hidden_states[layer][0]
        for head in range(model.config.n_heads):
            c = compare_masks(model, ids[0], layer, head)
            assert torch.equal(c.layer_input, x)
            torch.testing.assert_close(c.bidirectional, reference_weights(model.encoder.layer[layer], x, head, False))
            torch.testing.assert_close(c.causal, reference_weights(model.encoder.layer[layer], x, head, True))
            # The bidirectional grid is the model's own attention at that layer.
            torch.testing.assert_close(c.bidirectional, bi_run.attentions[layer][0, head])
    # At layer 0 both runs share their input, so the causal grid is the causal model's own.
    c0 = compare_masks(model, ids[0], 0, 1)
    torch.testing.assert_close(c0.causal, causal_run.attentions[0][0, 1])
    assert c0.last_row_diff_own_runs == 0.0
    # Deeper, a fully causal model feeds the layer another input: its last row differs.
    assert compare_masks(model, ids[0], 1, 0).last_row_diff_own_runs > 1e-3


# Not on the lesson models: all three are post-norm; this builds a pre-norm model of its own.
def test_layer_attention_handles_pre_norm_blocks():
    m = build_encoder(preset("small", norm="pre"), seed=1, init_std=0.2)
    ids = torch.tensor([[2, 5, 6, 7, 3]])
    with torch.inference_mode():
        run = m(ids)
        w = layer_attention(m.encoder.layer[1], run.hidden_states[1], causal=False)
    torch.testing.assert_close(w, run.attentions[1])


def test_compare_masks_rejects_out_of_range_layer_and_head(lesson_model):
    model, cfg = lesson_model.encoder, lesson_model.config
    ids = lesson_model.tokenizer.encode("the cat").ids
    with pytest.raises(ValueError, match="layer"):
        compare_masks(model, ids, cfg.n_layers, 0)
    with pytest.raises(ValueError, match="head"):
        compare_masks(model, ids, 0, -1)
    with pytest.raises(ValueError, match="head"):
        compare_masks(model, ids, cfg.n_layers - 1, cfg.n_heads)
    compare_masks(model, ids, cfg.n_layers - 1, cfg.n_heads - 1)  # the last layer and head exist


@pytest.mark.parametrize("sentence", SENTENCES)
def test_drop_last_token_causal_gap_is_zero_to_rounding(lesson_model, sentence):
    ids = lesson_model.tokenizer.encode(sentence).ids
    r = drop_last_token(lesson_model.encoder, ids)
    assert r.positions == len(ids) - 1 == len(r.shift_causal) == len(r.shift_bidirectional)
    assert r.max_causal < ROUNDING and all(s < ROUNDING for s in r.shift_causal)
    assert r.max_bidirectional > 1e-3 and min(r.shift_bidirectional) > 1e-3


def test_drop_last_token_agrees_with_direct_runs(lesson_model):
    model = lesson_model.encoder
    ids = torch.tensor([lesson_model.tokenizer.encode(SENTENCES[0]).ids])
    with torch.inference_mode():
        full, short = model(ids).hidden[0, :-1], model(ids[:, :-1]).hidden[0]
    expected = [float(torch.linalg.vector_norm(a - b)) for a, b in zip(full, short)]
    # float32 rounding (another kernel path without the weights): 1e-6 at d = 64, 1e-5 at MiniLM's 384, of the
    # size of the vectors whose difference the shift measures (a small shift between large vectors keeps
    # their rounding: 1.4e-6 of a 0.73 shift under ATen's plain kernels, against vectors of norm ~8)
    tol = lesson_model.float32_tolerance
    size = float(torch.linalg.vector_norm(full, dim=-1).max())
    assert drop_last_token(model, ids[0]).shift_bidirectional == pytest.approx(expected, rel=tol, abs=tol * size)
    with pytest.raises(ValueError):
        drop_last_token(model, ids[0, :1])


@pytest.mark.parametrize("sentence", SENTENCES)
def test_dropping_the_last_word_keeps_sep_and_leaves_earlier_causal_outputs(lesson_model, sentence):
    model = lesson_model.encoder
    enc = lesson_model.tokenizer.encode(sentence)
    word = last_word_position(enc.tokens)
    assert enc.tokens[word] == sentence.split()[-1] and enc.tokens[word + 1] == "[SEP]"
    r = drop_token(model, enc.ids, word)
    assert r.positions == word == len(r.shift_causal)
    assert r.max_causal < ROUNDING and min(r.shift_bidirectional) > 1e-3
    ids = torch.tensor([enc.ids])
    shorter = torch.cat([ids[:, :word], ids[:, word + 1 :]], dim=1)  # [CLS] ... [SEP] without the last word
    with torch.inference_mode():
        full, short = model(ids).hidden[0, :word], model(shorter).hidden[0, :word]
    expected = [float(torch.linalg.vector_norm(a - b)) for a, b in zip(full, short)]
    assert r.shift_bidirectional == pytest.approx(expected, abs=1e-5)  # float32, another kernel path
    for bad in (0, len(enc.ids)):
        with pytest.raises(ValueError, match="position"):
            drop_token(model, enc.ids, bad)


def test_last_word_position():
    assert last_word_position(["[CLS]", "the", "cat", "[SEP]"]) == 2
    assert last_word_position(["[CLS]", "a", "[SEP]", "b", "[SEP]"]) == 3
    assert last_word_position(["[CLS]", "[SEP]"]) == 1


def test_bank_pair_is_in_the_vocabulary_and_shares_its_prefix(lesson_model):
    a, b = lesson_model.tokenizer.encode(BANK_A), lesson_model.tokenizer.encode(BANK_B)
    assert not a.unknown and not b.unknown
    assert shared_prefix_word(a.tokens, b.tokens, "bank") == 5
    assert a.tokens[6] != b.tokens[6]


def test_bank_vector_identical_under_causal_mask_and_not_without(lesson_model):
    model = lesson_model.encoder
    a, b = lesson_model.tokenizer.encode(BANK_A), lesson_model.tokenizer.encode(BANK_B)
    r = contrast_word(model, a.ids, b.ids, a.tokens, b.tokens, "bank")
    assert r.position == 5
    assert len(r.distance_causal) == model.config.n_layers + 1
    assert max(r.distance_causal) < ROUNDING and r.final_distance_causal < ROUNDING
    assert r.cosine_causal == pytest.approx(1.0, abs=1e-6)
    assert r.distance_bidirectional[0] == 0.0  # the embeddings do not see the other words yet
    assert r.final_distance_bidirectional > 1e-3
    assert r.cosine_bidirectional < 1 - 1e-4
    # Independent check of the final distance and cosine.
    with torch.inference_mode():
        va = model(torch.tensor([a.ids])).hidden[0, 5]
        vb = model(torch.tensor([b.ids])).hidden[0, 5]
    assert r.final_distance_bidirectional == pytest.approx(float((va - vb).norm()), rel=1e-6)
    cos = float(va @ vb / (va.norm() * vb.norm()))
    assert r.cosine_bidirectional == pytest.approx(cos, rel=1e-5)


def test_contrast_word_refuses_sentences_that_differ_before_the_word(lesson_model):
    tok = lesson_model.tokenizer
    a, b = tok.encode("she sat on the bank"), tok.encode("he sat on the bank")
    with pytest.raises(ValueError, match="identical"):
        contrast_word(lesson_model.encoder, a.ids, b.ids, a.tokens, b.tokens, "bank")
    with pytest.raises(ValueError, match="not among"):
        shared_prefix_word(a.tokens, b.tokens, "river")


def test_seed001_reading_reproduces_the_published_numbers():
    r = seed001_reading()
    assert r.example.row0 == [0.258, 0.020, 0.044, 0.677]
    assert r.example.future_mass_row0 == 0.742
    assert r.example.row_sums == [1.0, 1.0, 1.0, 1.0]
    assert (r.top_key, r.top_weight, r.self_weight) == (3, 0.677, 0.258)
    assert r.last_row_max_diff == 0.0


def test_seed001_matches_the_published_snippet_run_verbatim():
    """The source's own code (global torch.manual_seed(7)), without a forked RNG leaking into the suite."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        X = torch.randn(4, 3)
        Wq, Wk, _ = torch.randn(3, 3), torch.randn(3, 3), torch.randn(3, 2)
        weights = torch.softmax((X @ Wq) @ (X @ Wk).T / math.sqrt(3), dim=-1)
    torch.testing.assert_close(seed001_reading().example.weights_bidirectional, weights)


# ---- the answers to the lesson's predictions ----


@pytest.mark.parametrize("sentence", SENTENCES)
def test_dropping_a_token_moves_earlier_vectors_only_without_the_mask(lesson_model, sentence):
    ids = lesson_model.tokenizer.encode(sentence).ids
    for position in (len(ids) - 2, len(ids) - 1):  # the last word piece, and [SEP]
        result = drop_token(lesson_model.encoder, ids, position)
        assert drop_outcome(result) == "bidirectional", (result.max_causal, result.max_bidirectional)


def test_drop_outcome_names_each_case():
    def result(causal, bidirectional):
        return DropLastResult(3, [causal], [bidirectional], causal, bidirectional)

    seen = [drop_outcome(result(c, b)) for c, b in ((1.0, 0.0), (0.0, 1.0), (1.0, 1.0), (0.0, 0.0))]
    assert seen == list(DROP_OUTCOMES)
    assert drop_outcome(result(ROUNDING / 2, 1.0)) == "bidirectional"  # float rounding is not a move


@pytest.mark.parametrize("sentence", SENTENCES)
def test_the_rows_the_masks_share_are_the_last_and_the_backward_looking(lesson_model, sentence):
    cfg = lesson_model.config
    ids = lesson_model.tokenizer.encode(sentence).ids
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            cmp = compare_masks(lesson_model.encoder, ids, layer, head)
            by_hand = [
                i
                for i in range(len(ids))
                if max(abs(float(a) - float(b)) for a, b in zip(cmp.bidirectional[i], cmp.causal[i])) <= ROUNDING
            ]
            assert unchanged_rows(cmp) == by_hand
            assert len(ids) - 1 in by_hand  # the last token has nothing later to hide
            if (layer, head) not in BACKWARD_HEADS[lesson_model.choice]:
                assert row_outcome(cmp) == "last", (layer, head, by_hand)


# ---- the facts the predictions' feedback states, and when a question has one clear answer ----


@pytest.mark.parametrize("sentence", SENTENCES)
def test_row_facts_by_hand_and_askable_only_with_one_clear_answer(lesson_model, sentence):
    cfg = lesson_model.config
    ids = lesson_model.tokenizer.encode(sentence).ids
    asked = 0
    for layer in range(cfg.n_layers):
        for head in range(cfg.n_heads):
            cmp = compare_masks(lesson_model.encoder, ids, layer, head)
            facts = row_facts(cmp)
            bi = cmp.bidirectional.double()
            T = bi.shape[0]
            future = [float(bi[i, i + 1 :].sum()) for i in range(T)]
            assert facts.future == pytest.approx(future, abs=1e-6)
            assert facts.future[-1] == 0.0 and facts.unchanged == unchanged_rows(cmp)
            assert facts.busiest == max(range(T - 1), key=lambda i: future[i])
            # The causal mask turns row 0 into a single 1 on the first token: it changes by all it gave away.
            assert float(cmp.causal[0, 0]) == pytest.approx(1.0)
            assert facts.change[0] == pytest.approx(future[0], abs=1e-6)
            clear = facts.unchanged == [T - 1] and facts.change[0] >= ROW_MARGIN
            assert facts.askable == clear
            if facts.askable:  # then "the last row" is the one answer, and "first" or "every" are far from it
                asked += 1
                assert row_outcome(cmp) == "last" and facts.future[facts.busiest] >= ROW_MARGIN
            if (layer, head) in BACKWARD_HEADS[lesson_model.choice]:
                assert not facts.askable  # MiniLM's previous-token head: other rows stay the same too
    assert asked >= cfg.n_layers * cfg.n_heads // 2  # most heads ask


def test_drop_is_clear_and_moved_count():
    def result(causal, bidirectional):
        return DropLastResult(2, [causal, causal], bidirectional, causal, max(bidirectional))

    assert drop_is_clear(result(0.0, [0.5, 0.2])) and moved_count(result(0.0, [0.5, 0.2])) == 2
    assert not drop_is_clear(result(0.0, [5e-4, 1e-6]))  # a shift between rounding and MOVE_MARGIN
    assert not drop_is_clear(result(5e-4, [0.5, 0.2]))
    assert moved_count(result(0.0, [0.5, ROUNDING / 2])) == 1
    assert MOVE_MARGIN >= 100 * ROUNDING


@pytest.mark.parametrize("sentence", SENTENCES)
def test_dropping_a_token_is_always_clear(lesson_model, sentence):
    ids = lesson_model.tokenizer.encode(sentence).ids
    for position in (len(ids) - 2, len(ids) - 1):
        result = drop_token(lesson_model.encoder, ids, position)
        assert drop_is_clear(result) and moved_count(result) == position  # every vector before it moves


# Ordinary sentences a student might type: the look-ahead question's right option differs between them.
EVERYDAY_SENTENCES = (
    "the cat sat down",
    "my brother fixed the old bicycle",
    "we walked home after the film",
    "the ferry was late because of fog over the harbour",
    "she bought fresh bread at the market",
    "the children played football in the park",
)


@pytest.mark.parametrize("lesson_model", ["mlm", "minilm"], indirect=True)
def test_the_trained_look_ahead_head_and_its_question(lesson_model):
    model, tok = lesson_model.encoder, lesson_model.tokenizer
    first = tok.encode(LOOK_EXAMPLES[0])
    attn = all_attention(model, first.ids)
    T = len(first.tokens)
    # By hand: each head's mean weight on key i + 1 over the rows that have one.
    by_hand = attn[..., torch.arange(T - 1), torch.arange(1, T)].mean(-1)
    torch.testing.assert_close(next_token_mass(attn, first.tokens), by_hand)
    layer, head = ahead_head(attn, first.tokens)
    assert (layer, head) == {"mlm": (0, 1), "minilm": (1, 8)}[lesson_model.choice]  # as docs/lessons.md names them
    assert float(by_hand[layer, head]) == float(by_hand.max()) >= 0.4  # a head that mostly looks one token ahead
    answers = set()
    for sentence in EVERYDAY_SENTENCES:
        run = look_ahead_run(model, tok, sentence)
        assert (run.layer, run.head) == (layer, head)  # one head for every sentence
        la = run.question
        assert la is not None, sentence
        tokens = run.tokens
        row = run.grid[la.query]
        assert la.options[:3] == (la.query - 1, la.query, la.query + 1)
        assert all(tokens[p] not in ("[CLS]", "[SEP]") for p in la.options)
        weights = [float(row[p]) for p in la.options]
        ranked = sorted(weights, reverse=True)
        assert la.weights == pytest.approx(weights) and ranked[0] - ranked[1] >= LOOK_MARGIN
        assert la.answer == weights.index(ranked[0])
        answers.add(tokens[la.options[la.answer]])
        # The example it is shown on shares fewest tokens with the sentence, and the mass the feedback quotes.
        examples = [tok.encode(e).tokens for e in LOOK_EXAMPLES]
        shared = [len(set(tokens) & set(e) - {"[CLS]", "[SEP]"}) for e in examples]
        assert run.example_tokens == examples[shared.index(min(shared))]
        Te = len(run.example_tokens)
        expected = float(run.example_grid[torch.arange(Te - 1), torch.arange(1, Te)].mean())
        assert run.example_mass == pytest.approx(expected, abs=1e-6)
    assert len(answers) >= 5, answers  # the right option comes from the sentence


def test_look_ahead_needs_a_word_on_each_side_and_a_clear_favourite():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    grid = torch.full((5, 5), 0.2)
    assert look_ahead(grid, tokens, 0, 0) is None  # every option ties: no clear favourite anywhere
    grid[2] = torch.tensor([0.0, 0.1, 0.1, 0.8, 0.0])
    la = look_ahead(grid, tokens, 0, 0)
    assert la.query == 2 and la.roles == ("before", "itself", "after") and la.winner_role == "after"
    assert look_ahead(grid, ["[CLS]", "a", "b", "[SEP]", "[PAD]"], 0, 0) is None  # no word with a word each side
    assert fewest_shared(["[CLS]", "a", "b", "[SEP]"], [["[CLS]", "a", "[SEP]"], ["[CLS]", "c", "[SEP]"]]) == 1
