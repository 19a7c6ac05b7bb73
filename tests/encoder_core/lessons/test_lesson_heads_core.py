"""The heads lesson's numbers: per-head recomputation vs the block, head labels, word pieces,
sentence-vector similarities.

A test that runs the lesson on a model takes `lesson_model` (conftest.py): every model the sidebar offers.
Tests about what pretraining taught MiniLM (its head patterns, word pieces, sentence vectors, the
parts of the page that always show MiniLM) stay on `minilm`. MiniLM cases skip when the model
package is not installed (except under CI=true, where it is part of the setup)."""

from dataclasses import replace

import pytest
import torch
import torch.nn.functional as F

from encoder_core import build_encoder, preset
from encoder_core.lessons.heads import (
    BANK_MONEY,
    BANK_RIVER,
    BANK_RIVER_AGAIN,
    MECHANICS_TOLERANCE,
    MIN_OPTIONS,
    PREVIOUS_MARGIN,
    TOP_KEY_MARGIN,
    SameWordMass,
    all_unknown,
    cosine_matrix,
    fragmentation,
    head_mechanics,
    piece_spans,
    positional_heads,
    previous_token_choice,
    run_encoder,
    same_word_mass,
    sentence_splits,
    similarities,
    sink_summary,
    top_key_choice,
    word_index,
    word_vector_cosines,
)
from encoder_core.model.head_patterns import HeadLabel, label_heads
from encoder_core.pretrained.minilm import sentence_embeddings

EXAMPLE = ("the cat sat on the mat", "it was happy")


def check_mechanics_identity(r, cfg, T, tolerance):
    """head_mechanics' recomputation agrees with the block, and its parts have the model's sizes."""
    assert r.max_abs_error <= tolerance
    assert r.weights_error <= tolerance
    # The identity, checked here once more from the returned parts.
    assert torch.allclose(r.concat @ r.w_o.T + r.b_o, r.block_attention, atol=tolerance)
    assert r.concat.shape == (T, cfg.d_model) and r.q.shape == (T, cfg.d_head)
    assert r.all_weights.shape == (cfg.n_heads, T, T) and r.n_heads == cfg.n_heads and r.d_head == cfg.d_head


def test_concat_of_heads_through_w_o_is_the_blocks_attention_output(lesson_model):
    model, cfg = lesson_model.encoder, lesson_model.config
    enc = lesson_model.tokenizer.encode(*EXAMPLE)
    for layer in range(cfg.n_layers):
        r = head_mechanics(model, enc, layer, 1)
        # float32 sums of d_model terms: 1e-6 at d = 64, 1e-5 at MiniLM's 384
        check_mechanics_identity(r, cfg, len(enc), lesson_model.float32_tolerance)


# Not on the lesson models: all three are post-norm; this builds a pre-norm model of its own.
def test_concat_of_heads_through_w_o_is_the_pre_norm_blocks_attention_output(tok):
    model = build_encoder(preset("small", norm="pre"), seed=1, init_std=0.2)
    enc = tok.encode(*EXAMPLE)
    for layer in range(model.config.n_layers):
        check_mechanics_identity(head_mechanics(model, enc, layer, 1), model.config, len(enc), 1e-6)


def test_heads_are_column_slices_of_the_full_projections(lesson_model):
    model, cfg = lesson_model.encoder, lesson_model.config
    enc = lesson_model.tokenizer.encode(*EXAMPLE)
    r = head_mechanics(model, enc, 1, 2)
    sub = model.encoder.layer[1].attention.self
    with torch.no_grad():
        full_q = sub.query(r.block_input)  # (T, D), all heads at once
    cols = slice(2 * cfg.d_head, 3 * cfg.d_head)
    atol = lesson_model.float32_tolerance  # another kernel path: 1e-6 at d = 64, 1e-5 at MiniLM's 384
    assert torch.allclose(r.q, full_q[:, cols], atol=atol)
    assert torch.allclose(r.concat[:, cols], r.head_outputs[2], atol=atol)
    assert torch.allclose(r.weights.sum(-1), torch.ones(len(enc)), atol=1e-6)
    shapes = dict(r.shapes())
    T = len(enc)
    assert shapes["Q, K, V of head 2"] == (T, cfg.d_head)
    assert shapes["concatenation"] == (T, cfg.d_model)
    assert shapes["W_O"] == (cfg.d_model, cfg.d_model)
    assert shapes["weights of all heads"] == (cfg.n_heads, T, T)


