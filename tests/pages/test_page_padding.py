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
    helpers.skip_predictions(at)  # a new batch: its pads are shown once the count is answered
    assert np.asarray(figures(at)["padded_attention_masked"]["data"][0]["z"]).shape == (480, 480)

    at.text_input(key="padding.sentence_a").input("the cat").run()
    at.text_input(key="padding.single").input("<b>x</b> <script>alert(1)</script> &amp; zebra 🙂").run()
    helpers.skip_predictions(at)
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
    at = open_linked({"lecture": "1"})  # the pad count first: the later steps show the pads
    assert not at.exception
    assert "Step 1 of 6" in headings(at) and set(figures(at)) == {"batch"}
    at.button(key="lecture_next").click().run()
    at.button(key="lecture_next").click().run()
    helpers.skip_predictions(at)
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

COUNT, SHARE, TREND = "padding-pad-count", "padding-pad-share", "padding-leak-trend"
GROWS = "They move, further with more pads"
STILL = "They stay put: a [PAD] changes nothing"
SECTIONS = ("batch", "attention", "leak", "zero key", "pad rows", "check yourself")


def open_asking(query: dict | None = None, every_section: bool = True) -> AppTest:
    """The page as a student first meets it: no prediction committed (every section, or the tabs)."""
    return open_page("padding", query, skip=False, every_section=every_section)


commit = helpers.commit_prediction  # choose or type the guess, then commit


def share_by_hand(layer=0, head=0, texts=DEFAULTS) -> float:
    """Without the mask: the single sentence's real rows' total weight on its pad keys, averaged over those rows."""
    batch = batch_for(*texts, 0)
    model = build_encoder(preset("small"), seed=0, init_std=TEACHING_INIT_STD)
    w, n = padded_attention(model, batch, 1, layer, head).unmasked, batch.lengths[1]
    return float(w[:n, n:].sum(-1).mean())


def opened(at: AppTest) -> AppTest:
    """The pad count answered (skipped), as the sections that show the pads wait for."""
    return at.button(key=f"_predict_skip_{COUNT}").click().run()


EVIDENCE = {  # per prediction on the defaults (7 pads, 12 wide): (the charts, the strings) that answer it
    COUNT: (
        {"batch", "padded_attention_masked", "padded_attention_unmasked", "pad_mass", "pad_leak", "fast_path"},
        ("7 [PAD]", "12 wide", "12 positions", "its 7 [PAD]s", "ignore key (mask)", "this batch: 7 pads"),
    ),
    SHARE: (
        {"padded_attention_unmasked", "pad_mass"},
        ("with mask,without mask", "weight on pads, without mask", "of their attention on pads", "**0.244**"),
    ),
    TREND: ({"pad_leak"}, ("Gap without the mask", "gap, without mask", "Without the mask the gap is", "Mask on:")),
}


def assert_nothing_answers(at, keys=(COUNT, SHARE, TREND)) -> None:
    helpers.assert_nothing_answers(at, EVIDENCE, keys)


def test_the_evidence_is_what_the_defaults_give():
    assert f"{share_by_hand():.3f}" == "0.244" and batch_for(*DEFAULTS, 0).ids.shape == (2, 12)


def test_before_a_commit_nothing_on_the_page_answers_a_prediction():
    at = open_asking()
    assert not at.exception
    assert set(figures(at)) == {"zero_key_unmasked", "zero_key_masked"}  # the batch-free check by hand only
    assert [r.key for r in at.radio if str(r.key).startswith("_predict_guess_")] == [f"_predict_guess_{COUNT}"]
    assert_nothing_answers(at)
    assert "Answer the prediction in “The batch” first" in all_text(at)
    at = opened(at)  # the count known: the share and trend questions are asked, their answers still held back
    assert {"batch", "padded_attention_masked"} <= set(figures(at))
    assert at.number_input(key=f"_predict_guess_{SHARE}").value is None
    assert at.radio(key=f"_predict_guess_{TREND}").value is None
    assert_nothing_answers(at, keys=(SHARE, TREND))


@pytest.mark.parametrize("step", range(len(SECTIONS)))
def test_no_tab_answers_a_prediction_before_its_commit(step):
    assert_nothing_answers(open_asking({"step": str(step)}, every_section=False))


def test_the_pad_count_is_asked_first_and_its_answer_comes_from_the_sentences():
    at = open_asking()
    options = [o.split(". ", 1)[1] for o in at.radio(key=f"_predict_guess_{COUNT}").options]
    assert sorted(options, key=int) == ["6", "7", "8", "9"]  # one [SEP] for the pair, right, a [CLS] each, +2
    at = commit(at, COUNT, "6", sure="sure")
    assert "the model says “7”" in " ".join(e.value for e in at.error)
    assert "A pair gets a [SEP] after each of its sentences" in all_text(at) and "One to remember" in all_text(at)
    assert "batch" in figures(at) and "7 [PAD]" in all_text(at)
    at.text_input(key="padding.single").input("she slept").run()  # a new batch: asked again, on 8 pads
    assert "batch" not in figures(at)
    at = commit(at, COUNT, "8")
    assert "Right." in [s.value for s in at.success] and batch_rows(at)["token"][:4] == [
        "[CLS]",
        "she",
        "slept",
        "[SEP]",
    ]


def test_word_pieces_are_counted_and_a_miscount_by_words_is_named():
    at = open_asking({"single": "the doormat"})  # doormat: two pieces, so the single row is 5 tokens, 7 pads
    labels = [o.split(". ", 1)[1] for o in at.radio(key=f"_predict_guess_{COUNT}").options]
    assert "7" in labels and "8" in labels  # 8: one token per word
    at = commit(at, COUNT, "8")
    assert "“doormat” is 2 tokens here (door ##mat)" in all_text(at)


