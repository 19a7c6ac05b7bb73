"""A student's everyday sentence on every lesson and every model: no word is lost to [UNK]."""

import json

import pytest
from apptest_helpers import all_text, figures, open_linked
from independent import THIRTY_WORDS

# The lessons a student types a sentence into, with the control it goes to.
SENTENCE_KEYS = {"attention": "sentence", "padding": "sentence_a", "heads": "heads_sentence", "block": "block_sentence"}
MODELS = ("small", "mlm", "minilm")


def drawn_labels(at) -> str:
    """Every axis label and cell text of every chart, as one string."""
    labels = [[trace.get(k) for k in ("x", "y", "text")] for fig in figures(at).values() for trace in fig["data"]]
    return json.dumps(labels, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v))


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("page", sorted(SENTENCE_KEYS))
def test_thirty_everyday_words_reach_every_model_whole(page, model, minilm):
    at = open_linked(page, {"model": model, SENTENCE_KEYS[page]: THIRTY_WORDS})
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=f"{page}.{SENTENCE_KEYS[page]}").value == THIRTY_WORDS
    # report_encoding's caption names any word that became [UNK]; no chart draws one.
    assert "Not in this model's vocabulary" not in all_text(at) and "[UNK]" not in drawn_labels(at)
    assert "supermarket" in drawn_labels(at)  # the sentence itself is what is drawn


@pytest.mark.slow
@pytest.mark.parametrize("model", MODELS)  # "minilm" fills in with MiniLM under the lab's MLM head
def test_thirty_everyday_words_in_the_masking_lesson(trained_mlm, minilm, model):
    fill = THIRTY_WORDS.replace("milk", "[MASK]")
    at = open_linked("masking", {"model": model, "mlm_sentence": THIRTY_WORDS, "fill_sentence": fill})
    assert not at.exception, [e.value for e in at.exception]
    assert "Not in this model's vocabulary" not in all_text(at) and "[UNK]" not in drawn_labels(at)
    assert "supermarket" in drawn_labels(at)