def test_a_wrong_w_o_would_be_caught(lesson_model):
    r = head_mechanics(lesson_model.encoder, lesson_model.tokenizer.encode(*EXAMPLE), 0, 0)
    # W_O not transposed: far outside even MiniLM's float32 tolerance
    assert not torch.allclose(r.concat @ r.w_o + r.b_o, r.block_attention, atol=lesson_model.float32_tolerance)


def test_mechanics_refuses_a_head_that_does_not_exist(lesson_model):
    model, cfg = lesson_model.encoder, lesson_model.config
    enc = lesson_model.tokenizer.encode("the cat")
    with pytest.raises(ValueError, match=rf"head must be in 0\.\.{cfg.n_heads - 1}\b"):
        head_mechanics(model, enc, 0, cfg.n_heads)
    with pytest.raises(ValueError, match=rf"layer must be in 0\.\.{cfg.n_layers - 1}\b"):
        head_mechanics(model, enc, cfg.n_layers, 0)
    with pytest.raises(ValueError, match="head must be in"):
        head_mechanics(model, enc, 0, -1)
    head_mechanics(model, enc, cfg.n_layers - 1, cfg.n_heads - 1)  # the last layer and head exist


def test_sink_summary_counts_synthetic_heads():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    cls_head = torch.zeros(4, 4)
    cls_head[:, 0] = 1.0
    sep_head = torch.zeros(4, 4)
    sep_head[:, 3] = 1.0
    mixed = torch.full((4, 4), 0.25)
    labels = label_heads(torch.stack([cls_head, cls_head, sep_head, mixed])[None], tokens)
    s = sink_summary(labels)
    assert (s.n_heads, s.n_cls, s.n_sep, s.n_more_cls) == (4, 2, 1, 2)
    assert s.counts == {"[CLS]": 2, "[SEP]": 1, "broad": 1}
    assert s.mean_cls == pytest.approx((1 + 1 + 0 + 0.25) / 4)
    assert s.mean_sep == pytest.approx((0 + 0 + 1 + 0.25) / 4)


def test_word_index_joins_hash_pieces():
    tokens = ["[CLS]", "un", "##bel", "##ie", "the", "the", "[SEP]", "##x", "[SEP]"]
    assert word_index(tokens) == [-1, 0, 0, 0, 1, 2, -1, 3, -1]


def test_same_word_mass_on_a_synthetic_head():
    tokens = ["[CLS]", "un", "##bel", "cat", "[SEP]"]
    a = torch.zeros(1, 2, 5, 5)
    a[0, 0, 1, 2] = a[0, 0, 2, 1] = 0.75  # head 0: the two pieces give 0.75 to each other
    a[0, 0, 1, 0] = a[0, 0, 2, 0] = 0.25
    a[0, 1] = 0.2  # head 1: uniform
    r = same_word_mass(a, tokens)
    assert r.mass[0, 0] == pytest.approx(0.75)
    assert r.mass[0, 1] == pytest.approx(0.2)
    assert r.uniform == pytest.approx(1 / 5)
    assert (r.n_pieces, r.n_split_words) == (2, 1)
    assert same_word_mass(a, ["[CLS]", "a", "b", "c", "[SEP]"]) is None


