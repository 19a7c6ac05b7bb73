"""Fill-mask on whatever a student types: plan_fill's fallbacks, the cap on blanks ranked, top-k against a
full sort, word pieces, and a typed word's rank."""

from __future__ import annotations

import pytest
import torch

from encoder_core.lessons import masking as core
from encoder_core.model.config import EncoderConfig
from encoder_core.model.output_heads import MaskedLanguageModel
from encoder_core.training.checkpoint import fill_mask

EXAMPLE = "the [MASK] sat on the mat"


@pytest.fixture(scope="module")
def mlm():
    """An untrained MLM of the small shape at seed 0 (its numbers are arbitrary, its ranking exact)."""
    torch.manual_seed(0)
    return MaskedLanguageModel(EncoderConfig(vocab_size=30522, max_positions=128, d_model=32, n_heads=2, n_layers=1))


def plan(tok, text, position=0, max_positions=128):
    return core.plan_fill(tok, text, position, max_positions, EXAMPLE)


def test_a_sentence_without_a_mask_hides_its_last_word(tok):
    p = plan(tok, "she opened the door.")
    assert (p.fallback, p.hidden, p.position, p.n_blanks, p.n_computed) == ("last_word", "door", 4, 1, 1)
    assert p.query == "she opened the [MASK] ."
    # A last word the vocabulary cuts into pieces cannot be one blank: the word before it is hidden.
    p = plan(tok, "we ate xylophonists")
    assert p.hidden == "ate" and p.position == 2


def test_nothing_to_hide_runs_the_example(tok):
    for text in ("🙂 🙂", "123 456", "?!"):
        p = plan(tok, text)
        assert (p.fallback, p.text, p.query, p.n_blanks) == ("example", EXAMPLE, EXAMPLE, 1), text


def test_a_mask_glued_to_a_word_is_its_own_blank_and_named(tok):
    p = plan(tok, "the cat[MASK] on the Mat[mask]s.")
    assert p.glued == ("cat[MASK]", "Mat[mask]s.")
    assert p.fallback is None and p.n_blanks == 2
    read = ["[CLS]", "the", "cat", "[MASK]", "on", "the", "mat", "[MASK]", "s", ".", "[SEP]"]
    assert tok.encode(p.query).tokens == read
    assert plan(tok, "in the [MASK].").glued == ()  # a full stop is not a word


def test_the_plan_holds_what_the_model_receives(tok):
    for text, position in (("the [MASK] sat on the mat", 0), ("the cat sat on the mat", 2), ("she ran", 0)):
        p = plan(tok, text, position)
        assert p.encoding == core.fill_query(tok, p.text, p.position, 128) and p.max_positions == 128


def test_only_masks_is_named(tok):
    assert plan(tok, "[MASK] [MASK] [MASK]").only_masks
    assert not plan(tok, "the [MASK] [MASK]").only_masks


def test_many_masks_rank_only_the_first_six(tok, mlm):
    text = "the [MASK] " * 200
    p = plan(tok, text)
    assert (p.n_blanks, p.n_computed, p.n_skipped, p.blanks_cut) == (63, 6, 57, 137)  # 128 positions hold 63
    view = core.fill_mask_view(mlm, tok, text)
    assert view.n_blanks == 63 and len(view.predictions) == core.MAX_BLANKS == 6
    masks = [i for i, t in enumerate(view.tokens) if t == "[MASK]"]
    assert [pred.position for pred in view.predictions] == masks[:6]


def test_a_long_text_is_cut_and_a_blank_past_the_cut_gives_way_to_the_example(tok):
    long_text = "a dog ran home and " * 280 + "[MASK]"  # 5,000+ characters, the blank at the very end
    assert len(long_text) > 5000
    p = plan(tok, long_text)
    assert (p.fallback, p.blanks_cut, p.text) == ("example", 1, EXAMPLE)
    early = "the [MASK] " + "a dog ran home and " * 280
    p = plan(tok, early)
    assert p.fallback is None and p.n_blanks == 1 and p.blanks_cut == 0


def test_top_k_matches_a_full_sort_and_rest_is_the_remainder(tok, mlm):
    view = core.fill_mask_view(mlm, tok, "the [MASK] sat on the [MASK] .", top_k=5)
    reference = fill_mask(mlm, tok, "the [MASK] sat on the [MASK] .", top_k=tok.vocab_size)
    for pred, full in zip(view.predictions, reference):
        assert pred.words == [w for w, _ in full[:5]]
        assert pred.probabilities == pytest.approx([p for _, p in full[:5]], abs=1e-7)
        assert pred.rest == pytest.approx(sum(p for _, p in full[5:]), abs=1e-5)


def test_rank_in_counts_the_entries_above(tok, mlm):
    view = core.fill_mask_view(mlm, tok, EXAMPLE)
    probs = view.first_probabilities
    order = probs.argsort(descending=True)
    for r in (0, 1, 9, 500, 30000):
        assert core.rank_in(probs, int(order[r])) == r + 1
    g = core.rank_guess(tok, probs, tok.vocab[int(order[3])])
    assert g.rank == 4 and g.probability == pytest.approx(float(probs[order[3]]))
    assert core.rank_guess(tok, None, "dog").rank is None  # no blank, no rank


def test_hidden_word_rank_is_its_place_in_the_distribution(tok, mlm):
    view = core.fill_mask_view(mlm, tok, "the cat sat on the mat", position=2)
    (pred,) = view.predictions
    i = tok.token_to_id["cat"]
    assert pred.hidden_word == "cat" and pred.hidden_rank == core.rank_in(view.first_probabilities, i)
    assert pred.hidden_probability == pytest.approx(float(view.first_probabilities[i]))


def test_word_pieces_are_marked():
    pred = core.MaskPrediction(3, [("##ing", 0.4), ("walk", 0.3), ("##", 0.1)], None, None, None, 0.2)
    assert pred.pieces == [True, False, False]  # "##" alone is a character of the vocabulary, not a piece
    assert core.is_piece("##s") and not core.is_piece("s")
