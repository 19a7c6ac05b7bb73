"""The outputs page in Streamlit's AppTest: numbers drawn == encoder_core's, training on click, bad input."""

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, figures, open_page

import ui.models
from encoder_core.finetune.tasks import DEFAULT_STEPS, TAGS
from encoder_core.lessons import outputs as lesson
from ui.frame.quiz_widget import escape_md
from ui.questions import outputs as questions
from ui.views import outputs as views

SHORT = {"out_length": "short"}  # half the default steps: the page's training, kept quick for tests
TIMEOUT = 300


def short_steps(task: str) -> int:
    return max(10, round(DEFAULT_STEPS[task] * 0.5))


def trained_page(button: str, query: dict | None = None):
    at = open_page("outputs", query={**SHORT, **(query or {})})
    if any(b.key == button for b in at.button):
        at.button(key=button).click().run(timeout=TIMEOUT)
        helpers.skip_predictions(at)  # a question that waited for the runs: skipped, as open_page skips the others
    assert not at.exception
    return at


def test_defaults_show_the_shapes_the_labels_and_a_train_button_per_head(trained_mlm):
    at = open_page("outputs")
    assert not at.exception
    model, tok, _ = trained_mlm
    tables = [d.value for d in at.dataframe]
    shapes = next(t for t in tables if "tensor" in t.columns and "head" in t.columns)
    batch = [("the old dog was not happy", None), ("the girl was hungry", "she ate the bread")]
    expected = lesson.head_shapes(model.bert, tok, batch)
    assert list(shapes["shape"]) == [str(s) for steps in expected.steps.values() for _, s in steps]
    core = lesson.tagging_labels(tok, "the girl found a red ball in the garden")
    cells = figures(at)["tag_labels"]["data"][0]
    assert [c.split("<b>")[1].removesuffix("</b>") for c in cells["text"][0]] == [
        "-100" if v == -100 else TAGS[v] for v in core.labels
    ]
    assert core.labels[0] == core.labels[-1] == -100
    keys = {b.key for b in at.button}
    for task in ("sentence", "pair", "tagging", "qa"):  # a button for each head nobody has trained yet
        kept = ui.models.cached_fine_tune(task, "finetune", DEFAULT_STEPS[task], 0, "cls") is not None
        assert (f"train_{task}" in keys) != kept, task
    assert "train_pooling" in keys or ui.models.cached_fine_tune("sentence", "finetune", 150, 0, "mean")
    assert "train_starts" not in keys  # the three starting points train on the prediction's commit (or skip)
    assert ui.models.cached_fine_tune("sentence", "scratch", DEFAULT_STEPS["sentence"], 0, "cls")  # the skip did
    assert "quiz_outputs_submit" in keys  # Check yourself


@pytest.mark.parametrize(
    ("typed", "verdict"),
    [
        (("(8, 20, 48)", "8x20x1000", "[12, 1000]"), "All three right"),
        (("(8, 20, 48)", "(8, 20, 48)", "(12, 48)"), "1 of 3 right"),
    ],
)
def test_the_shape_exercise_checks_the_students_answers(typed, verdict):
    at = open_page("outputs")
    for name, value in zip(lesson.EXERCISE_STEPS, typed):
        at.text_input(key=f"ex_typed_{name}").input(value)
    at.run()
    assert not at.exception
    assert verdict in all_text(at)


def test_the_exercise_takes_the_students_own_numbers():
    at = open_page("outputs")
    at.number_input(key="ex_batch").set_value(3)
    at.number_input(key="ex_d_model").set_value(16)
    at.text_input(key="ex_typed_hidden").input("(3, 20, 16)")
    at.run()
    table = next(d.value for d in at.dataframe if "you typed" in d.value.columns)
    assert list(table["computed"]) == ["(3, 20, 16)", "(3, 20, 1000)", "(12, 1000)"]
    assert list(table["result"]) == ["right", "not a shape", "not a shape"]


