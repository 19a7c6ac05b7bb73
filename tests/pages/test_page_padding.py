"""The Padding page in Streamlit's AppTest: numbers drawn == encoder_core's, every control, bad input, links."""

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, figures, open_numbers, open_page
from independent import gap_with_pads_by_hand
from streamlit.testing.v1 import AppTest

from encoder_core import TEACHING_INIT_STD, build_encoder, english_tokenizer, preset
from encoder_core.lessons.padding import LEAK_MIN_PADS, fast_path_pad_outputs, pad_leak, padded_attention

TOK = english_tokenizer()
DEFAULTS = ("the cat sat on the mat", "it was happy", "the cat sat")


def open_linked(query: dict) -> AppTest:
    return helpers.open_linked("padding", query)


def headings(at) -> str:
    return "\n".join(str(h.value) for h in at.subheader)


def batch_for(a: str, b: str, single: str, extra: int, tok=TOK):
    return tok.pad([tok.encode(a, b), tok.encode(single)], extra_pads=extra)


def assert_page_matches_core(at, texts=DEFAULTS, extra=0, seed=0, layer=0, head=0, model=None, tok=TOK) -> None:
    """Every padding figure equals encoder_core's numbers for this model (default: the seeded small one)."""
    figs, batch = figures(at), batch_for(*texts, extra, tok=tok)
    model = model or build_encoder(preset("small"), seed=seed, init_std=TEACHING_INIT_STD)
    pa = padded_attention(model, batch, 1, layer, head)
    np.testing.assert_allclose(figs["padded_attention_masked"]["data"][0]["z"], pa.masked.numpy(), rtol=0, atol=1e-7)
    np.testing.assert_allclose(figs["padded_attention_unmasked"]["data"][0]["z"], pa.unmasked.numpy(), atol=1e-7)
    assert f"layer {layer}, head {head}" in figs["padded_attention_masked"]["layout"]["title"]["text"]
    np.testing.assert_array_equal(figs["pad_mass"]["data"][0]["y"], [0.0] * pa.n_real)
    np.testing.assert_allclose(figs["pad_mass"]["data"][1]["y"], pa.pad_mass_unmasked, rtol=1e-6)
    leak = pad_leak(model, batch, 1, min_pads=LEAK_MIN_PADS)  # the curve reaches 16 pads at least
    np.testing.assert_array_equal(figs["pad_leak"]["data"][0]["x"], leak.pad_counts)
    assert max(figs["pad_leak"]["data"][0]["y"]) <= 1e-6
    np.testing.assert_allclose(figs["pad_leak"]["data"][1]["y"], leak.curve_unmasked, rtol=1e-9)
    fast = fast_path_pad_outputs(model, batch, 1, seed=seed)
    np.testing.assert_allclose(figs["fast_path"]["data"][0]["y"], fast.norms_train, rtol=1e-6)
    np.testing.assert_array_equal(figs["fast_path"]["data"][1]["y"], [0.0] * len(fast.pad_positions))


def batch_rows(at) -> dict:
    table = next(d.value for d in open_numbers(at, "batch").dataframe if "sequence" in d.value.columns)
    single = table[table["sequence"] == "single"].set_index("row")
    return {row: [single.loc[row, c] for c in single.columns if c != "sequence"] for row in single.index}


def test_defaults_reproduce_the_seed_batch_and_numbers():
    at = open_page("padding")
    assert not at.exception
    rows = batch_rows(at)
    assert rows["token"] == ["[CLS]", "the", "cat", "sat", "[SEP]"] + ["[PAD]"] * 7
    assert rows["ignore key (mask)"] == ["False"] * 5 + ["True"] * 7
    assert_page_matches_core(at)
    text = all_text(at)
    assert "12 tokens" in text and "7 [PAD]" in text
    assert "Mask on" in text
    assert "0.002, 0.984, 0.085" in text  # the zero-key pad's weights, recomputed from the seed-7 tensors
    assert "the gap is 0.0" in text


@pytest.mark.slow
@pytest.mark.parametrize("choice", ["mlm", "minilm"])
def test_the_sidebar_model_is_the_one_drawn(choice, trained_mlm, minilm):
    model, tok = (trained_mlm[0].bert, trained_mlm[1]) if choice == "mlm" else (minilm.model, minilm.tokenizer)
    at = open_linked({"model": choice, "layer": "1", "head": "2"})
    assert not at.exception
    assert_page_matches_core(at, layer=1, head=2, model=model, tok=tok)