def test_cosine_matrix_is_symmetric_with_ones_on_the_diagonal():
    v = torch.randn(5, 7, generator=torch.Generator().manual_seed(0))
    m = cosine_matrix(v)
    assert torch.allclose(m, m.T, atol=1e-6)
    assert torch.allclose(m.diagonal(), torch.ones(5), atol=1e-6)
    assert m[0, 1] == pytest.approx(float(F.cosine_similarity(v[0], v[1], dim=0)), abs=1e-6)


def test_run_encoder_keeps_every_layers_attention_and_one_label_per_head(lesson_model):
    """The page's maps and head labels come from run_encoder on the sidebar's model."""
    model, cfg = lesson_model.encoder, lesson_model.config
    enc = lesson_model.tokenizer.encode(*EXAMPLE)
    L, H, T = cfg.n_layers, cfg.n_heads, len(enc)
    run = run_encoder(model, enc)
    assert run.tokens == enc.tokens and run.segments == enc.segments
    assert run.attentions.shape == (L, H, T, T) and run.hidden_states.shape == (L + 1, T, cfg.d_model)
    torch.testing.assert_close(run.attentions.sum(-1), torch.ones(L, H, T))
    # The same numbers as the model's own forward pass, layer by layer.
    with torch.inference_mode():
        out = model(torch.tensor([enc.ids]), torch.tensor([enc.segments]))
    assert all(torch.equal(run.attentions[layer], out.attentions[layer][0]) for layer in range(L))
    assert all(torch.equal(run.hidden_states[i], out.hidden_states[i][0]) for i in range(L + 1))
    assert torch.equal(run.hidden_states[-1], out.hidden[0])
    labels = label_heads(run.attentions, run.tokens)
    assert [(lab.layer, lab.head) for lab in labels] == [(layer, head) for layer in range(L) for head in range(H)]
    sinks = sink_summary(labels)
    assert sinks.n_heads == L * H == sum(sinks.counts.values())


# The patterns pretraining gave MiniLM's heads: the small models' heads have other (or random) ones.
def test_minilm_layer0_head2_attends_to_the_previous_token(minilm):
    enc = minilm.tokenizer.encode(*EXAMPLE)
    assert enc.tokens == "[CLS] the cat sat on the mat [SEP] it was happy [SEP]".split()
    run = run_encoder(minilm.model, enc)
    assert run.attentions.shape == (6, 12, 12, 12)
    labels = label_heads(run.attentions, run.tokens)
    l0h2 = labels[2]
    assert (l0h2.layer, l0h2.head, l0h2.pattern) == (0, 2, "previous token")
    assert l0h2.mass > 0.9
    l1h8 = labels[12 + 8]
    assert l1h8.pattern == "next token" and l1h8.mass > 0.5
    sinks = sink_summary(labels)
    assert sinks.n_cls > sinks.n_sep  # in this distilled model the sink is mostly [CLS]


# The page splits words with MiniLM's tokenizer whatever the sidebar picks.
def test_fragmentation_table_matches_the_tokenizer(minilm):
    text = "unbelievably, the cat 😀 sat on 東京"
    splits = fragmentation(minilm.tokenizer, text)
    enc = minilm.tokenizer.encode(text)
    assert [p for s in splits for p in s.pieces] == enc.tokens[1:-1]
    by_word = {s.word: s.pieces for s in splits}
    assert len(by_word["unbelievably"]) > 1
    assert all(p.startswith("##") for p in by_word["unbelievably"][1:])
    assert by_word["😀"] == ["[UNK]"]


# The page measures sibling pieces on MiniLM's run whatever the sidebar picks (a pretrained pattern).
def test_minilm_pieces_attend_to_each_other(minilm):
    enc = minilm.tokenizer.encode("the cat sat on the mat and it was unbelievably happy about it")
    run = run_encoder(minilm.model, enc)
    r = same_word_mass(run.attentions, run.tokens)
    assert r is not None and (r.n_split_words, r.n_pieces) == (1, 5)
    assert r.uniform == pytest.approx(4 / 19)  # each piece has 4 siblings among 19 tokens
    assert float(r.mass.max()) > 3 * r.uniform