def test_fine_tuning_the_sentence_head_draws_the_run_the_core_made(trained_mlm):
    at = trained_page("train_sentence")
    run = ui.models.cached_fine_tune("sentence", "finetune", short_steps("sentence"), 0, "cls")
    assert run is not None and run.steps == short_steps("sentence")
    figs = figures(at)
    np.testing.assert_allclose(figs["loss_sentence"]["data"][0]["y"], run.losses, rtol=1e-12)
    assert figs["loss_sentence"]["layout"]["yaxis"]["range"][0] == 0
    pred = lesson.classify(run, trained_mlm[1], "the old dog was not happy")
    np.testing.assert_allclose(figs["predict_sentence"]["data"][0]["x"], pred.probabilities, rtol=1e-6)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["held-out accuracy"] == f"{run.held_out:.1%}"
    assert metrics["majority baseline"] == f"{run.baseline:.1%}"
    assert "train_sentence" not in {b.key for b in at.button}  # kept for every session: never trained twice


@pytest.mark.slow
def test_bad_input_gets_a_message_and_a_fallback():
    at = trained_page("train_qa", {"out_question": "where did the horse sleep ?", "out_passage": "   "})
    assert any("empty" in i.value for i in at.info)  # the empty passage falls back to the example
    assert any("never mentions horse" in w.value for w in at.warning)  # a question the passage cannot answer
    at.text_input(key="outputs.out_question").input("where did the cat sit ?").run(timeout=TIMEOUT)
    assert not any("never mentions" in w.value for w in at.warning)
    at.text_input(key="outputs.out_sentence").input("").run()
    at.text_input(key="outputs.out_pair_b").input("").run()
    assert sum("empty" in i.value for i in at.info) >= 2
    at.text_input(key="outputs.out_tag_sentence").input("the 🦄 sat <b>here</b>").run()
    at.button(key="train_tagging").click().run(timeout=TIMEOUT)
    assert not at.exception
    assert "🦄" in all_text(at)  # named as [UNK]
    tags = figures(at)["predict_tags"]["data"][0]["text"][0]
    assert any("&lt;" in cell for cell in tags) and not any("<b>here" in cell for cell in tags)
    long_text = "the cat sat on the mat " * 300
    at.text_input(key="outputs.out_passage").input(long_text[:2000]).run(timeout=TIMEOUT)
    assert not at.exception
    assert any("cut" in w.value for w in at.warning)


def test_the_span_drawn_is_the_cores_and_stays_in_the_passage(trained_mlm):
    at = trained_page("train_qa")
    run = ui.models.cached_fine_tune("qa", "finetune", short_steps("qa"), 0, "cls")
    question, passage = (
        "where did the cat sleep ?",
        "the old man read the book on the sofa and the cat slept on the mat",
    )
    pred = lesson.answer_span(run, trained_mlm[1], question, passage)
    span = figures(at)["predict_span"]["data"]
    np.testing.assert_allclose(span[0]["y"], pred.start_probs, rtol=1e-6)
    np.testing.assert_allclose(span[1]["y"], pred.end_probs, rtol=1e-6)
    assert len(span[0]["y"]) == len(passage.split()) and 0 <= pred.start <= pred.end
    assert f"“{pred.answer}”" in all_text(at)


def test_the_three_starting_points_share_task_steps_and_seed():
    at = open_page("outputs", {**SHORT, "out_compare": "tagging"})  # the skip trains them (or finds them kept)
    assert not at.exception
    figs = figures(at)
    runs = {s: ui.models.cached_fine_tune("tagging", s, short_steps("tagging"), 0, "cls") for s in lesson.STARTS}
    for trace, start in zip(figs["starts_loss"]["data"], lesson.STARTS):
        np.testing.assert_allclose(trace["y"], runs[start].losses, rtol=1e-12)
    np.testing.assert_allclose(figs["starts_scores"]["data"][0]["y"], [runs[s].held_out for s in lesson.STARTS])
    assert figs["starts_scores"]["layout"]["yaxis"]["range"][0] == 0


def test_pooling_ranking_is_measured_on_minilm(minilm):
    at = helpers.open_linked("outputs", {"step": "6"}, every_section=False)
    assert not at.exception
    expected = lesson.pooling_ranking(minilm)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["rank accuracy, [CLS]"] == f"{expected.rank_accuracy['cls']:.1%}"
    assert metrics["rank accuracy, mean pooling"] == f"{expected.rank_accuracy['mean']:.1%}"
    bars = figures(at)["pooling_ranking"]["data"]
    assert [t["name"] for t in bars] == ["[CLS] vector", "mean of the real tokens"]
    kinds = [k for _, _, k in expected.pairs]
    for trace, pooling in zip(bars, ("cls", "mean")):
        means = [
            np.mean([c for c, k in zip(expected.cosine[pooling], kinds) if k == kind]) for kind in lesson.PAIR_KINDS
        ]
        np.testing.assert_allclose(trace["y"], means, rtol=1e-9)
    assert expected.rank_accuracy["mean"] >= expected.rank_accuracy["cls"]  # what docs/models.md quotes


