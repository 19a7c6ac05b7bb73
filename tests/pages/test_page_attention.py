"""The Attention page in Streamlit's AppTest: numbers drawn == encoder_core's, every control, bad input, links."""

import inspect

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, commit_nothing, figures, open_page
from streamlit.testing.v1 import AppTest

from encoder_core import TEACHING_INIT_STD, build_encoder, english_tokenizer, preset
from encoder_core.lessons.attention import ROUNDING, compare_masks, contrast_word, drop_token, last_word_position
from ui.frame.code import code_panel_key

DEFAULT = "the cat sat down"
BANK = ("she sat on the bank of the river", "she sat on the bank and counted the money")
TOK = english_tokenizer()


def open_linked(query: dict) -> AppTest:
    return helpers.open_linked("attention", query)


def headings(at) -> str:
    return "\n".join(str(h.value) for h in at.subheader)


def model_for(seed: int):
    return build_encoder(preset("small"), seed=seed, init_std=TEACHING_INIT_STD)


def tokens_dropped(figs) -> str:
    """The dropped token, as the drop chart's title names it: 'Drop token 4 (down): ...'."""
    return figs["drop_last"]["layout"]["title"]["text"].split("(", 1)[1].split(")", 1)[0]


def assert_page_matches_core(at, sentence: str, seed: int, layer: int, head: int, model=None, tok=TOK) -> None:
    """Every attention figure equals encoder_core's numbers for this model (default: the seeded small one)."""
    figs, m, enc = figures(at), model or model_for(seed), tok.encode(sentence)
    c = compare_masks(m, enc.ids, layer, head)
    bi, causal = figs["attention_bidirectional"]["data"][0], figs["attention_causal"]["data"][0]
    np.testing.assert_allclose(bi["z"], c.bidirectional.numpy(), rtol=0, atol=1e-7)
    np.testing.assert_allclose(causal["z"], c.causal.numpy(), rtol=0, atol=1e-7)
    assert list(bi["y"]) == [f"{i} {t}" for i, t in enumerate(enc.tokens)]
    assert f"layer {layer}, head {head}" in figs["attention_bidirectional"]["layout"]["title"]["text"]
    # By default the sentence's last word goes ([SEP] stays): the tokens before it are compared.
    d = drop_token(m, enc.ids, last_word_position(enc.tokens))
    assert tokens_dropped(figs) == enc.tokens[last_word_position(enc.tokens)]
    np.testing.assert_allclose(figs["drop_last"]["data"][0]["y"], d.shift_causal, rtol=1e-6)
    assert max(d.shift_causal) < ROUNDING
    np.testing.assert_allclose(figs["drop_last"]["data"][1]["y"], d.shift_bidirectional, rtol=1e-6)
    a, b = (tok.encode(s) for s in BANK)
    w = contrast_word(m, a.ids, b.ids, a.tokens, b.tokens, "bank")
    np.testing.assert_allclose(figs["bank"]["data"][0]["y"], w.distance_causal, rtol=1e-6)
    assert max(w.distance_causal) < ROUNDING
    np.testing.assert_allclose(figs["bank"]["data"][1]["y"], w.distance_bidirectional, rtol=1e-6)


def test_defaults_draw_encoder_core_numbers_and_the_seed_example():
    at = open_page("attention")
    assert not at.exception
    assert_page_matches_core(at, DEFAULT, seed=0, layer=0, head=0)
    figs, text = figures(at), all_text(at)
    np.testing.assert_allclose(
        figs["seed001_bidirectional"]["data"][0]["z"][0], [0.258, 0.020, 0.044, 0.677], rtol=0, atol=5e-4
    )
    assert "0.258, 0.020, 0.044, 0.677" in text and "0.742" in text
    causal_distance = next(m.value for m in at.metric if m.label == "Distance, causal")
    assert float(causal_distance) < ROUNDING
    sums = next(t.value for t in at.table if "row sum, causal" in t.value.columns)
    assert sums["row sum, causal"].astype(float).to_numpy() == pytest.approx(1.0, abs=1e-6)


EVERYDAY = (
    "yesterday my neighbour borrowed twelve eggs and a bag of flour because the supermarket on the corner "
    "had closed early for the holiday weekend"
)


@pytest.mark.slow
@pytest.mark.parametrize("choice", ["mlm", "minilm"])
def test_the_sidebar_model_is_the_one_drawn(choice, trained_mlm, minilm):
    model, tok = (trained_mlm[0].bert, trained_mlm[1]) if choice == "mlm" else (minilm.model, minilm.tokenizer)
    at = open_linked({"model": choice, "sentence": BANK[0], "layer": "1", "head": "2"})
    assert not at.exception
    assert_page_matches_core(at, BANK[0], seed=0, layer=1, head=2, model=model, tok=tok)
    running = "all-MiniLM-L6-v2" if choice == "minilm" else "the lab's trained MLM"
    assert f"Running on {running} (trained weights)" in all_text(at)
    assert "weights are random" not in all_text(at)