# similarities takes MiniLM's PretrainedEncoder: the page compares sentence vectors on MiniLM only.
def test_similarities_match_the_published_mean_pooled_embeddings(minilm):
    texts = ["the cat sat on the mat", "a cat was sitting on the rug", "interest rates rose again"]
    s = similarities(minilm, texts)
    for m in (s.mean, s.cls):
        assert torch.allclose(m, m.T, atol=1e-6)
        assert torch.allclose(m.diagonal(), torch.ones(3), atol=1e-5)
    e = sentence_embeddings(minilm, texts, pooling="mean")
    assert torch.allclose(s.mean, e @ e.T, atol=1e-5)
    c = sentence_embeddings(minilm, texts, pooling="cls")
    assert torch.allclose(s.cls, c @ c.T, atol=1e-5)
    assert s.mean[0, 1] > s.mean[0, 2] + 0.3  # the paraphrase is nearer than the unrelated sentence
    lo, hi = s.pair_range("mean")
    assert lo == pytest.approx(float(s.mean[~torch.eye(3, dtype=torch.bool)].min()))
    assert hi == pytest.approx(float(s.mean[0, 1]))


# The page compares the "bank" vectors on MiniLM only: senses drift apart in a trained model.
def test_bank_vectors_drift_apart_with_context(minilm):
    different = word_vector_cosines(minilm.model, minilm.tokenizer, BANK_RIVER, BANK_MONEY, "bank")
    same = word_vector_cosines(minilm.model, minilm.tokenizer, BANK_RIVER, BANK_RIVER_AGAIN, "bank")
    assert different.pieces == ["bank"]
    assert different.per_layer.shape == (7,)
    # Same token, same position: the embeddings are identical before any attention.
    assert different.per_layer[0] == pytest.approx(1.0, abs=1e-6)
    assert different.final < same.final
    # A controlled comparison: all three sentences are word for word the same up to and including "bank".
    prefix = BANK_RIVER.split()[: BANK_RIVER.split().index("bank") + 1]
    assert all(s.split()[: len(prefix)] == prefix for s in (BANK_MONEY, BANK_RIVER_AGAIN))
    # Independent: the last layer's vector of "bank" (position 5) straight from the model.
    vecs = []
    for text in (BANK_RIVER, BANK_MONEY):
        enc = minilm.tokenizer.encode(text)
        vecs.append(run_encoder(minilm.model, enc).hidden_states[-1, enc.tokens.index("bank")])
    assert different.final == pytest.approx(float(F.cosine_similarity(vecs[0], vecs[1], dim=0)), abs=1e-6)


def test_agreement_holds_within_the_tolerance_and_fails_beyond_it(lesson_model):
    r = head_mechanics(lesson_model.encoder, lesson_model.tokenizer.encode(*EXAMPLE), 0, 1)
    assert r.tolerance == MECHANICS_TOLERANCE and r.agrees
    assert replace(r, max_abs_error=r.tolerance).agrees  # the tolerance itself still agrees
    assert not replace(r, max_abs_error=2 * r.tolerance).agrees


def test_mechanics_name_the_slices_and_the_strongest_key(lesson_model):
    r = head_mechanics(lesson_model.encoder, lesson_model.tokenizer.encode(*EXAMPLE), 1, 2)
    assert list(r.slices()) == ["Q", "K", "V"]
    assert all(torch.equal(r.slices()[n], m) for n, m in zip("QKV", (r.q, r.k, r.v)))
    for query in range(len(r.tokens)):
        key, weight = r.strongest_key(query)
        assert weight == pytest.approx(max(r.weights[query].tolist()))
        assert r.weights[query, key] == r.weights[query].max()