def test_a_missing_checkpoint_is_named_and_the_page_carries_on(monkeypatch, tmp_path):
    monkeypatch.setattr(ui.models, "CHECKPOINT_DIR", str(tmp_path / "small_mlm"))
    at = open_page("outputs", query={"out_length": "long"})  # settings nobody has trained: nothing cached
    assert not at.exception
    assert "python -m scripts.train" in " ".join(e.value for e in at.error)
    assert "needs a trained model" in all_text(at)
    assert not any(b.key.startswith("train_") for b in at.button)


def test_links_set_the_controls_and_bad_values_get_a_notice_and_lecture_mode_steps():
    at = helpers.open_linked(
        "outputs", {"out_length": "forever", "out_compare": "poetry", "out_sentence": "a cat", "lecture": "1"}
    )
    assert not at.exception
    notice = " ".join(w.value for w in at.warning)
    assert "out_length" in notice and "out_compare" in notice
    assert at.session_state["outputs.out_length"] == "default" and at.session_state["outputs.out_compare"] == "sentence"
    assert at.session_state["outputs.out_sentence"] == "a cat"
    assert any(h.value.startswith("Step 1 of 8: The shapes") for h in at.subheader)
    at.button(key="lecture_next").click().run()
    assert any(h.value.startswith("Step 2 of 8: Classify a sentence") for h in at.subheader)
    assert at.query_params["step"] == "1"


class LeftThePage(Exception):
    """What Streamlit raises inside a run when the student moves on: here, raised by hand."""


def test_a_run_stopped_half_way_leaves_nothing_in_the_shared_cache():
    key = ("tagging", "frozen", 7, 5, "cls")  # settings no other test uses

    def leave(step, total, loss):
        if step == 3:
            raise LeftThePage

    with pytest.raises(LeftThePage):
        ui.models.run_fine_tune(*key, progress=leave)
    assert ui.models.cached_fine_tune(*key) is None
    run = ui.models.run_fine_tune(*key)  # the lock was released: the next click trains and keeps it
    assert ui.models.cached_fine_tune(*key) is run and len(run.losses) == 7


# ---- long text, and a head's answer outside its training ----


def test_a_pasted_text_longer_than_a_box_keeps_is_cut_with_a_notice():
    at = open_page("outputs")
    at.text_input(key="outputs.out_passage").input("the cat sat on the mat " * 110).run()  # 2,530 characters
    assert not at.exception
    notices = " ".join(w.value for w in at.warning)
    assert "“Passage” was 2,530 characters long: the lesson keeps the first 2,000." in notices
    assert (
        at.session_state["outputs.out_passage"] == ("the cat sat on the mat " * 110)[:2000]
    )  # the new text, cut: not the old


def test_an_answer_outside_the_heads_training_says_it_is_a_guess(trained_mlm):
    at = trained_page("train_sentence", {"out_sentence": "the pharmacist was angry about the tax"})
    run = ui.models.cached_fine_tune("sentence", "finetune", short_steps("sentence"), 0, "cls")
    tok = trained_mlm[1]
    pred = lesson.classify(run, tok, "the pharmacist was angry about the tax")
    assert pred.guess and "pharmacist" in pred.unseen
    warnings = " ".join(w.value for w in at.warning)
    assert views.guess_text(pred, escape_md) in warnings and "pharmacist, angry, about, tax" in warnings
    assert "What this head knows: the grammar's mood sentences only" in all_text(at)
    guesses = sum("Treat this answer as a guess" in w.value for w in at.warning)  # other heads' too
    at.text_input(key="outputs.out_sentence").input("the old dog was not happy").run()
    inside = lesson.classify(run, tok, "the old dog was not happy")
    assert inside.unseen == []
    assert sum("Treat this answer as a guess" in w.value for w in at.warning) == guesses - (not inside.guess)


