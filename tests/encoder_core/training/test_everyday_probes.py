"""The everyday probes: forty sentences of the kind a student types, each with one blank and words that
count, and none of them in any text the lab's models are trained on."""

from __future__ import annotations

from encoder_core.data.wordnet import WordNetUnavailable
from encoder_core.training.everyday_probes import EVERYDAY_PROBES, probe_pattern, probes_in
from encoder_core.training.probes import PROBES, Probe
from tests.needs import missing


def test_at_least_thirty_everyday_probes_each_with_one_blank_and_known_words(tok):
    assert len(EVERYDAY_PROBES) >= 30 and len({p.text for p in EVERYDAY_PROBES}) == len(EVERYDAY_PROBES)
    assert not {p.text for p in EVERYDAY_PROBES} & {p.text for p in PROBES}
    for probe in EVERYDAY_PROBES:
        assert tok.encode(probe.text).tokens.count("[MASK]") == 1, probe.text
        # Every word that counts is one entry of the vocabulary: one blank can hold it.
        assert all(word in tok.token_to_id for word in probe.expected), probe.text


def test_the_pattern_finds_a_probe_with_any_word_in_its_blank():
    probe = Probe("she keeps the milk cold in the [MASK].", ("fridge",), "fridge")
    assert probe_pattern(probe).search("yesterday she keeps the milk cold in the cellar, as ever")
    assert not probe_pattern(probe).search("she keeps the milk cold")
    found = probes_in(["She keeps the milk cold in the Fridge.", "a cat"], (probe,))
    assert found == [(probe.text, "She keeps the milk cold in the Fridge.")]


def test_no_everyday_probe_is_in_any_training_text():
    """Every text either model trains on (the small MLM's passes and the MiniLM head's draw come from it)."""
    from encoder_core.training.train import TrainSettings, training_texts

    try:
        data = training_texts(TrainSettings(example_copies=1))
    except WordNetUnavailable as err:
        missing("WordNet", str(err))
    assert probes_in(set(data.texts)) == []