def brute_force_best(mass: torch.Tensor) -> tuple[int, int]:
    best, where = -1.0, None
    for layer in range(mass.shape[0]):
        for head in range(mass.shape[1]):
            if float(mass[layer, head]) > best:  # strictly larger: the first of equal heads stays
                best, where = float(mass[layer, head]), (layer, head)
    return where


@pytest.mark.parametrize("seed", range(5))
def test_best_head_is_the_argmax_over_every_head(seed):
    mass = torch.rand(6, 12, generator=torch.Generator().manual_seed(seed))
    same = SameWordMass(mass, uniform=0.1, n_pieces=2, n_split_words=1)
    assert same.best_head == brute_force_best(mass)
    assert same.at(*same.best_head) == pytest.approx(float(mass.max()))


def test_best_head_takes_the_first_of_equal_heads():
    mass = torch.zeros(3, 4)
    mass[1, 2] = mass[2, 0] = 0.5
    assert SameWordMass(mass, 0.1, 2, 1).best_head == (1, 2)


def test_piece_spans_of_hand_written_tokens():
    tokens = ["[CLS]", "un", "##bel", "##ie", "the", "door", "##mat", "[SEP]", "##x", "cat", "[SEP]"]
    assert piece_spans(tokens) == [(1, 3), (5, 6)]
    # A piece right after a special token starts a word of its own: nothing to outline.
    assert piece_spans(["[CLS]", "##x", "##y", "[SEP]"]) == [(1, 2)]
    assert piece_spans(["[SEP]", "##x", "[SEP]"]) == []
    assert piece_spans(["[CLS]", "the", "cat", "[SEP]", "[PAD]", "[PAD]"]) == []  # a run of specials is no word
    assert piece_spans([]) == []


def test_piece_spans_cover_exactly_the_pieces_same_word_mass_counts():
    tokens = ["[CLS]", "un", "##bel", "##ie", "##va", "cat", "door", "##mat", "[SEP]"]
    spans = piece_spans(tokens)
    covered = [i for first, last in spans for i in range(first, last + 1)]
    same = same_word_mass(torch.full((1, 1, len(tokens), len(tokens)), 1 / len(tokens)), tokens)
    assert len(covered) == same.n_pieces and len(spans) == same.n_split_words


def test_all_unknown_only_when_every_typed_token_is_unk():
    assert all_unknown(["[CLS]", "[UNK]", "[UNK]", "[SEP]", "[PAD]"])
    assert not all_unknown(["[CLS]", "[UNK]", "cat", "[SEP]"])
    assert not all_unknown(["[CLS]", "[SEP]"])  # nothing typed at all
    assert not all_unknown(["[CLS]", "[UNK]", "[MASK]", "[SEP]"])  # a typed [MASK] is a token the model knows


class PiecesTokenizer:
    """Splits every word longer than four letters after its fourth letter."""

    def split_words(self, text):
        return [(w, [w] if len(w) <= 4 else [w[:4], "##" + w[4:]]) for w in text.split()]


def test_sentence_splits_count_words_pieces_and_split_words():
    splits = sentence_splits(PiecesTokenizer(), [("A", "the fluffy cat"), ("B", None), ("C", "doormat")])
    words = [(name, split.word) for name, split in splits.splits]
    assert words == [("A", "the"), ("A", "fluffy"), ("A", "cat"), ("C", "doormat")]
    assert (splits.n_words, splits.n_pieces, splits.n_split_words) == (4, 6, 2)
    empty = sentence_splits(PiecesTokenizer(), [("A", "")])
    assert (empty.n_words, empty.n_pieces, empty.n_split_words) == (0, 0, 0)


# ---- the answers to the lesson's predictions ------------------------------------------------