def test_tags_of_words_outside_the_grammar_are_marked_as_guesses(trained_mlm):
    text = "the girl met a pharmacist on thursday"
    at = trained_page("train_tagging", {"out_tag_sentence": text})
    run = ui.models.cached_fine_tune("tagging", "finetune", short_steps("tagging"), 0, "cls")
    pred = lesson.tag_words(run, trained_mlm[1], text)
    cells = figures(at)["predict_tags"]["data"][0]["text"][0]
    assert ["<i>guess</i>" in c for c in cells] == pred.guessed
    assert pred.guessed[4] and pred.guessed[6]  # pharmacist, thursday: never in the tagging data
    warnings = " ".join(w.value for w in at.warning)
    assert "pharmacist (never seen in training)" in warnings and "are guesses" in warnings


# ---- predict, then see ----

SHAPE, PROBE = "outputs-tag-shape", "outputs-probe-or-scratch"
BATCH = [("the old dog was not happy", None), ("the girl was hungry", "she ate the bread")]


def test_the_options_fit_what_a_choice_keeps():
    from ui.frame.predict import MAX_WORD

    forms = {form: (2, 128, 64) for form in lesson.SHAPE_FORMS}
    for q in (questions.shape_question(forms, 64, 6), questions.probe_question("tagging", 50)):
        assert all(len(o.label) <= MAX_WORD for o in q.options)
    assert len(questions.probe_question("qa", 1).options) == len(lesson.PROBE_OUTCOMES)


def open_asking(query: dict | None = None):
    return open_page("outputs", query, skip=False)


def commit(at, key: str, label: str | None, timeout: float = 60):
    return helpers.commit_prediction(at, key, label, timeout=timeout)


def shape_labels(trained_mlm, batch=BATCH) -> tuple[dict[str, str], str, tuple]:
    """{form: the option's label} on this batch, the model's answer, and the logits' shape, from encoder_core."""
    model, tok, _ = trained_mlm
    shapes = lesson.head_shapes(model.bert, tok, batch)
    forms = lesson.shape_forms(shapes, "tagging")
    labels = {form: f"{form} = {shape}" for form, shape in forms.items()}
    return labels, lesson.logits_form(shapes, "tagging"), shapes.shape("tagging", "logits")


def shapes_table_shown(at) -> bool:
    return any("tensor" in d.value.columns and "head" in d.value.columns for d in at.dataframe)


def test_before_a_commit_the_shapes_are_not_shown_but_the_labels_chart_is(trained_mlm):
    at = open_asking()
    assert not at.exception
    assert "tag_labels" in figures(at)  # the first section's chart stays in view
    _, _, logits = shape_labels(trained_mlm)
    assert not shapes_table_shown(at)
    assert "The tagging head's logits" not in all_text(at) and str(logits) not in all_text(at)
    assert f"_predict_guess_{SHAPE}" in [r.key for r in at.radio]


def test_a_right_shape_prediction_reveals_the_measured_shapes(trained_mlm):
    labels, form, logits = shape_labels(trained_mlm)
    assert form == "(B, T, C)"
    at = commit(open_asking(), SHAPE, labels[form])
    assert not at.exception
    assert "Right." in [s.value for s in at.success]
    assert f"The tagging head's logits on your batch: **{logits}**, that is {form}." in all_text(at)
    assert shapes_table_shown(at)


def test_a_wrong_shape_prediction_names_its_misconception(trained_mlm):
    labels, _, _ = shape_labels(trained_mlm)
    at = commit(open_asking(), SHAPE, labels["(B, C)"])
    assert not at.exception and at.error
    assert "A tagger does not pool" in all_text(at)


def test_a_new_sentence_asks_the_shape_again_and_skip_reveals(trained_mlm):
    labels, form, _ = shape_labels(trained_mlm)
    at = commit(open_asking(), SHAPE, labels[form])
    assert shapes_table_shown(at)
    new = "a much longer sentence to classify , so that the batch has more positions than before"
    at.text_input(key="outputs.out_sentence").input(new).run()
    assert not shapes_table_shown(at)  # a new batch: the question is back, with its own numbers
    labels_now, _, logits_now = shape_labels(trained_mlm, [(new, None), BATCH[1]])
    assert any(o.endswith(labels_now[form]) for o in at.radio(key=f"_predict_guess_{SHAPE}").options)  # "B. ..."
    at.button(key=f"_predict_skip_{SHAPE}").click().run()
    assert shapes_table_shown(at) and str(logits_now) in all_text(at)


def test_a_shape_commit_with_nothing_chosen_asks_for_a_choice():
    at = commit(open_asking(), SHAPE, None)
    assert "Choose an answer first" in all_text(at)
    assert not shapes_table_shown(at)


