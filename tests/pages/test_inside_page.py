"""The "Looking inside" page as an AppTest: every chart's numbers are encoder_core's, both predictions ask
before they show, bad input gets a message, lecture mode steps through, the sweep runs on request."""

from __future__ import annotations

import apptest_helpers as helpers
import numpy as np
import pytest
import torch
from apptest_helpers import all_text, figures, no_exception

import ui.models
from encoder_core.lessons import inside as core
from ui.questions.inside import head_name

pytestmark = pytest.mark.slow
CHARTS = {"inside_tokens", "inside_heads", "inside_explanations", "inside_agreement", "inside_lens", "inside_lens_rank"}
HEAD, METHOD, TOKEN = "inside-head", "inside-explanation", "inside-token"


def core_run(model, tok, text=core.DEFAULT_SENTENCE, baseline="[PAD]", steps=64):
    cloze = core.prepare_cloze(tok, text)
    knock = core.knockouts(model, tok, cloze)
    return cloze, knock, core.explanations(model, tok, cloze, knock.answer_id, baseline, steps)


def bars(fig) -> np.ndarray:
    return np.asarray(fig["data"][0]["y"], dtype=float)


def test_every_chart_shows_the_lab_mlms_numbers_when_the_sidebar_is_small(trained_mlm):
    model, tok, _ = trained_mlm
    at = helpers.open_page("inside")
    no_exception(at)
    figs = figures(at)
    assert CHARTS <= set(figs)
    cloze, knock, expl = core_run(model, tok)
    assert "random weights and no MLM head" in all_text(at) and "the lab's trained MLM" in all_text(at)
    assert f"answers **“{knock.answer}”**" in all_text(at)
    np.testing.assert_allclose(bars(figs["inside_tokens"]), knock.tokens.numpy(), atol=1e-5)
    np.testing.assert_allclose(np.asarray(figs["inside_heads"]["data"][0]["z"]), knock.heads.numpy(), atol=1e-5)
    z = np.asarray(figs["inside_explanations"]["data"][0]["z"], dtype=float)
    keep = core.scored_positions(cloze)
    truth = -knock.tokens.numpy()
    np.testing.assert_allclose(z[0, keep], truth[keep] / np.abs(truth[keep]).max(), atol=1e-5)
    ig = expl.integrated.scores.numpy()
    np.testing.assert_allclose(z[5, keep], ig[keep] / np.abs(ig[keep]).max(), atol=1e-5)
    assert np.isnan(z[:, cloze.position]).all()
    scores = core.agreement(expl, knock, cloze)
    np.testing.assert_allclose(bars(figs["inside_agreement"]), [scores[m] for m in core.METHODS], atol=1e-6)
    lens = core.logit_lens(model, tok, cloze)
    np.testing.assert_allclose(bars(figs["inside_lens"]), lens.probability, atol=1e-6)
    np.testing.assert_array_equal(bars(figs["inside_lens_rank"]), lens.rank)
    assert f"sum to **{expl.integrated.total:.4f}**" in all_text(at)


def test_minilm_when_the_sidebar_picks_it(minilm_mlm):
    model, tok, _ = minilm_mlm
    at = helpers.open_page("inside", {"model": "minilm"})
    no_exception(at)
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    knock = core.knockouts(model, tok, cloze)
    z = np.asarray(figures(at)["inside_heads"]["data"][0]["z"])
    assert z.shape == (6, 12)
    np.testing.assert_allclose(z, knock.heads.numpy(), atol=1e-4)
    assert "all-MiniLM-L6-v2 with the lab's MLM head" in all_text(at)
    assert not [b for b in at.button if b.key == "inside_use_minilm"]


def test_the_minilm_button_sets_the_sidebar(minilm_mlm):
    at = helpers.open_page("inside")
    at.button(key="inside_use_minilm").click().run()
    no_exception(at)
    assert at.session_state["model"] == "minilm"
    assert "inside_heads" not in figures(at)  # a new model: the question is asked again
    helpers.skip_predictions(at)
    assert np.asarray(figures(at)["inside_heads"]["data"][0]["z"]).shape == (6, 12)


# ---- predict, then see ----


def open_asking(query=None):
    return helpers.open_linked("inside", query, skip=False)


def offered(at, key: str) -> list[str]:
    """A choice's options as labels (the radio shows each with its letter: "A. label")."""
    return [o.split(". ", 1)[1] for o in at.radio(key=f"_predict_guess_{key}").options]


def test_every_prediction_asks_before_anything_is_shown():
    at = open_asking()
    no_exception(at)
    figs = set(figures(at))
    assert "inside_explanations" in figs and "inside_lens" in figs  # the worked part stays in view
    assert not {"inside_tokens", "inside_heads", "inside_agreement"} & figs
    assert len(offered(at, TOKEN)) == 4 and len(offered(at, HEAD)) == 4
    assert len(offered(at, METHOD)) == 5


def test_the_head_guess_is_scored_against_the_knockouts(trained_mlm):
    model, tok, _ = trained_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    knock = core.knockouts(model, tok, cloze)
    right = head_name(*knock.most_important_head())
    at = open_asking()
    options = offered(at, HEAD)
    assert right in options
    at = helpers.commit_prediction(at, HEAD, right)
    no_exception(at)
    assert any(s.value.startswith("Right") for s in at.success)
    assert "inside_heads" in figures(at)

    wrong = next(o for o in options if o != right)
    at = helpers.commit_prediction(open_asking(), HEAD, wrong)
    assert any(e.value.startswith("Not quite") for e in at.error)
    assert "The idea behind that guess" in all_text(at)


