"""The generated corpus, the training loop, the committed small MLM checkpoint, and answer leakage."""

import json
import re
import shutil

import pytest
import torch
from safetensors.torch import load_file

from encoder_core.data.corpus import (
    ANIMALS,
    BANK_MONEY,
    BANK_RIVER,
    CONTENT_WORDS,
    PEOPLE,
    bank_pairs,
    build_corpus,
    corpus_and_split,
    generate_sentences,
    nsp_pairs,
    split_corpus,
)
from encoder_core.model.config import EncoderConfig, preset
from encoder_core.model.tokenizer import WordTokenizer, english_tokenizer
from encoder_core.objectives.leakage import leakage_experiment
from encoder_core.training.checkpoint import (
    DEFAULT_DIR,
    MANIFEST_FILE,
    TIED_KEY,
    WEIGHTS_FILE,
    CheckpointError,
    fill_mask,
    load_small_mlm,
    verify_checkpoint,
)
from encoder_core.training.evaluate import evaluate_checkpoint, masked_examples
from encoder_core.training.train import new_mlm, train_mlm


@pytest.fixture(scope="module")
def corpus():
    return build_corpus()


@pytest.fixture(scope="module")
def small_mlm():
    return load_small_mlm()


# --- corpus -------------------------------------------------------------------------------------------


def test_corpus_is_deterministic_per_seed():
    a, b, c = generate_sentences(3000, seed=0), generate_sentences(3000, seed=0), generate_sentences(3000, seed=1)
    assert a == b
    assert a != c


def test_corpus_is_large_varied_and_in_vocabulary(corpus):
    assert len(corpus) == len(set(corpus)) >= 15_000  # distinct sentences out of 24,000 generated
    tok = WordTokenizer()
    assert all(not tok.encode(s).unknown for s in corpus)
    assert max(len(tok.encode(s)) for s in corpus) <= 20
    assert "the cat sat on the mat" in corpus
    assert sum(s.endswith(" sat on the mat") for s in corpus) > 20
    found = re.compile(r"^(the|a) \w+ found (a|an) (\w+ )?\w+ in the \w+$")
    assert sum(bool(found.match(s)) for s in corpus) > 100  # "the girl found a red ball in the garden"
    # Every kind of content word is used.
    used = {w for s in corpus for w in s.split()}
    assert {CONTENT_WORDS[w] for w in used if w in CONTENT_WORDS} == {"noun", "verb", "adjective"}


def test_held_out_split_is_disjoint_complete_and_deterministic(corpus):
    train, held = split_corpus(corpus, 0.1, seed=0)
    assert not set(train) & set(held)
    assert set(train) | set(held) == set(corpus)
    assert len(held) == round(0.1 * len(corpus))
    assert (train, held) == split_corpus(corpus, 0.1, seed=0)
    assert (train, held) == corpus_and_split()


def test_bank_pairs_share_the_left_context_and_differ_only_after_bank(corpus):
    pairs = bank_pairs(40, seed=0)
    assert pairs == bank_pairs(40, seed=0)
    for river, money in pairs:
        left_r, right_r = river.split(" bank ", 1)
        left_m, right_m = money.split(" bank ", 1)
        assert left_r == left_m  # identical words up to and including "bank"
        assert right_r in BANK_RIVER and right_m != right_r
        assert "money" in right_m and "money" not in right_r
    # The corpus holds both senses after the same left context.
    bank = [s for s in corpus if " to the bank " in s]
    assert any("river" in s or "water" in s or "lake" in s for s in bank)
    assert any("money" in s for s in bank)
    assert {m.format(poss="her") for m in BANK_MONEY} & {s.split(" bank ", 1)[1] for s in bank}


def test_nsp_pairs_are_half_real_and_deterministic():
    pairs = nsp_pairs(400, seed=3)
    assert pairs == nsp_pairs(400, seed=3) != nsp_pairs(400, seed=4)
    assert sum(p.is_next for p in pairs) == 200
    assert any(a.endswith("was hungry") and " ate the " in f" {b}" for a, b, real in pairs if real)
    for a, b, is_next in pairs:
        nouns_a = {w for w in a.split() if CONTENT_WORDS.get(w) == "noun"}
        nouns_b = {w for w in b.split() if CONTENT_WORDS.get(w) == "noun"}
        if not is_next:  # a random B never names what A is about
            assert not nouns_a & nouns_b


def test_masked_examples_hide_one_content_word():
    exs = masked_examples(["the cat sat on the mat", "the old dog ate the bread"], seed=0)
    for ex, sentence in zip(exs, ["the cat sat on the mat", "the old dog ate the bread"]):
        assert ex.text.count("[MASK]") == 1
        assert ex.text.replace("[MASK]", ex.answer) == sentence
        assert ex.part_of_speech in ("noun", "verb", "adjective")


# --- training -------------------------------------------------------------------------------------------


def test_short_training_run_lowers_the_loss_and_is_repeatable():
    tok = WordTokenizer()
    sentences = build_corpus(400, seed=5)
    cfg = EncoderConfig(vocab_size=tok.vocab_size, max_positions=32, d_model=16, n_heads=2, n_layers=1)

    def run():
        model = new_mlm(cfg, seed=0)
        return train_mlm(model, tok, sentences, steps=30, batch_size=32, lr=1e-2, warmup=3, seed=0)

    records = run()
    first = sum(r["loss"] for r in records[:5]) / 5
    last = sum(r["loss"] for r in records[-5:]) / 5
    assert first > 4.5  # about ln(191): an untrained model guesses uniformly
    assert last < first - 0.7
    assert [r["loss"] for r in records] == [r["loss"] for r in run()]