def test_every_control_changes_what_is_drawn():
    at = open_page("padding")
    at.text_input(key="padding.sentence_a").input("a dog ran").run()
    at.text_input(key="padding.sentence_b").input("the boy was very tired").run()
    at.text_input(key="padding.single").input("she slept").run()
    at.slider(key="padding.n_pads").set_value(4).run()
    at.slider(key="padding.layer").set_value(1).run()
    at.slider(key="padding.head").set_value(2).run()
    at.number_input(key="seed").set_value(3).run()
    at.toggle(key="padding.use_mask").set_value(False).run()
    helpers.skip_predictions(at)  # a new batch, model and layer ask again: a student who skips
    assert not at.exception
    texts = ("a dog ran", "the boy was very tired", "she slept")
    assert_page_matches_core(at, texts, extra=4, seed=3, layer=1, head=2)
    assert batch_rows(at)["token"][:5] == ["[CLS]", "she", "slept", "[SEP]", "[PAD]"]
    assert "Mask off" in all_text(at)


def test_bad_input_gets_a_message_and_a_fallback():
    at = open_page("padding")
    at.text_input(key="padding.single").input(" \t ").run()
    assert not at.exception
    assert any("empty" in i.value for i in at.info)
    assert batch_rows(at)["token"][:5] == ["[CLS]", "the", "cat", "sat", "[SEP]"]

    at.text_input(key="padding.sentence_a").input("a " * 5000).run()
    assert not at.exception
    notices = " ".join(w.value for w in at.warning)
    assert "10,000 characters" in notices and "cut" in notices
    assert np.asarray(figures(at)["padded_attention_masked"]["data"][0]["z"]).shape == (480, 480)

    at.text_input(key="padding.sentence_a").input("the cat").run()
    at.text_input(key="padding.single").input("<b>x</b> <script>alert(1)</script> &amp; zebra 🙂").run()
    assert not at.exception
    assert "[UNK]" in batch_rows(at)["token"]
    for fig in figures(at).values():
        for trace in fig["data"]:
            for v in list(trace.get("x", [])) + list(trace.get("y", [])):
                assert "<script" not in str(v) and "<b>" not in str(v)


def test_single_sentence_without_pads_is_explained():
    at = open_linked({"single": "the old man and the young woman sat on the mat"})
    assert not at.exception
    assert any("no pads" in i.value for i in at.info)


def test_link_sets_every_control():
    query = {
        "sentence_a": "a cat ran",
        "sentence_b": "it was late",
        "single": "the dog",
        "n_pads": "3",
        "use_mask": "0",
        "layer": "1",
        "head": "3",
        "seed": "2",
    }
    at = open_linked(query)
    assert not at.exception and not at.warning
    assert at.text_input(key="padding.single").value == "the dog"
    assert (at.slider(key="padding.n_pads").value, at.toggle(key="padding.use_mask").value) == (3, False)
    assert_page_matches_core(at, ("a cat ran", "it was late", "the dog"), extra=3, seed=2, layer=1, head=3)


def test_malformed_link_values_give_a_notice():
    at = open_linked({"n_pads": "-5", "use_mask": "maybe", "head": "two"})
    assert not at.exception
    notice = " ".join(w.value for w in at.warning)
    assert "n_pads" in notice and "use_mask" in notice and "head" in notice
    assert (
        at.slider(key="padding.n_pads").value,
        at.toggle(key="padding.use_mask").value,
        at.slider(key="padding.head").value,
    ) == (
        0,
        True,
        0,
    )


def test_lecture_mode_steps_through_the_sections():
    at = open_linked({"lecture": "1", "step": "2"})
    assert not at.exception
    assert "Step 3 of 6" in headings(at)
    assert set(figures(at)) == {"pad_leak"}
    at.button(key="lecture_next").click().run()
    assert "Step 4 of 6" in headings(at) and set(figures(at)) == {"zero_key_unmasked", "zero_key_masked"}


def test_a_charts_numbers_are_sent_only_once_its_panel_is_opened():
    at = open_page("padding", every_section=False)
    assert not any("sequence" in d.value.columns for d in at.dataframe)
    open_numbers(at, "batch")
    assert not at.exception
    assert any("sequence" in d.value.columns for d in at.dataframe)


# ---- predict, then see: the questions the lesson asks before it shows ----

SHARE, TREND = "padding-pad-share", "padding-leak-trend"
GROWS = "They move, further with more pads"
STILL = "They stay put: a [PAD] changes nothing"


def open_asking(query: dict | None = None) -> AppTest:
    """The page as a student first meets it: every section, no prediction committed."""
    return open_page("padding", query, skip=False)