def test_the_explanation_guess_is_scored_against_the_rank_correlations(trained_mlm):
    model, tok, _ = trained_mlm
    cloze, knock, expl = core_run(model, tok)
    best = core.METHODS[core.best_method(core.agreement(expl, knock, cloze))]
    at = helpers.commit_prediction(open_asking(), METHOD, best)
    no_exception(at)
    assert any(s.value.startswith("Right") for s in at.success) and "inside_agreement" in figures(at)


# ---- input ----


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("the cat sat on the mat .", "There was no [MASK]"),
        ("the [MASK] sat on the [MASK]", "has 2 [MASK]s"),
        ("the [MASK] sat " + "and sat " * 60, "cut to its first 64 tokens"),
        ("[SEP] [MASK] [CLS]", "only special tokens"),
        ("   ", "The sentence is empty"),
        ("<b>x</b> [MASK] ** _y_", None),
    ],
)
def test_bad_input_gets_a_message_never_a_traceback(text, said):
    at = helpers.open_page("inside", {"inside_sentence": text})
    no_exception(at)
    if said:
        assert said in all_text(at)
    assert CHARTS <= set(figures(at))


def test_a_word_to_hide_can_be_chosen(trained_mlm):
    _, tok, _ = trained_mlm
    at = helpers.open_page("inside", {"inside_sentence": "the cat sat on the mat"})
    box = at.selectbox(key="inside.inside_hide")
    assert box.value == 0
    at = helpers.skip_predictions(box.set_value(2).run())  # a new sentence: its questions are asked anew
    no_exception(at)
    assert "word 2 (“cat”)" in all_text(at)
    cloze = core.prepare_cloze(tok, "the cat sat on the mat", 2)
    assert len(bars(figures(at)["inside_tokens"])) == len(cloze.ids) and cloze.position == 2


def test_link_values_out_of_range_are_replaced_with_a_notice():
    at = helpers.open_linked("inside", {"inside_baseline": "noise", "inside_steps": "7", "inside_hide": "-3"})
    no_exception(at)
    text = all_text(at)
    assert "inside_baseline=noise" in text and "inside_steps=7" in text
    assert at.session_state["inside.inside_baseline"] == "[PAD]" and at.session_state["inside.inside_steps"] == 64


def test_the_baseline_and_steps_change_integrated_gradients(trained_mlm):
    model, tok, _ = trained_mlm
    at = helpers.open_page("inside", {"inside_baseline": "zeros", "inside_steps": "4"})
    no_exception(at)
    _, _, expl = core_run(model, tok, baseline="zeros", steps=4)
    assert f"sum to **{expl.integrated.total:.4f}**" in all_text(at) and "in 4 steps" in all_text(at)


def test_without_a_model_the_page_says_why(monkeypatch):
    monkeypatch.setattr(ui.models, "masked_lm", lambda choice: ui.models.Loaded(None, "the checkpoint is missing"))
    at = helpers.open_page("inside")
    no_exception(at)
    assert "none could be loaded" in all_text(at) and "the checkpoint is missing" in all_text(at)
    assert not figures(at)


# ---- the fixed set, and lecture mode ----


def test_the_sweep_runs_on_request_and_shows_the_cores_means(trained_mlm, monkeypatch):
    model, tok, _ = trained_mlm
    few = core.CLOZE_SENTENCES[:4]
    monkeypatch.setattr(core, "CLOZE_SENTENCES", few)
    ui.models._inside_sweep_store.clear()
    at = helpers.open_page("inside", {"inside_steps": "4"})
    assert "inside_sweep" not in figures(at)
    at.button(key="inside_run_sweep").click().run()
    no_exception(at)
    expected = core.sweep(model, tok, few, "[PAD]", 4)
    np.testing.assert_allclose(bars(figures(at)["inside_sweep"]), [expected.mean[m] for m in core.METHODS], atol=1e-9)
    assert "agrees best with the knockouts over the 4 sentences" in all_text(at)
    assert not [b for b in at.button if b.key == "inside_run_sweep"]  # done: the button gives way to the chart
    ui.models._inside_sweep_store.clear()


@pytest.mark.parametrize("step", range(5))
def test_lecture_mode_shows_one_step_at_a_time(step):
    at = helpers.open_linked("inside", {"lecture": "1", "step": str(step)}, every_section=False)
    no_exception(at)
    assert any(f"Step {step + 1} of 5" in h.value for h in at.subheader)


def test_torch_stays_out_of_the_page():
    source = (helpers.ROOT / "pages" / "inside.py").read_text(encoding="utf-8")
    assert "import torch" not in source and torch is not None


def test_the_questions_review_concepts_are_the_lessons_generators(trained_mlm):
    from encoder_core.quiz import generators
    from ui.questions import inside as questions

    model, tok, _ = trained_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    knock = core.knockouts(model, tok, cloze)
    choice = core.head_choice(knock, core.attention_maps(model, cloze), cloze.position)
    names = {g.__name__ for g in generators("inside")}
    head_q, method_q = questions.most_important_head(choice, knock.answer), questions.best_explanation()
    assert {head_q.concept, method_q.concept} <= names
    for option, reason, effect in zip(head_q.options, choice.reasons, choice.effects, strict=True):
        assert reason == "answer" or f"{effect:+.2f}" in option.misconception
    assert all(o.misconception for o in method_q.options) and len(method_q.options) == len(core.METHODS)
