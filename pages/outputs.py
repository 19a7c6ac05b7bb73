"""Using the outputs: heads for classification, tagging and extractive QA, fine-tuned live on the lab's MLM."""

from __future__ import annotations

import streamlit as st

from encoder_core.finetune.tasks import DEFAULT_STEPS, STARTS, TASKS, fine_tune
from encoder_core.lessons import outputs as core
from ui.fine_tuning import runs_for, train_now
from ui.frame.charts import show_chart, show_table
from ui.frame.code import show_code
from ui.frame.inputs import note_long_text, usable_sentence
from ui.frame.modes import sidebar_seed
from ui.frame.notices import has_trained
from ui.frame.params import LessonParams, Param
from ui.frame.predict import fingerprint, predict_then_see, revealed
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section, escape_md
from ui.frame.sections import Section, finish, narrative, render_sections, show_metrics, start
from ui.frame.state import ensure_valid, value
from ui.models import cached_fine_tune, minilm_closest, minilm_pooling_ranking, trained_mlm
from ui.questions import outputs as questions
from ui.views import outputs as view

DEFAULTS = {
    "out_sentence": "the old dog was not happy",
    "out_pair_a": "the girl was hungry",
    "out_pair_b": "she ate the bread",
    "out_tag_sentence": "the girl found a red ball in the garden",
    "out_question": "where did the cat sleep ?",
    "out_passage": "the old man read the book on the sofa and the cat slept on the mat",
}
LABELS = {
    "out_sentence": "Sentence to classify",
    "out_pair_a": "Pair: sentence A",
    "out_pair_b": "Pair: sentence B",
    "out_tag_sentence": "Sentence to tag",
    "out_question": "Question",
    "out_passage": "Passage",
}
LENGTHS = {"short": 0.5, "default": 1.0, "long": 2.0}  # times each task's default number of steps

P = LessonParams(
    "outputs",
    *(Param(name, text, "text") for name, text in DEFAULTS.items()),
    Param("out_length", "default", "choice", options=tuple(LENGTHS)),
    Param("out_compare", "sentence", "choice", options=TASKS),
    shared=(QUIZ_SEED,),
)
start("outputs", P)
note_long_text(P, LABELS)
ensure_valid(P)
st.title("Using the outputs")
narrative(
    "An encoder turns a text into one vector per token, (B, T, D). What it is *for* is decided by one small "
    "layer on top, the **head**, chosen by the task: a classifier on the [CLS] vector for a label per sentence "
    "or sentence pair, a classifier on every token for tagging, and two scores per token for the start and end "
    "of an answer span. Below, each head is **fine-tuned live** on the lab's own pre-trained small MLM, on data "
    "the lab writes from its grammar, so every right answer is known."
)

st.caption(view.MODEL_TEXT)
trained, load_error, _ = trained_mlm()
if load_error:
    st.error(f"The lab's trained model could not be loaded, so the training sections are skipped.\n\n{load_error}")
tokenizer = trained.tokenizer if trained else None
seed = sidebar_seed()

with st.container(border=True):
    for column, name in zip(st.columns(3) + st.columns(3), LABELS):
        column.text_input(LABELS[name], key=P[name].key)
    c7, c8 = st.columns(2)
    c7.segmented_control(
        "Training length", list(LENGTHS), key=P.out_length.key, help="Half, once or twice each task's default steps."
    )
    c8.selectbox("Task for the three starting points", TASKS, key=P.out_compare.key, format_func=view.TASK_NAMES.get)

texts = {name: usable_sentence(value(P[name]), default) for name, default in DEFAULTS.items()}
length = LENGTHS.get(value(P.out_length) or "default", 1.0)
batch = [(texts["out_sentence"], None), (texts["out_pair_a"], texts["out_pair_b"])]  # "The shapes"' batch


def steps_for(task: str) -> int:
    return max(10, round(DEFAULT_STEPS[task] * length))


def report_input(pred) -> None:
    """What the tokenizer did to a student's text: cut it, or met characters it has no piece for."""
    if pred.truncated:
        st.warning(f"The input was cut to {core.MAX_LENGTH} tokens, the heads' limit here: {pred.truncated} cut.")
    if pred.unknown:
        st.caption(f"Read as [UNK] (no word piece for them): {escape_md(', '.join(sorted(set(pred.unknown))))}")


def report_trust(pred, task: str) -> None:
    """Next to a head's answer on the student's text: what the toy task covers, and whether this is a guess."""
    st.caption(view.TASK_SCOPE[task])
    guess = view.guess_text(pred, escape_md)
    if guess:
        st.warning(guess)


