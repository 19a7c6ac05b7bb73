"""The fill-mask's words: notes on typed text, word pieces named in the chart, a typed word's rank."""

from __future__ import annotations

import pytest

from encoder_core.lessons import masking as core
from ui.views import masking as figs

EXAMPLE = "the [MASK] sat on the mat"


def notes(tok, text, max_positions=128):
    p = core.plan_fill(tok, text, 0, max_positions, EXAMPLE)
    return " ".join(t for _, t in figs.fill_plan_notes(p)), p


def test_each_bad_input_gets_its_own_note(tok):
    said, _ = notes(tok, "she opened the door")
    assert "no [MASK] in your sentence, so its last word, “door”, is hidden" in said
    said, _ = notes(tok, "🙂")
    assert "Your sentence cannot be filled in (there is no [MASK] in it" in said and EXAMPLE in said
    said, _ = notes(tok, "a cat[MASK] ran")
    assert "[MASK] was typed against a word in “cat[MASK]”" in said
    said, _ = notes(tok, "[MASK] [MASK]")
    assert "Every position is a blank" in said
    said, p = notes(tok, "the [MASK] " * 200)
    assert f"{p.n_blanks} blanks: the first 6 are ranked and shown, the other {p.n_skipped}" in said
    assert f"{p.blanks_cut} [MASK]s past the model's 128 positions were cut" in said
    said, _ = notes(tok, "a dog ran home and " * 280 + "[MASK]")
    assert "every [MASK] in it lies past the model's 128 positions and was cut" in said
    said, _ = notes(tok, "the [MASK] sat")
    assert said == ""  # nothing to say about an ordinary query


def test_word_pieces_are_named_and_drawn_lighter():
    pred = core.MaskPrediction(2, [("walk", 0.5), ("##ing", 0.25), ("run", 0.125)], None, None, None, 0.125)
    view = core.FillMaskView("a [MASK]", ["[CLS]", "a", "[MASK]", "[SEP]"], [pred], [], 0, None, 1)
    bars = figs.fill_figure(view, pred).data[0]
    assert list(bars.y)[::-1] == ["walk", "##ing (word piece)", "run", "all other words"]
    colours = list(bars.marker.color)[::-1]
    assert colours[1] == figs.PIECE_COLOUR and colours[0] != figs.PIECE_COLOUR
    assert figs.top_k_table(pred)["word piece"].tolist() == [False, True, False]
    assert "'##ing (word piece)' 25.0%" in figs.fill_alt(pred)
    assert figs.pieces_text(view).startswith("“##ing”: a word piece, not a word.")
    plain = core.MaskPrediction(2, [("walk", 0.5)], None, None, None, 0.5)
    assert figs.pieces_text(core.FillMaskView("a [MASK]", [], [plain], [], 0)) is None


def test_a_typed_word_gets_its_rank_or_the_reason_it_has_none(tok):
    g = core.GuessRank("Dog", ["dog"], "dog", None, 12, 0.0123, 5, 30522)
    assert figs.guess_rank_text(g) == "“Dog” is choice 12 of 30,522 at the first blank, probability 1.2%."
    tiny = core.GuessRank("x", ["x"], "x", None, 20000, 2e-7, 5, 30522)
    assert "probability 2.0e-07" in figs.guess_rank_text(tiny)
    several = core.GuessRank("doormat", ["door", "##mat"], None, "several", None, None, 5, 30522)
    assert figs.guess_rank_text(several) == (
        "“doormat” is not one token: the model reads it as door ##mat, so no blank can hold it."
    )


@pytest.mark.parametrize("used", ["minilm", "mlm"])
def test_the_answering_model_is_named_and_the_other_offered(used):
    text = figs.fill_model_text(used, used, 2_100_000)
    assert text.startswith(f"Answered by **{figs.FILL_MODEL_NAMES[used]}** (2.1 M parameters)")
    assert figs.other_fill_model_label(used) == f"Ask {figs.FILL_MODEL_NAMES[figs.other_fill_model(used)]} instead"
    assert "could not be loaded" in figs.fill_model_text("minilm", "mlm", 2_100_000)


def test_the_minilm_head_is_described_by_its_last_stage():
    meta = {"frozen_layers": 2, "settings": {"frozen_layers": 4}}
    text = figs.mlm_choice_text("minilm", "minilm", "all-MiniLM-L6-v2 with the lab's MLM head", meta)
    assert "together with its layers 2 and up; its word embeddings and layers 0 to 1 are exactly as published" in text
    one_stage = figs.mlm_choice_text("minilm", "minilm", "MiniLM", {"settings": {"frozen_layers": 4}})
    assert "layers 4 and up" in one_stage