commit = helpers.commit_prediction  # choose or type the guess, then commit


def share_by_hand(layer=0, head=0, texts=DEFAULTS) -> float:
    """Without the mask: the single sentence's real rows' total weight on its pad keys, averaged over those rows."""
    batch = batch_for(*texts, 0)
    model = build_encoder(preset("small"), seed=0, init_std=TEACHING_INIT_STD)
    w, n = padded_attention(model, batch, 1, layer, head).unmasked, batch.lengths[1]
    return float(w[:n, n:].sum(-1).mean())


def test_before_a_commit_neither_reveal_is_drawn():
    at = open_asking()
    assert not at.exception
    drawn = figures(at)
    assert {"batch", "padded_attention_masked"} <= set(drawn)  # the batch, and the worked half: masked pads get 0
    assert not {"padded_attention_unmasked", "pad_mass", "pad_leak"} & set(drawn)
    text = all_text(at)
    assert f"{share_by_hand():.3f}" not in text and "Gap without the mask" not in text and "Mask on" not in text
    assert at.number_input(key=f"_predict_guess_{SHARE}").value is None
    assert at.radio(key=f"_predict_guess_{TREND}").value is None
    assert [o for o in at.radio(key=f"_predict_guess_{TREND}").options][0] == GROWS


def test_a_right_share_reveals_the_unmasked_grid_then_a_new_layer_asks_again():
    share = share_by_hand()
    at = commit(open_asking(), SHARE, round(share, 2))
    assert not at.exception
    assert any(s.value.startswith("Right") for s in at.success)
    assert f"**{share:.3f}**" in all_text(at) and "7 of the 12 keys are pads" in all_text(at)
    assert {"padded_attention_unmasked", "pad_mass"} <= set(figures(at))
    np.testing.assert_allclose(np.mean(figures(at)["pad_mass"]["data"][1]["y"]), share, rtol=1e-6)

    at.slider(key="padding.layer").set_value(1).run()  # a new setting: the question is back, the reveal gone
    assert "pad_mass" not in figures(at) and at.number_input(key=f"_predict_guess_{SHARE}").value is None
    at = commit(at, SHARE, share_by_hand(layer=1) / 50)  # fifty times too small
    errors = " ".join(e.value for e in at.error)
    assert "50 times too small" in errors
    assert "nothing marks a [PAD] as empty" in all_text(at)  # too_low: the misconception behind it


def test_a_right_trend_states_the_gaps_at_one_and_sixteen_pads():

    at = commit(open_asking(), TREND, GROWS)
    assert not at.exception
    assert "Right." in [s.value for s in at.success]
    model = build_encoder(preset("small"), seed=0, init_std=TEACHING_INIT_STD)
    one, most = (gap_with_pads_by_hand(model, TOK, DEFAULTS[2], p) for p in (1, 16))
    assert most > 1.1 * one  # what "further the more pads" says, computed without the lesson's code
    assert f"gap is **{one:.3g}** with 1 pad after the sentence and **{most:.3g}** with 16" in all_text(at)
    assert figures(at)["pad_leak"]["data"][1]["x"][-1] == 16


def test_a_wrong_trend_names_its_misconception_and_a_new_sentence_asks_again():
    at = commit(open_asking(), TREND, STILL)
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert f"the model says “{GROWS}”" in errors
    assert "a [PAD] is a token like any other" in all_text(at)
    assert "pad_leak" in figures(at)
    at.text_input(key="padding.single").input("she slept").run()
    assert "pad_leak" not in figures(at) and at.radio(key=f"_predict_guess_{TREND}").value is None
    at = at.button(key=f"_predict_skip_{TREND}").click().run()
    assert "pad_leak" in figures(at) and "Gap without the mask" in all_text(at)
    assert not any(s.value.startswith("Right") for s in at.success) and not at.error  # skipped: not scored


def test_a_commit_with_nothing_given_asks_for_an_answer_and_reveals_nothing():
    at = commit(open_asking(), SHARE, None)
    assert "Choose an answer first" in all_text(at)
    assert "pad_mass" not in figures(at) and "padded_attention_unmasked" not in figures(at)
    at = commit(at, TREND, None)
    assert "pad_leak" not in figures(at)


def test_no_pads_no_share_question():
    at = open_page("padding", {"single": "the old man and the young woman sat on the mat"}, skip=False)
    assert not at.exception
    assert not [n for n in at.number_input if n.key == f"_predict_guess_{SHARE}"]
    assert {"padded_attention_unmasked", "pad_mass"} <= set(figures(at))  # nothing to predict: shown at once