# --- the committed checkpoint -------------------------------------------------------------------------


def test_checkpoint_loads_with_its_hashes_and_tied_decoder(small_mlm):
    model, tok, meta = small_mlm
    digests = verify_checkpoint()
    assert set(digests) == {"model.safetensors", "vocab.txt", "config.json", "training.json"}
    assert not model.training
    assert model.config == preset("small", dropout=model.config.dropout)
    assert tok.vocab == english_tokenizer().vocab
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    assert TIED_KEY not in load_file(str(DEFAULT_DIR / WEIGHTS_FILE))
    # 30,522 x 64 word pieces tied in and out, stored once: about 8.5 MB in float32, not twice that.
    assert (DEFAULT_DIR / WEIGHTS_FILE).stat().st_size < 9_000_000
    assert meta["seed"] == 0 and meta["metrics"]["top5"] > 0
    assert meta["curve"][-1]["loss"] < meta["curve"][0]["loss"] / 2
    assert json.loads((DEFAULT_DIR / "config.json").read_text()) == model.config.to_dict()


def test_corrupted_or_missing_checkpoint_is_refused(tmp_path):
    bad = tmp_path / "small_mlm"
    shutil.copytree(DEFAULT_DIR, bad)
    weights = bad / WEIGHTS_FILE
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x01  # one flipped bit in the last weight
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="model.safetensors") as err:
        load_small_mlm(bad)
    assert "python -m scripts.train" in str(err.value)
    assert isinstance(err.value, ValueError)

    weights.unlink()
    with pytest.raises(CheckpointError, match="model.safetensors.*missing.*python -m scripts.train"):
        load_small_mlm(bad)
    (bad / MANIFEST_FILE).unlink()
    with pytest.raises(CheckpointError, match="SHA256SUMS"):
        load_small_mlm(bad)


def test_fill_mask_returns_sorted_probabilities_per_mask(small_mlm):
    model, tok, _ = small_mlm
    out = fill_mask(model, tok, "the [MASK] ate the [MASK]", top_k=3)
    assert len(out) == 2 and all(len(row) == 3 for row in out)
    for row in out:
        probs = [p for _, p in row]
        assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6
    assert out[1][0][0] in ("bread", "cake", "apple", "fish")
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        fill_mask(model, tok, "the cat sat on the mat")
    # Inference must not leave autograd state behind.
    assert all(p.grad is None for p in model.parameters())


def test_the_mask_sat_on_the_mat(small_mlm):
    model, tok, _ = small_mlm
    top5 = [w for w, _ in fill_mask(model, tok, "the [MASK] sat on the mat")[0]]
    assert set(top5) & (set(ANIMALS) | set(PEOPLE))
    assert set(top5) <= set(ANIMALS) | set(PEOPLE) | {"cats", "dogs", "birds", "boys", "girls"}
    # With or without a full stop.
    assert {w for w, _ in fill_mask(model, tok, "The [MASK] sat on the mat.")[0]} & (set(ANIMALS) | set(PEOPLE))


def test_bank_is_resolved_by_the_words_after_it(small_mlm):
    model, tok, _ = small_mlm
    for text in ("she went to the [MASK] and counted the money", "he walked to the [MASK] of the river"):
        assert fill_mask(model, tok, text)[0][0][0] == "bank"


def test_held_out_accuracy_beats_the_unigram_baseline_by_far():
    m = evaluate_checkpoint()
    assert m["n_examples"] >= 1500
    # Measured with the committed checkpoint: top-1 0.197 / top-5 0.523 against 0.014 / 0.088.
    assert m["top1"] >= m["baseline_top1"] + 0.12
    assert m["top5"] >= m["baseline_top5"] + 0.3
    # Verbs are pinned down by their objects and places; most nouns (any animal can sit) are not.
    assert m["by_part_of_speech"]["verb"]["top5"] > 0.8
    assert m["all_tokens_baseline_top5"] == 0.0  # "the", "a", ... are never the hidden content word


# --- answer leakage -------------------------------------------------------------------------------------


def test_leaky_masking_looks_perfect_in_training_and_fails_on_held_out():
    calls = []
    torch.manual_seed(123)
    before = torch.rand(1)
    r = leakage_experiment(steps=300, seed=0, progress=lambda step, total: calls.append((step, total)))
    torch.manual_seed(123)
    assert torch.equal(before, torch.rand(1))  # the caller's random state is left alone
    assert calls[0] == (1, 600) and calls[-1] == (600, 600) and len(calls) == 600
    assert len(r.correct.loss) == len(r.leaky.accuracy) == 300
    assert r.correct.loss[0] == pytest.approx(r.leaky.loss[0], rel=0.05)  # same start
    # The symptom: near-perfect training accuracy almost at once...
    assert sum(r.leaky.accuracy[-50:]) / 50 > 0.97
    assert sum(r.leaky.accuracy[100:150]) / 50 > 0.85
    assert sum(r.correct.accuracy[-50:]) / 50 < 0.6
    # ...and nothing learned for a real [MASK].
    assert r.leaky.held_out_top1 < 0.05
    assert r.correct.held_out_top1 > r.leaky.held_out_top1 + 0.2