def fine_tuned(task: str) -> object | None:
    runs = runs_for([(task, "finetune", steps_for(task), seed, "cls")], "Fine-tune", f"train_{task}")
    if runs is None:
        return None
    run = runs[0]
    show_metrics(view.run_metrics(run))
    show_chart(view.run_chart(run), f"loss_{task}")
    st.caption(view.run_text(run))
    return run


# ---- sections ----
def render_shapes() -> None:
    if not has_trained(trained):
        return
    shapes = core.head_shapes(trained.model.bert, tokenizer, batch)
    forms = core.shape_forms(shapes, "tagging")
    predict_then_see(
        questions.shape_question(forms, trained.model.bert.config.d_model, shapes.classes["tagging"]),
        fingerprint(batch),
        answer=lambda: core.SHAPE_FORMS.index(core.logits_form(shapes, "tagging")),
        reveal=lambda i: reveal_shapes(shapes, core.SHAPE_FORMS[i]),
    )
    labels = core.tagging_labels(tokenizer, texts["out_tag_sentence"])
    st.markdown(view.tag_labels_text(labels.tokens))
    show_chart(view.tag_labels_chart(labels.tokens, labels.labels), "tag_labels")
    narrative(
        "The span head gives every token two scores. Before the softmax, everything outside the passage "
        "(the question, [CLS], the [SEP]s, pads) is set to −∞, so the start and end distributions cover the "
        "passage only; decoding then takes the best pair with end ≥ start."
    )
    render_exercise()
    show_code(core.head_shapes, core.tagging_labels)


def reveal_shapes(shapes, form: str) -> None:
    st.markdown(view.shape_answer_text(shapes, form) + " " + view.shapes_text(shapes))
    show_table(view.shapes_table(shapes), hide_index=True)


def render_exercise() -> None:
    ex = core.SHAPE_EXERCISE
    st.markdown("**Try it** (seed 004): keep these numbers or put your own.")
    cols = st.columns(5)
    sizes = {}
    for col, (name, default) in zip(cols, ex.items()):
        lo, hi = core.EXERCISE_LIMITS.get(name, (0, ex["batch"] * ex["length"]))
        step = 4 if name == "d_model" else 1
        sizes[name] = col.number_input(view.EXERCISE_SIZES[name], lo, hi, default, step=step, key=f"ex_{name}")
    sizes["n_masked"] = min(sizes["n_masked"], sizes["batch"] * sizes["length"])
    st.markdown(view.exercise_question(sizes))
    typed = {}
    for col, name in zip(st.columns(3), core.EXERCISE_STEPS):
        typed[name] = col.text_input(view.EXERCISE_NAMES[name], key=f"ex_typed_{name}", placeholder="e.g. (2, 3, 4)")
    if not any(typed.values()):
        return
    checks = core.check_shapes(typed, exercise_answers(**sizes))
    (st.success if all(c.correct for c in checks) else st.warning)(view.exercise_verdict(checks))
    show_table(view.exercise_table(checks), hide_index=True)


@st.cache_data(show_spinner=False, max_entries=32)
def exercise_answers(**sizes) -> dict:
    return core.exercise_shapes(**sizes)


def predicted(task: str, predict):
    """The task in words, its head fine-tuned (on request), and predict(run) on the student's text; None
    until the head is trained, or when predict found nothing to read (it says why)."""
    narrative(view.task_text(task, trained is None or revealed(questions.SHAPE, fingerprint(batch))))
    run = fine_tuned(task)
    pred = predict(run) if run is not None else None
    if pred is not None:
        report_input(pred)
    return pred


def answered(pred, task: str, chart, key: str) -> None:
    """The head's answer on the student's text, with what the task covers and whether it is a guess."""
    show_chart(chart, key)
    report_trust(pred, task)


def render_sentence() -> None:
    pred = predicted("sentence", lambda run: core.classify(run, tokenizer, texts["out_sentence"]))
    if pred is not None:
        answered(pred, "sentence", view.class_chart(pred, "sentence"), "predict_sentence")


def render_pair() -> None:
    pred = predicted("pair", lambda run: core.classify(run, tokenizer, texts["out_pair_a"], texts["out_pair_b"]))
    if pred is not None:
        st.code(" ".join(pred.tokens), language=None)
        answered(pred, "pair", view.class_chart(pred, "pair"), "predict_pair")


def render_tagging() -> None:
    pred = predicted("tagging", lambda run: core.tag_words(run, tokenizer, texts["out_tag_sentence"]))
    if pred is not None:
        answered(pred, "tagging", view.tag_row_chart(pred), "predict_tags")


def render_qa() -> None:
    pred = predicted("qa", answer)
    if pred is None:
        return
    if pred.missing_words:
        st.warning(view.no_answer_text(pred, escape_md))
    st.markdown(view.span_markdown(pred, escape_md))
    answered(pred, "qa", view.span_chart(pred), "predict_span")
    show_code(core.answer_span)