def test_minilm_sees_an_everyday_sentence_without_unknown_words(minilm):
    assert len(EVERYDAY.split()) >= 20
    at = open_linked({"model": "minilm", "sentence": EVERYDAY})
    assert not at.exception
    tokens = figures(at)["attention_bidirectional"]["data"][0]["y"]
    assert len(tokens) == len(minilm.tokenizer.encode(EVERYDAY).tokens)
    assert not any(t.endswith("[UNK]") for t in tokens) and "[UNK]" not in all_text(at)
    at.text_input(key="attention.sentence").input("the unbelievably fluffy cat sat on the doormat").run()
    text = all_text(at)
    assert "Split into word pieces" in text and "doormat → door ##mat" in text


def test_every_control_changes_what_is_drawn():
    at = open_page("attention")
    at.text_input(key="attention.sentence").input("the dog ran home").run()
    at.slider(key="attention.layer").set_value(1).run()
    at.slider(key="attention.head").set_value(3).run()
    at.number_input(key="seed").set_value(5).run()
    assert not at.exception
    assert_page_matches_core(helpers.skip_predictions(at), "the dog ran home", seed=5, layer=1, head=3)
    assert "would differ by up to" in all_text(at)  # layer > 0: the page says what a fully causal model does


def test_bad_sentences_get_a_message_and_a_fallback():
    at = open_page("attention")
    helpers.skip_predictions(at.text_input(key="attention.sentence").input("   ").run())
    assert not at.exception
    assert any("empty" in i.value for i in at.info)
    assert list(figures(at)["attention_causal"]["data"][0]["y"])[1:5] == ["1 the", "2 cat", "3 sat", "4 down"]

    at.text_input(key="attention.sentence").input("a " * 5000).run()  # 10,000 characters
    assert not at.exception
    notices = " ".join(w.value for w in at.warning)
    assert "10,000 characters" in notices  # the text is cut to what a control keeps...
    assert "cut" in notices  # ...and then to the model's 512 positions
    helpers.skip_predictions(at)
    assert np.asarray(figures(at)["attention_causal"]["data"][0]["z"]).shape == (512, 512)

    at.text_input(key="attention.sentence").input("<b>x</b> <script>alert(1)</script> &amp; zebra 🙂").run()
    assert not at.exception
    labels = [str(v) for v in figures(at)["attention_bidirectional"]["data"][0]["y"]]
    assert any("[UNK]" in v for v in labels)
    for fig in figures(at).values():
        for trace in fig["data"]:
            for v in list(trace.get("x", [])) + list(trace.get("y", [])):
                assert "<script" not in str(v) and "<b>" not in str(v)


def test_link_sets_every_control():
    at = open_linked({"sentence": "the dog ran", "layer": "1", "head": "2", "seed": "3"})
    assert not at.exception and not at.warning
    assert at.text_input(key="attention.sentence").value == "the dog ran"
    assert (at.slider(key="attention.layer").value, at.slider(key="attention.head").value) == (1, 2)
    assert_page_matches_core(at, "the dog ran", seed=3, layer=1, head=2)


def test_the_student_chooses_which_token_to_drop():
    at = open_linked({"sentence": "the dog ran", "drop": "sep"})
    assert not at.exception and at.radio(key="attention.drop").value == "sep"
    enc = TOK.encode("the dog ran")
    d = drop_token(model_for(0), enc.ids, len(enc.ids) - 1)
    figs = figures(at)
    assert tokens_dropped(figs) == "[SEP]"
    np.testing.assert_allclose(figs["drop_last"]["data"][1]["y"], d.shift_bidirectional, rtol=1e-6)
    helpers.skip_predictions(at.radio(key="attention.drop").set_value("word").run())
    assert tokens_dropped(figures(at)) == "ran" and len(figures(at)["drop_last"]["data"][0]["y"]) == 3


def test_malformed_link_values_give_a_notice():
    at = open_linked({"layer": "abc", "head": "99", "zzz": "1"})
    assert not at.exception
    notice = " ".join(w.value for w in at.warning)
    assert "layer" in notice and "head" in notice and "zzz" in notice
    assert (at.slider(key="attention.layer").value, at.slider(key="attention.head").value) == (0, 3)


