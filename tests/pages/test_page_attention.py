"""The Attention page in Streamlit's AppTest: numbers drawn == encoder_core's, every control, bad input, links."""

import inspect

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, commit_nothing, figures, open_numbers, open_page, page_evidence
from streamlit.testing.v1 import AppTest

from encoder_core import TEACHING_INIT_STD, build_encoder, english_tokenizer, preset
from encoder_core.lessons.attention import (
    ROUNDING,
    compare_masks,
    contrast_word,
    drop_token,
    last_word_position,
    look_ahead_run,
)
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
    assert "Step 1 of 6" in headings(at)
    assert set(figures(at)) == {"attention_bidirectional", "attention_causal"}
    at.button(key="lecture_next").click().run()
    assert "Step 2 of 6" in headings(at) and set(figures(at)) == set()  # the step asks first
    helpers.skip_predictions(at)
    assert "Step 2 of 6" in headings(at) and set(figures(at)) == {"drop_last"}


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

ROWS, DROP, LOOK = "attention-rows", "attention-drop", "attention-look-ahead"
SECTIONS = ("masks", "drop", "bank", "look-ahead", "worked example", "check yourself")


def open_asking(query: dict | None = None, every_section: bool = True) -> AppTest:
    """The page as a student first meets it: no prediction committed (every section, or the tabs)."""
    return open_page("attention", query, skip=False, every_section=every_section)


commit = helpers.commit_prediction  # choose or type the guess, then commit


def look_ahead_on_default(trained_mlm):
    """The look-ahead question on the default sentence, on the lab's trained MLM (the small model is random)."""
    model, tok, _ = trained_mlm
    run = look_ahead_run(model.bert, tok, DEFAULT)
    la = run.question
    label = [f"“{run.tokens[p]}” (token {p})" for p in la.options]
    return run, la, label


def evidence(trained_mlm) -> dict[str, tuple[set[str], tuple[str, ...]]]:
    """Per prediction: (the charts, the strings) that answer it, as the page would show them on the defaults."""
    run, la, _ = look_ahead_on_default(trained_mlm)
    win, word = la.options[la.answer], la.query
    return {
        ROWS: (
            {"attention_causal", "seed001_causal"},
            (
                "bidirectional,causal",  # the numbers table of both grids
                "Causal mask, layer 0",
                "Worked example: causal mask",
                "the last row equals",
                "the last row is unchanged",
                "Rows the same under both masks",
                "Last row: max difference",
                "row sum, causal",
            ),
        ),
        DROP: (
            {"drop_last", "bank"},
            (
                "Largest shift",
                "shift, causal",
                "moves the outputs before it by at most",
                "distance, causal",
                "Distance, causal",
                "its vector is the same",
            ),
        ),
        LOOK: (
            {"look_ahead"},
            (
                f"layer {run.layer}, head {run.head}, on your sentence",  # the head's grid on this sentence
                f"On your sentence, “{run.tokens[word]}” (token {word}) gives “{run.tokens[win]}”",
                "this head gives, on average",
            ),
        ),
    }


def assert_nothing_answers(at, evidence_of: dict, keys=(ROWS, DROP, LOOK)) -> None:
    helpers.assert_nothing_answers(at, evidence_of, keys)


def test_before_a_commit_nothing_on_the_page_answers_a_prediction(trained_mlm):
    at = open_asking()
    assert not at.exception
    assert {"attention_bidirectional", "look_ahead_example", "seed001_bidirectional"} <= set(figures(at))
    assert [r.key for r in at.radio if str(r.key).startswith("_predict_guess_")] == [
        f"_predict_guess_{k}" for k in (ROWS, DROP, LOOK)
    ]
    assert_nothing_answers(at, evidence(trained_mlm))
    text = all_text(at)
    assert "Answer the prediction in “Drop a token” first" in text and "Its causal grid is drawn once" in text


@pytest.mark.parametrize("step", range(len(SECTIONS)))
def test_no_tab_answers_a_prediction_before_its_commit(trained_mlm, step):
    at = open_asking({"step": str(step)}, every_section=False)
    assert_nothing_answers(at, evidence(trained_mlm))


def test_each_commit_reveals_its_own_evidence_and_no_other(trained_mlm):
    seen = evidence(trained_mlm)
    at = commit(open_asking(), ROWS, "the last row")
    assert {"attention_causal", "seed001_causal"} <= set(figures(at))
    assert "bidirectional,causal" in page_evidence(open_numbers(at, "attention_bidirectional", "attention_causal"))
    assert_nothing_answers(at, seen, keys=(DROP, LOOK))
    at = commit(at, DROP, "only the bidirectional one (no mask)")
    assert {"drop_last", "bank"} <= set(figures(at)) and "its vector is the same" in all_text(at)
    assert_nothing_answers(at, seen, keys=(LOOK,))
    _, la, labels = look_ahead_on_default(trained_mlm)
    at = commit(at, LOOK, labels[la.answer])
    assert "look_ahead" in figures(at) and all(
        s in page_evidence(open_numbers(at, "look_ahead")) for s in seen[LOOK][1]
    )