def test_n_weights_is_one_per_head_query_and_key(lesson_model):
    """H x T x T, and the count of the weights the model itself returns for that layer (B = 1)."""
    model, cfg = lesson_model.encoder, lesson_model.config
    for text in (EXAMPLE, ("the cat sat on the mat", None), ("a", None)):
        enc = lesson_model.tokenizer.encode(*text)
        r = head_mechanics(model, enc, 0, 0)
        T = len(enc)
        assert r.n_weights == cfg.n_heads * T * T
        assert r.n_weights == run_encoder(model, enc).attentions[0].numel()


def _previous_by_hand(attentions: torch.Tensor) -> torch.Tensor:
    """(L, H): the mean weight of rows 1..T-1 on the key one step back (every token real)."""
    T = attentions.shape[-1]
    rows = torch.arange(1, T)
    return attentions[..., rows, rows - 1].mean(-1)


def test_previous_token_choice_holds_the_head_that_looks_back_most(lesson_model):
    """The answer is the argmax of the previous-token mass over every head, recomputed here from the weights;
    every rival looks back at least PREVIOUS_MARGIN less, every head closer than that is named as left out; on a
    model where no head leads by the margin (random weights, mostly) there is no question."""
    for text in (EXAMPLE, ("she sat on the bank of the river", None)):
        run = run_encoder(lesson_model.encoder, lesson_model.tokenizer.encode(*text))
        choice = previous_token_choice(label_heads(run.attentions, run.tokens))
        prev = _previous_by_hand(run.attentions)
        best = divmod(int(prev.argmax()), prev.shape[1])
        rivals_below = int((prev <= prev[best] - PREVIOUS_MARGIN).sum())
        if rivals_below < MIN_OPTIONS - 1:
            assert choice is None
            continue
        assert choice.candidates[choice.answer] == best
        assert len(choice.candidates) == min(4, rivals_below + 1) == len(set(choice.candidates))
        assert list(choice.candidates) == sorted(choice.candidates)  # grid order: the page draws the shown order
        for i, (layer, head) in enumerate(choice.candidates):
            assert choice.previous[i] == pytest.approx(float(prev[layer, head]), abs=1e-6)
            if i != choice.answer:
                assert choice.previous[i] <= choice.previous[choice.answer] - PREVIOUS_MARGIN
        close = {(layer, head) for layer, head in zip(*torch.nonzero(prev > prev[best] - PREVIOUS_MARGIN).T.tolist())}
        assert {(c[0], c[1]) for c in choice.too_close} == close - {best}


def test_minilm_previous_token_head_is_layer_0_head_2(minilm):
    run = run_encoder(minilm.model, minilm.tokenizer.encode(*EXAMPLE))
    choice = previous_token_choice(label_heads(run.attentions, run.tokens))
    assert choice.candidates[choice.answer] == (0, 2) and choice.previous[choice.answer] > 0.9


def _label(layer: int, head: int, **masses: float) -> HeadLabel:
    full = dict.fromkeys(("previous token", "next token", "[CLS]", "[SEP]", "self"), 0.0)
    full.update({k.replace("_", " ").replace("cls", "[CLS]").replace("sep", "[SEP]"): v for k, v in masses.items()})
    return HeadLabel(layer, head, "broad", max(full.values()), full)


def test_previous_token_choice_keeps_rivals_a_margin_below_and_names_the_heads_too_close():
    labels = [
        _label(0, 0, previous_token=0.5),  # the closest rival that still counts
        _label(0, 1, previous_token=0.9),
        _label(1, 0, previous_token=0.9),  # ties the best: the first in grid order wins, and it is left out
        _label(1, 2, previous_token=0.85),  # within the margin: left out too
        _label(1, 1, next_token=0.8, previous_token=0.1),
        _label(2, 0, sep=0.95),
        _label(2, 1, self=0.7),
    ]
    choice = previous_token_choice(labels)
    assert choice.candidates == ((0, 0), (0, 1), (1, 1), (2, 0)) and choice.candidates[choice.answer] == (0, 1)
    assert choice.too_close == ((1, 0, 0.9), (1, 2, 0.85))
    assert previous_token_choice(labels, n=3).candidates == ((0, 0), (0, 1), (1, 1))
    assert previous_token_choice(labels[:2]) is None  # one rival: a two-way toss is not asked
    with pytest.raises(ValueError, match="no heads"):
        previous_token_choice([])