def test_lecture_mode_steps_through_the_sections():
    at = open_linked({"lecture": "1"})
    assert not at.exception
    assert "Step 1 of 5" in headings(at)
    assert set(figures(at)) == {"attention_bidirectional", "attention_causal"}
    at.button(key="lecture_next").click().run()
    assert "Step 2 of 5" in headings(at) and set(figures(at)) == set()  # the step asks first
    helpers.skip_predictions(at)
    assert "Step 2 of 5" in headings(at) and set(figures(at)) == {"drop_last"}


def test_the_code_panel_reads_the_source_only_when_opened():
    at = open_page("attention", every_section=False)
    assert not [c for c in at.code if "def compare_masks" in c.value]  # closed: nothing to highlight
    at.session_state[code_panel_key(compare_masks)] = True  # what opening the panel sets
    at.run()
    assert not at.exception
    shown = [c.value for c in at.code if "def compare_masks" in c.value]
    assert [s.strip() for s in shown] == [inspect.getsource(compare_masks).strip()]


def test_the_sidebar_offers_the_three_models_and_a_missing_one_falls_back(monkeypatch):
    at = open_page("attention")
    options = at.selectbox(key="model").options
    assert len(options) == 3 and any("MiniLM" in o for o in options) and any("trained" in o for o in options)
    import ui.models

    monkeypatch.setattr(ui.models, "CHECKPOINT_DIR", "/nonexistent/small_mlm")
    at = open_linked({"model": "mlm"})
    assert not at.exception
    text = all_text(at)
    assert "could not be loaded, so this lesson runs on the small seeded model" in " ".join(w.value for w in at.warning)
    assert "Running on the small seeded model (seed 0)" in text
    assert_page_matches_core(at, DEFAULT, seed=0, layer=0, head=0)


# ---- predict, then see: the questions the lesson asks before it shows ----

ROWS, DROP = "attention-rows", "attention-drop"


def open_asking(query: dict | None = None) -> AppTest:
    """The page as a student first meets it: every section, no prediction committed."""
    return open_page("attention", query, skip=False)


commit = helpers.commit_prediction  # choose or type the guess, then commit


def test_before_a_commit_neither_reveal_is_drawn():
    at = open_asking()
    assert not at.exception
    figs = figures(at)
    assert "attention_bidirectional" in figs  # the worked half stays in view
    assert "attention_causal" not in figs and "drop_last" not in figs
    text = all_text(at)
    assert "Rows the same under both masks" not in text and "Largest shift" not in text
    assert [r.key for r in at.radio if str(r.key).startswith("_predict_guess_")] == [
        f"_predict_guess_{ROWS}",
        f"_predict_guess_{DROP}",
    ]


def test_a_right_row_prediction_reveals_the_causal_grid_and_the_models_rows():
    at = commit(open_asking(), ROWS, "the last row")
    assert not at.exception
    assert "Right." in [s.value for s in at.success]
    c = compare_masks(model_for(0), TOK.encode(DEFAULT).ids, 0, 0)
    same = [i for i in range(c.causal.shape[0]) if float((c.bidirectional[i] - c.causal[i]).abs().max()) <= ROUNDING]
    assert same == [c.causal.shape[0] - 1]
    assert f"**{same[-1]}** of 0–{same[-1]}" in all_text(at)
    np.testing.assert_allclose(figures(at)["attention_causal"]["data"][0]["z"], c.causal.numpy(), atol=1e-6)


def test_a_wrong_drop_prediction_names_its_misconception_and_shows_the_shifts():
    at = commit(open_asking(), DROP, "both")
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "only the bidirectional one" in errors
    assert "hides every later token from earlier ones" in all_text(at)
    tokens = TOK.encode(DEFAULT).tokens
    d = drop_token(model_for(0), TOK.encode(DEFAULT).ids, last_word_position(tokens))
    np.testing.assert_allclose(figures(at)["drop_last"]["data"][1]["y"], d.shift_bidirectional, rtol=1e-5)


def test_a_new_sentence_asks_again_and_skip_reveals_without_a_score():
    at = commit(open_asking(), ROWS, "every row")
    assert "attention_causal" in figures(at)
    at.text_input(key="attention.sentence").input("the dog ran home").run()
    assert "attention_causal" not in figures(at)  # a new sentence: the question is back
    at = at.button(key=f"_predict_skip_{ROWS}").click().run()
    assert "attention_causal" in figures(at) and not at.success and not at.error


def test_a_commit_with_nothing_chosen_asks_for_a_choice_and_reveals_nothing():
    commit_nothing(open_asking(), DROP, {"drop_last"})


def test_a_link_cannot_claim_a_commit():
    at = open_asking({"predict-attention-drop": "1", "_predictions": "x", "_predict_guess_attention-drop": "both"})
    assert not at.exception
    assert "drop_last" not in figures(at)