def probe_runs(task: str = "tagging", train: bool = False) -> dict | None:
    """The three runs the page makes at the short length, from the shared store (trained here if asked)."""
    keys = {s: (task, s, short_steps(task), 0, "cls") for s in lesson.STARTS}
    if train:
        for key in keys.values():
            ui.models.run_fine_tune(*key)
    runs = {s: ui.models.cached_fine_tune(*key) for s, key in keys.items()}
    return runs if all(runs.values()) else None


def probe_outcome(runs: dict) -> str:
    """Independently of probe_or_scratch: the winner outside 2 points, else about the same."""
    gap = runs["frozen"].held_out - runs["scratch"].held_out
    return "same" if abs(gap) <= 0.02 + 1e-9 else ("frozen" if gap > 0 else "scratch")


def test_the_probe_commit_starts_the_training_and_the_reveal_shows_the_result():
    at = open_asking({**SHORT, "out_compare": "pair"})  # settings no other test trains the three runs of
    assert not at.exception
    was_trained = probe_runs("pair") is not None
    assert "train_starts" not in [b.key for b in at.button]  # no button: the commit starts the runs
    assert f"_predict_guess_{PROBE}" in [r.key for r in at.radio]
    assert not {"starts_loss", "starts_scores"} & set(figures(at)) and "frozen probe **" not in all_text(at)
    if not was_trained:
        assert "Trains 3 models, one after the other" in all_text(at)  # says what the commit will start
    at = commit(at, PROBE, questions.PROBE_LABELS["frozen"], timeout=TIMEOUT)  # one click: trained, revealed
    assert not at.exception
    runs = probe_runs("pair")
    assert runs is not None
    outcome = probe_outcome(runs)
    assert {"starts_loss", "starts_scores"} <= set(figures(at))
    assert "Your prediction is in" not in all_text(at)
    if outcome == "frozen":
        assert "Right." in [s.value for s in at.success]
    else:
        assert at.error and questions.PROBE_MISCONCEPTIONS["frozen"] in all_text(at)
    shown = f"frozen probe **{runs['frozen'].held_out:.1%}**, random weights **{runs['scratch'].held_out:.1%}**"
    assert shown in all_text(at)


def test_the_probe_answer_is_the_models():
    runs = probe_runs("tagging", train=True)
    cmp = lesson.compare_starts(runs)
    outcome = probe_outcome(runs)
    assert lesson.probe_or_scratch(cmp) == outcome
    at = open_asking({**SHORT, "out_compare": "tagging"})
    assert "starts_scores" not in figures(at) and "starts_loss" not in figures(at)  # trained, still asked first
    at = commit(at, PROBE, questions.PROBE_LABELS[outcome])
    assert "Right." in [s.value for s in at.success]
    shown = f"frozen probe **{runs['frozen'].held_out:.1%}**, random weights **{runs['scratch'].held_out:.1%}**"
    assert shown in all_text(at)
    scores = figures(at)["starts_scores"]["data"][0]["y"]
    np.testing.assert_allclose(scores, [cmp.held_out[s] for s in lesson.STARTS])
    wrong = next(o for o in lesson.PROBE_OUTCOMES if o != outcome)
    at = commit(open_asking({**SHORT, "out_compare": "tagging"}), PROBE, questions.PROBE_LABELS[wrong])
    assert at.error and questions.PROBE_MISCONCEPTIONS[wrong] in all_text(at)
    at.selectbox(key="outputs.out_compare").set_value("sentence").run()  # another task: asked again
    assert "starts_scores" not in figures(at)


# ---- nothing on the page answers a prediction before its commit ----

CLOSEST = "outputs-closest-sentence"
DEFAULTS_SENTENCE = "the old dog was not happy"


def evidence(at, *mine: str) -> str:
    """Everything the page shows, every numbers panel open, less the prediction's own options (`mine`)."""
    at = helpers.open_numbers(at, *figures(at))
    assert not at.exception
    text = helpers.page_evidence(at)
    for label in sorted(mine, key=len, reverse=True):
        text = text.replace(label, "")
    return text


def starts_evidence(runs: dict) -> list[str]:
    cmp = lesson.compare_starts(runs)
    return [views.probe_answer_text(cmp), views.starts_verdict(cmp), views.starts_scores_chart(cmp).alt]