def test_weight_count_traps_are_the_counts_each_misconception_gives(lesson_model):
    enc = lesson_model.tokenizer.encode("the cat sat on the mat")
    mech = head_mechanics(lesson_model.encoder, enc, 0, 0)
    cfg, T = lesson_model.encoder.config, len(enc)
    assert mech.n_weights == cfg.n_heads * T * T
    assert mech.weight_count_traps(cfg.n_layers) == {
        "layers": cfg.n_layers * cfg.n_heads * T * T,
        "width": cfg.n_heads * T * T * cfg.d_model,
        "one head": T * T,
        "per token": cfg.n_heads * T,
    }


ORDINARY = (
    "the cat sat on the mat",
    "a dog ran home",
    "she sat on the bank of the river",
    "interest rates rose again this quarter",
    "birds migrate south in winter",
    "nobody answered the phone",
    "it rained all day in london",
)


def _top_key_by_hand(attentions: torch.Tensor, layer: int, head: int, query: int) -> tuple[int, float, float]:
    row = attentions[layer, head, query].double()
    top2 = torch.topk(row, 2)
    return int(top2.indices[0]), float(top2.values[0]), float(top2.values[1])


def test_top_key_choice_asks_a_word_whose_favourite_leads_by_the_margin(minilm):
    """On ordinary sentences: the asked key is the query's largest weight, a word (not itself, not a special token)
    that leads the second largest by TOP_KEY_MARGIN; the options are distinct and hold it; no head in `skip` (a
    previous- or next-token head) is asked; and the answer differs between sentences."""
    answers = set()
    for text in ORDINARY:
        run = run_encoder(minilm.model, minilm.tokenizer.encode(text))
        labels = label_heads(run.attentions, run.tokens)
        skip = positional_heads(labels)
        assert (0, 2) in skip  # MiniLM's previous-token head: its label alone would answer
        choice = top_key_choice(run.attentions, run.tokens, skip=skip)
        assert choice is not None and (choice.layer, choice.head) not in skip
        top, first, second = _top_key_by_hand(run.attentions, choice.layer, choice.head, choice.query)
        assert choice.best == top != choice.query and run.tokens[top] not in ("[CLS]", "[SEP]")
        assert first - second >= TOP_KEY_MARGIN
        assert len(choice.positions) == len(set(choice.positions)) == min(4, len(run.tokens))
        assert choice.weights[top] == pytest.approx(first, abs=1e-6)
        assert choice.weights[choice.runner_up] == pytest.approx(second, abs=1e-6) and choice.runner_up != top
        answers.add(run.tokens[top])
    assert len(answers) >= 4, answers


def test_top_key_choice_passes_a_head_over_when_no_word_has_a_clear_favourite():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    att = torch.full((2, 2, 5, 5), 0.2)  # every row even: no favourite anywhere
    att[1, 1, 2] = torch.tensor([0.05, 0.05, 0.1, 0.7, 0.1])  # layer 1, head 1: "b" looks at "c"
    choice = top_key_choice(att, tokens, preferred=(0, 0))
    assert (choice.layer, choice.head, choice.query, choice.best) == (1, 1, 2, 3) and choice.passed_over
    assert choice.runner_up in (2, 4)  # 0.1 on "b" itself and on [SEP]: the next largest after "c"
    assert top_key_choice(att, tokens, preferred=(0, 0), skip=frozenset({(1, 1)})) is None
    att[1, 1, 2] = torch.tensor([0.05, 0.05, 0.1, 0.45, 0.35])  # a lead of 0.10: too close to call
    assert top_key_choice(att, tokens, preferred=(0, 0)) is None