def test_a_right_share_reveals_the_unmasked_grid_then_a_new_layer_asks_again():
    share = share_by_hand()
    at = commit(opened(open_asking()), SHARE, round(share, 2))
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
    assert f"Here the 7 pads take {share_by_hand(layer=1):.3f} together" in all_text(at)  # too_low, with its fact


def test_an_even_spread_guess_is_named_where_the_head_is_far_from_even():
    share, even = share_by_hand(), 7 / 12  # layer 0, head 0: 0.244 against an even 0.583
    assert abs(even / share - 1) >= 0.5
    at = commit(opened(open_asking()), SHARE, round(even, 3))
    assert not any(s.value.startswith("Right") for s in at.success)
    assert f"an even {even:.3f}, but this head gives them {share:.3f}" in all_text(at)


def test_a_head_whose_pads_get_almost_nothing_is_shown_not_asked(minilm):
    at = opened(open_asking({"model": "minilm", "layer": "0", "head": "2"}))  # MiniLM's previous-token head
    assert any("so nothing is asked" in i.value for i in at.info)
    assert {"padded_attention_unmasked", "pad_mass"} <= set(figures(at))
    assert not [n for n in at.number_input if n.key == f"_predict_guess_{SHARE}"]


def test_a_right_trend_states_the_gaps_at_one_and_sixteen_pads():
    at = commit(opened(open_asking()), TREND, GROWS)
    assert not at.exception
    assert "Right." in [s.value for s in at.success]
    model = build_encoder(preset("small"), seed=0, init_std=TEACHING_INIT_STD)
    one, most = (gap_with_pads_by_hand(model, TOK, DEFAULTS[2], p) for p in (1, 16))
    assert most > 1.1 * one  # what "further the more pads" says, computed without the lesson's code
    assert f"gap is **{one:.3g}** with 1 pad after the sentence and **{most:.3g}** with 16" in all_text(at)
    assert figures(at)["pad_leak"]["data"][1]["x"][-1] == 16


def test_a_wrong_trend_names_its_misconception_and_a_new_sentence_asks_again():
    at = commit(opened(open_asking()), TREND, STILL)
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert f"the model says “{GROWS}”" in errors
    model = build_encoder(preset("small"), seed=0, init_std=TEACHING_INIT_STD)
    one, most = (gap_with_pads_by_hand(model, TOK, DEFAULTS[2], p) for p in (1, 16))
    assert "a [PAD] is a token like any other" in all_text(at)
    assert f"Here the gap is {one:.3g} with 1 pad and {most:.3g} with 16." in all_text(at)
    assert "pad_leak" in figures(at)
    at.text_input(key="padding.single").input("she slept").run()
    assert "pad_leak" not in figures(at)
    at = opened(at)
    assert "pad_leak" not in figures(at) and at.radio(key=f"_predict_guess_{TREND}").value is None
    at = at.button(key=f"_predict_skip_{TREND}").click().run()
    assert "pad_leak" in figures(at) and "Gap without the mask" in all_text(at)
    assert not any(s.value.startswith("Right") for s in at.success[1:]) and not at.error  # skipped: not scored


def test_a_commit_with_nothing_given_asks_for_an_answer_and_reveals_nothing():
    at = commit(open_asking(), COUNT, None)
    assert "Choose an answer first" in all_text(at) and "batch" not in figures(at)
    at = commit(opened(at), SHARE, None)
    assert "Choose an answer first" in all_text(at)
    assert "pad_mass" not in figures(at) and "padded_attention_unmasked" not in figures(at)
    at = commit(at, TREND, None)
    assert "pad_leak" not in figures(at)


def test_no_pads_no_share_question():
    at = opened(open_asking({"single": "the old man and the young woman sat on the mat"}))
    assert not at.exception
    assert not [n for n in at.number_input if n.key == f"_predict_guess_{SHARE}"]
    assert {"padded_attention_unmasked", "pad_mass"} <= set(figures(at))  # nothing to predict: shown at once


def test_every_prediction_is_practised_by_a_generator_of_its_idea():
    from quiz_checks import assert_practised

    from encoder_core.lessons.padding import pad_count
    from ui.questions import padding as questions

    count = pad_count(TOK.encode(*DEFAULTS[:2]), TOK.encode(DEFAULTS[2]), 0)
    assert_practised(questions.pad_count(count, 0))
    assert_practised(questions.pad_share(5, 7, 0, 0, 0.244, 7 / 12))
    assert_practised(questions.leak_trend(LEAK_MIN_PADS))


@pytest.mark.slow
@pytest.mark.parametrize(
    "query", [{}, {"n_pads": "32", "use_mask": "0", "layer": "1", "head": "3", "single": "she slept"}]
)
def test_the_charts_behind_the_pad_count_pass_the_figure_rules(query):
    """The figure audit opens one tab at a time, where the sections that show the pads wait for the count: here
    they are drawn (every section, every prediction skipped) and held to the same rules."""
    import figure_rules as rules
    from apptest_helpers import charts

    at = open_page("padding", query)
    drawn = {key: (spec, alt) for key, spec, alt in charts(at)}
    assert {"batch", "padded_attention_masked", "padded_attention_unmasked", "pad_mass", "pad_leak"} <= set(drawn)
    assert [f"{key}: {p}" for key, (spec, alt) in drawn.items() for p in rules.check_figure(spec, alt)] == []
