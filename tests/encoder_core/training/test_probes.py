"""The lab's trained MLM on real English: the quality bar and the twenty probes (their figures: test_figures.py)."""

import pytest

from encoder_core.data.wordnet import WordNetUnavailable, is_held_out
from encoder_core.training.evaluate import content_word_ranking
from encoder_core.training.probes import PROBES, filled, run_probes
from tests.needs import missing


@pytest.fixture(scope="module")
def probe_results(trained_mlm):
    model, tokenizer, _ = trained_mlm
    return run_probes(model, tokenizer)


def test_twenty_fixed_probes_each_with_one_mask_and_known_answers(tok):
    assert len(PROBES) == 20 and len({p.text for p in PROBES}) == 20
    for probe in PROBES:
        assert tok.encode(probe.text).tokens.count("[MASK]") == 1
        assert any(word in tok.token_to_id for word in probe.expected)


# Probe 2 misses its promised top 5 on the committed checkpoint (docs/models.md). strict=True:
# the day a retrained checkpoint passes it, this fails and the mark (and docs/models.md) must go.
SHORTFALL = {PROBES[1].text: "she put her money in the [MASK]: bank at rank 24, not in the top 5"}


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(i, marks=pytest.mark.xfail(strict=True, reason=SHORTFALL[p.text]) if p.text in SHORTFALL else ())
        for i, p in enumerate(PROBES)
        if p.required_top is not None
    ],
)
def test_the_promised_probes_pass(probe_results, index):
    # seed 003's mat sentence: an animal in the top 5; both "bank" sentences: "bank" in the top 5.
    assert [p.text for p in PROBES if p.required_top is not None] == [p.text for p in PROBES[:3]]
    r = probe_results[index]
    assert r.passed, f"{r.probe.text}: best expected word {r.best!r} at rank {r.rank}"


def test_ranks_are_ranks(probe_results, tok):
    for r in probe_results:
        assert 1 <= r.rank <= tok.vocab_size and 0.0 < r.probability <= 1.0
        top = [p for _, p in r.top5]
        assert top == sorted(top, reverse=True) and sum(top) <= 1.0 + 1e-6
        if r.rank <= 5:
            assert r.top5[r.rank - 1][0] == r.best


def assert_probes_unseen(settings, meta: dict):
    """Rebuild a checkpoint's training text from its settings (it needs WordNet; skip without it), check
    it is the text the checkpoint counted, and that no probe, filled in, nor held-out sentence is in it."""
    from encoder_core.training.train import training_texts

    try:
        data = training_texts(settings)
    except WordNetUnavailable as err:
        missing("WordNet", str(err))
    assert len(data.texts) == meta["corpus"]["texts_per_pass"]
    seen = {s.lower().rstrip(" .") for s in data.texts}
    assert not [s for p in PROBES for s in filled(p) if s in seen]
    assert not set(data.examples_held_out) & set(data.texts)
    return data


def test_no_probe_is_a_training_sentence(trained_mlm):
    """Rebuild the checkpoint's training text (it needs WordNet) and look for every probe, filled in."""
    from encoder_core.training.train import TrainSettings

    _, _, meta = trained_mlm
    data = assert_probes_unseen(TrainSettings(**meta["settings"]), meta)
    assert all(is_held_out(s) for s in data.examples_held_out)


def test_unigram_baseline_counts_words(tok):
    ranking = content_word_ranking(["The cat sat", "the cat ran", "a dog sat down"], tok)
    assert ranking[:2] == ["cat", "sat"] and "the" not in ranking and "a" not in ranking


def test_the_masking_lesson_quotes_the_checkpoints_own_scores(trained_mlm):
    from ui.views.masking import model_quality_text

    model, tok, meta = trained_mlm
    text = model_quality_text(meta, model.config, tok.vocab_size)
    for m in (meta["real_metrics"], meta["metrics"]):
        for key in ("top1", "top5", "baseline_top1", "baseline_top5"):
            assert f"{m[key]:.1%}" in text
        assert f"{m['n_examples']:,} " in text
    assert "30,522 word pieces" in text and "real English" in text
    assert model_quality_text({}, model.config, tok.vocab_size) is None


# ---- all-MiniLM-L6-v2 under the lab's MLM head (encoder_core.pretrained.minilm_mlm) ----


@pytest.fixture(scope="module")
def minilm_probe_results(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    return run_probes(model, tokenizer)


@pytest.mark.parametrize("index", [i for i, p in enumerate(PROBES) if p.required_top is not None])
def test_the_promised_probes_pass_on_minilm_with_the_labs_head(minilm_probe_results, index):
    r = minilm_probe_results[index]
    assert r.passed, f"{r.probe.text}: best expected word {r.best!r} at rank {r.rank}"


def test_no_probe_is_a_training_sentence_of_the_minilm_head(minilm_mlm):
    from encoder_core.training.train import TrainSettings

    _, _, meta = minilm_mlm
    assert_probes_unseen(TrainSettings(example_copies=1), meta)  # what encoder_core.pretrained.minilm_mlm draws from