def closest_evidence(minilm, text: str = DEFAULTS_SENTENCE) -> list[str]:
    """What answers the closest-sentence prediction: its answer's text, its chart's alternative, its feedback."""
    c = lesson.closest_sentence(minilm, text)
    q = questions.closest_question(c, escape_md(text))
    wrong = [o.misconception for i, o in enumerate(q.options) if i != c.answer]
    return [views.closest_answer_text(c, escape_md), views.closest_chart(c).alt, *wrong]


def test_before_its_commit_no_prediction_is_answered_anywhere_on_the_page(trained_mlm, minilm):
    labels, _, logits = shape_labels(trained_mlm)
    runs = probe_runs("tagging", train=True)  # kept: the page could show them, and must hold them back
    found = closest_evidence(minilm)
    held = [
        *views.TASK_SHAPES.values(),
        "(B,T,6)",
        "The tagging head's logits",
        str(logits),
        *starts_evidence(runs),
        *found,
    ]
    at = open_asking({**SHORT, "out_compare": "tagging"})
    assert {f"_predict_guess_{k}" for k in (SHAPE, PROBE, CLOSEST)} <= {r.key for r in at.radio}
    text = evidence(at, *labels.values())  # the shape's own options hold the logits' shape: left out
    assert not [e for e in held if e in text]
    assert views.SHAPE_HELD in text and not shapes_table_shown(at)
    assert not {"starts_loss", "starts_scores", "closest_sentence"} & set(figures(at))
    shown = evidence(helpers.skip_predictions(at))  # the same strings, once answered
    assert views.TASK_SHAPES["tagging"] in shown and str(logits) in shown
    assert all(e in shown for e in starts_evidence(runs)) and all(e in shown for e in found[:2])
    for step in (3, 4, 5, 6, 7):  # a later tab, opened before the commit, holds its give-away back too
        at = helpers.open_linked("outputs", {**SHORT, "out_compare": "tagging", "step": str(step)}, every_section=False,
                                 skip=False)  # fmt: skip
        text = evidence(at, *labels.values())
        assert not [e for e in held if e in text], step


def test_after_the_shape_commit_the_tagging_tab_gives_its_shape(trained_mlm):
    labels, form, _ = shape_labels(trained_mlm)
    at = commit(open_asking(), SHAPE, labels[form])
    text = all_text(at)
    assert all(shape in text for shape in views.TASK_SHAPES.values()) and views.SHAPE_HELD not in text


def test_the_closest_sentence_is_minilms_and_a_miss_names_its_numbers(minilm):
    c = lesson.closest_sentence(minilm, DEFAULTS_SENTENCE)
    at = commit(open_asking(), CLOSEST, c.options[c.answer])
    assert not at.exception and "Right." in [s.value for s in at.success]
    bars = figures(at)["closest_sentence"]["data"]
    np.testing.assert_allclose(bars[0]["y"], c.cosine["mean"], rtol=1e-5)
    np.testing.assert_allclose(bars[1]["y"], c.cosine["cls"], rtol=1e-5)
    assert views.closest_answer_text(c, escape_md) in all_text(at)
    wrong = next(i for i in range(len(c.options)) if i != c.answer)
    at = commit(open_asking(), CLOSEST, c.options[wrong])
    assert at.error and questions.closest_misconception(c, wrong) in all_text(at)


def test_a_sentence_with_no_clear_closest_asks_about_the_students_next_text(minilm):
    at = open_asking({"out_sentence": "i love listening to music"})
    assert not at.exception
    c = lesson.closest_for_any(minilm, ["i love listening to music", "the girl was hungry"])
    assert c.sentence == "the girl was hungry"
    assert views.closest_source_text(c, "i love listening to music", escape_md) in all_text(at)
    assert "the girl was hungry" in at.radio(key=f"_predict_guess_{CLOSEST}").label


def test_each_prediction_names_a_generator_that_practises_its_idea(trained_mlm, minilm):
    from quiz_checks import assert_practised

    forms = {form: (2, 12, 64) for form in lesson.SHAPE_FORMS}
    c = lesson.closest_sentence(minilm, DEFAULTS_SENTENCE)
    for q in (
        questions.shape_question(forms, 64, 6),
        questions.probe_question("tagging", 50),
        questions.closest_question(c, DEFAULTS_SENTENCE),
    ):
        assert_practised(q)
    assert questions.probe_question("tagging", 50).concept != "outputs_probe_parameters"  # a count: another idea