def answer(run):
    """The span head's answer to the student's question, or None (said why) when the passage has no token."""
    try:
        return core.answer_span(run, tokenizer, texts["out_question"], texts["out_passage"])
    except ValueError as err:  # nothing in the passage became a token
        st.warning(f"{str(err).capitalize()}: type a passage for the answer to come from.")
        return None


def render_starts() -> None:
    task = value(P.out_compare)
    narrative(view.STARTS_TEXT)
    keys = [(task, s, steps_for(task), seed, "cls") for s in STARTS]
    q, context = questions.probe_question(view.TASK_NAMES[task], steps_for(task)), fingerprint(keys)
    if not has_trained(trained):
        return
    if not all(cached_fine_tune(*k) for k in keys):
        if not revealed(q, context):  # asked first: the commit (or a skip) starts the training
            st.caption(view.request_text(keys))
            predict_then_see(q, context, answer=lambda: None, reveal=lambda _: None)  # asks only: nothing committed
            return
        train_now(keys)  # then the page is drawn again, from the kept runs
    by_start = {s: cached_fine_tune(*k) for s, k in zip(STARTS, keys)}
    cmp = core.compare_starts(by_start)
    predict_then_see(
        q,
        context,
        answer=lambda: core.PROBE_OUTCOMES.index(core.probe_or_scratch(cmp)),
        reveal=lambda _: reveal_starts(by_start, cmp),
    )


def reveal_starts(by_start, cmp) -> None:
    st.markdown(view.probe_answer_text(cmp))
    show_chart(view.starts_loss_chart(by_start), "starts_loss")
    show_chart(view.starts_scores_chart(cmp), "starts_scores")
    st.markdown(view.starts_verdict(cmp))
    show_code(fine_tune)


def render_pooling() -> None:
    narrative(view.POOLING_TEXT)
    keys = [("sentence", "finetune", steps_for("sentence"), seed, p) for p in ("cls", "mean")]
    runs = runs_for(keys, "Train both", "train_pooling")
    if runs is not None:
        by_pooling = dict(zip(("cls", "mean"), runs))
        show_chart(view.pooling_runs_chart(by_pooling), "pooling_runs")
        st.markdown(view.pooling_runs_text(by_pooling))
    st.markdown("**Sentence vectors from a real encoder.** " + view.MINILM_TEXT)
    ranking = minilm_pooling_ranking()
    if ranking is None:
        st.info("all-MiniLM-L6-v2 is not installed, so this comparison is skipped.")
        return
    closest = minilm_closest(tuple(texts.values()))  # the first of your texts that allows a fair question
    if closest is not None:
        if note := view.closest_source_text(closest, texts["out_sentence"], escape_md):
            st.caption(note)
        predict_then_see(
            questions.closest_question(closest, escape_md(closest.sentence)),
            fingerprint(closest.sentence, closest.options),
            answer=lambda: closest.answer,
            reveal=lambda _: reveal_closest(closest),
        )
    st.markdown(view.ranking_text(ranking))
    show_metrics(view.ranking_metrics(ranking))
    show_chart(view.ranking_chart(ranking), "pooling_ranking")
    st.markdown(view.ranking_verdict(ranking))
    show_code(core.pooling_ranking)


def reveal_closest(closest) -> None:
    st.markdown(view.closest_answer_text(closest, escape_md))
    show_chart(view.closest_chart(closest), "closest_sentence")


sections = [
    Section(
        "The shapes",
        "The encoder gives (B,T,D); a head on [CLS] gives (B,C). What does a head on every token give?",
        render_shapes,
    ),
    Section(
        "Classify a sentence",
        "A linear layer on the [CLS] vector, trained with the encoder: a 'not' flips the label.",
        render_sentence,
        tab="Sentence",
    ),
    Section("Classify a sentence pair", "[CLS] A [SEP] B [SEP]: does B follow from A?", render_pair, tab="Pair"),
    Section("Tag every word", "A label per token; only a word's first piece is scored.", render_tagging, tab="Tagging"),
    Section(
        "Find the answer in a passage",
        "Start and end scores over the passage's tokens; the best span with end >= start.",
        render_qa,
        tab="Question answering",
    ),
    Section(
        "Three starting points",
        "Frozen probe, fine-tuned end to end, or random weights: which does better, and what does pre-training buy?",
        render_starts,
        tab="Starting points",
    ),
    Section("Pooling", "[CLS] or the mean of the real tokens, trained and untrained.", render_pooling),
    check_yourself_section("outputs"),
]
render_sections(sections, P)
finish(P)
