"""The masking lesson's fill-in-the-blank as a student meets it: MiniLM answers by default, the other model
one click away, every kind of bad input a message and a chart, never a traceback."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import all_text, figures, no_exception, open_page, plain, skip_predictions

from encoder_core.lessons import masking as lesson
from encoder_core.training.checkpoint import fill_mask
from ui.views import masking as figs

ASKED = "Try any word: where does the model rank it at the first blank?"


def shown(token: str) -> str:
    return token + figs.PIECE_MARK if lesson.is_piece(token) else token


def bars_are(at, model, tokenizer, text, chart="fill_0"):
    (top,) = fill_mask(model, tokenizer, text)
    bars = figures(at)[chart]["data"][0]
    assert list(bars["y"])[::-1] == [shown(w) for w, _ in top] + [figs.OTHER_WORDS]
    assert np.allclose(bars["x"][::-1][:5], [p for _, p in top], atol=1e-6)


def test_minilm_answers_first_and_the_small_mlm_is_one_click_away(minilm_mlm, trained_mlm):
    at = no_exception(open_page("masking"))
    text = all_text(at)
    assert "Answered by **all-MiniLM-L6-v2 with the lab's MLM head**" in text
    bars_are(at, minilm_mlm[0], minilm_mlm[1], "the [MASK] sat on the mat")
    switch = at.button(key="fill_other_model")
    assert switch.label == "Ask the lab's small trained MLM instead"
    no_exception(skip_predictions(switch.click().run()))
    assert at.session_state["masking.fill_model"] == "mlm" and dict(at.query_params)["fill_model"] == "mlm"
    assert "Answered by **the lab's small trained MLM**" in all_text(at)
    bars_are(at, trained_mlm[0], trained_mlm[1], "the [MASK] sat on the mat")
    assert at.button(key="fill_other_model").label == "Ask all-MiniLM-L6-v2 with the lab's MLM head instead"


def test_a_link_picks_the_model_and_a_bad_value_says_so():
    at = no_exception(open_page("masking", {"fill_model": "mlm"}))
    assert at.radio(key="masking.fill_model").value == "mlm"
    assert "Answered by **the lab's small trained MLM**" in all_text(at)
    bad = no_exception(open_page("masking", {"fill_model": "gpt"}, skip=False))
    assert any("`fill_model=gpt` is not one of minilm, mlm; using minilm." in w.value for w in bad.warning)


def test_two_hundred_blanks_rank_six_and_say_so(minilm_mlm):
    text = "the [MASK] " * 182  # 2,002 characters: the page keeps 2,000, so 181 blanks
    at = no_exception(open_page("masking", {"fill_sentence": text}))
    drawn = {k for k in figures(at) if k.startswith("fill_")}
    assert drawn == {f"fill_{i}" for i in range(6)}
    said = plain(at)
    assert "181 blanks: the first 6 are ranked and shown, the other 175 are read as [MASK] but not ranked" in said
    assert "Showing the first 6 of 181 blanks: only those are ranked." in said
    assert "torch.topk picks the 5 shown" in said
    view = lesson.fill_mask_view(minilm_mlm[0], minilm_mlm[1], text[:2000])
    for i, pred in enumerate(view.predictions):
        bars = figures(at)[f"fill_{i}"]["data"][0]
        assert np.allclose(bars["x"][::-1][:5], pred.probabilities, atol=1e-6)


def test_five_thousand_characters_are_cut_and_still_answered():
    text = "the [MASK] sat on the mat and " + "a dog ran home " * 340
    assert len(text) > 5000
    at = no_exception(open_page("masking"))
    no_exception(at.text_input(key="masking.fill_sentence").input(text).run())
    warned = " ".join(w.value for w in at.warning)
    assert f"“Sentence with [MASK]” was {len(text):,} characters long: the lesson keeps the first 2,000." in warned
    no_exception(skip_predictions(at))
    # 2,000 characters are still more word pieces than MiniLM's 512 positions: the end is cut, and said so.
    assert any("longer than the model's 512 positions" in w.value for w in at.warning)
    assert "fill_0" in figures(at)


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("she opened the door", "There is no [MASK] in your sentence, so its last word, “door”, is hidden"),
        ("🙂🙂", "so the example runs instead: “the [MASK] sat on the mat”"),
        ("the cat[MASK] on the mat", "[MASK] was typed against a word in “cat[MASK]”"),
        ("[MASK] [MASK] [MASK]", "Every position is a blank"),
    ],
)
def test_bad_input_gets_a_message_and_a_chart(typed, said):
    at = no_exception(open_page("masking"))
    skip_predictions(at.text_input(key="masking.fill_sentence").input(typed).run())
    no_exception(at)
    assert said in plain(at)
    assert "fill_0" in figures(at)


def test_any_word_can_be_ranked_after_the_reveal(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    at = no_exception(open_page("masking"))
    box = next(t for t in at.text_input if t.label == ASKED)
    no_exception(box.input("dog").run())
    view = lesson.fill_mask_view(model, tokenizer, "the [MASK] sat on the mat")
    g = lesson.rank_guess(tokenizer, view.first_probabilities, "dog")
    assert f"“dog” is choice {g.rank:,} of 30,522 at the first blank" in plain(at)
    box = next(t for t in at.text_input if t.label == ASKED)
    no_exception(box.input("doormat").run())
    assert "the model reads it as door ##mat, so no blank can hold it" in plain(at)


def test_word_pieces_in_the_top_five_are_marked(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    text = "they were danc[MASK] all night"
    at = no_exception(open_page("masking", {"fill_sentence": text}))
    bars_are(at, model, tokenizer, text)
    (top,) = fill_mask(model, tokenizer, text)
    pieces = [w for w, _ in top if lesson.is_piece(w)]
    assert pieces  # a word cut off after "danc" is finished by a piece
    assert "a word piece, not a word" in plain(at)