def test_a_right_row_prediction_reveals_the_causal_grid_and_the_models_rows():
    at = commit(open_asking(), ROWS, "the last row")
    assert not at.exception
    assert "Right." in [s.value for s in at.success]
    c = compare_masks(model_for(0), TOK.encode(DEFAULT).ids, 0, 0)
    same = [i for i in range(c.causal.shape[0]) if float((c.bidirectional[i] - c.causal[i]).abs().max()) <= ROUNDING]
    assert same == [c.causal.shape[0] - 1]
    assert f"**{same[-1]}** of 0–{same[-1]}" in all_text(at)
    np.testing.assert_allclose(figures(at)["attention_causal"]["data"][0]["z"], c.causal.numpy(), atol=1e-6)


def test_a_wrong_row_prediction_states_this_heads_numbers():
    at = commit(open_asking(), ROWS, "every row", sure="sure")
    c = compare_masks(model_for(0), TOK.encode(DEFAULT).ids, 0, 0)
    later = [float(c.bidirectional[i, i + 1 :].double().sum()) for i in range(c.causal.shape[0] - 1)]
    row = later.index(max(later))
    assert f"Here row {row} (“{TOK.encode(DEFAULT).tokens[row]}”) gave {later[row]:.3f}" in all_text(at)
    assert "One to remember" in all_text(at)


def test_a_wrong_drop_prediction_names_its_misconception_and_shows_the_shifts():
    at = commit(open_asking(), DROP, "both")
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "only the bidirectional one" in errors
    assert "hides every later token from earlier ones" in all_text(at)
    tokens = TOK.encode(DEFAULT).tokens
    d = drop_token(model_for(0), TOK.encode(DEFAULT).ids, last_word_position(tokens))
    np.testing.assert_allclose(figures(at)["drop_last"]["data"][1]["y"], d.shift_bidirectional, rtol=1e-5)


def test_a_wrong_look_ahead_names_the_habit_and_the_weights(trained_mlm):
    run, la, labels = look_ahead_on_default(trained_mlm)
    wrong = next(i for i, role in enumerate(la.roles) if role == "before")
    at = commit(open_asking(), LOOK, labels[wrong])
    assert not at.exception
    assert f"the model says “{labels[la.answer]}”" in " ".join(e.value for e in at.error)
    text = all_text(at)
    assert f"on the example it put {run.example_mass:.2f} of a token's attention" in text
    assert "this section runs on the lab's trained MLM" in text
    drawn = figures(at)["look_ahead"]["data"][0]["z"]
    np.testing.assert_allclose(drawn, run.grid.numpy(), atol=1e-6)


def test_the_look_ahead_answer_comes_from_the_sentence(trained_mlm):
    answers = set()
    for sentence in ("we walked home after the film", "my brother fixed the old bicycle"):
        at = open_asking({"sentence": sentence})
        run = look_ahead_run(trained_mlm[0].bert, trained_mlm[1], sentence)
        la = run.question
        labels = [f"“{run.tokens[p]}” (token {p})" for p in la.options]
        assert {o.split(". ", 1)[1] for o in at.radio(key=f"_predict_guess_{LOOK}").options} == set(labels)
        at = commit(at, LOOK, labels[la.answer])
        assert "Right." in [s.value for s in at.success]
        answers.add(labels[la.answer])
    assert len(answers) == 2


def test_a_head_that_looks_only_backwards_is_shown_not_asked(minilm):
    at = open_asking({"model": "minilm", "layer": "0", "head": "2"})
    assert not at.exception
    assert any("nothing is asked here" in i.value for i in at.info)
    assert "attention_causal" in figures(at) and f"_predict_guess_{ROWS}" not in [r.key for r in at.radio]


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


def test_every_prediction_is_practised_by_a_generator_of_its_idea():
    from quiz_checks import assert_practised

    from encoder_core.lessons.attention import row_facts
    from ui.questions import attention as questions

    enc = TOK.encode(DEFAULT)
    c = compare_masks(model_for(0), enc.ids, 0, 0)
    assert_practised(questions.same_rows(row_facts(c), enc.tokens))
    assert_practised(questions.drop(drop_token(model_for(0), enc.ids, last_word_position(enc.tokens))))


@pytest.mark.slow
@pytest.mark.parametrize("query", [{}, {"sentence": "we walked home after the film", "layer": "1", "head": "3"}])
def test_the_charts_held_back_for_a_prediction_pass_the_figure_rules(query):
    """The figure audit opens one tab at a time, where the "bank" and worked-example tabs wait for the predictions
    of earlier tabs: here they are drawn (every section, every prediction skipped) and held to the same rules."""
    import figure_rules as rules
    from apptest_helpers import charts

    drawn = {key: (spec, alt) for key, spec, alt in charts(open_page("attention", query))}
    assert {"bank", "seed001_causal", "look_ahead", "look_ahead_example", "attention_causal"} <= set(drawn)
    assert [f"{key}: {p}" for key, (spec, alt) in drawn.items() for p in rules.check_figure(spec, alt)] == []
