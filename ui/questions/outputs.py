"""The outputs lesson's predictions: the questions and the wrong ideas behind each wrong answer."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from encoder_core.finetune.tasks import DEFAULT_STEPS, STARTS
from encoder_core.lessons import outputs as core
from encoder_core.lessons.outputs import PROBE_OUTCOMES, SAME_MARGIN, SHAPE_FORMS, ClosestSentence, closest_sentence
from ui.frame.predict import Option, Prediction
from ui.models import minilm, run_fine_tune
from ui.room.registry import CannotAsk, Run, lesson_questions, run_key, sentence_link
from ui.views import outputs as view

LESSON = "outputs"

SHAPE_MISCONCEPTIONS = {
    "(B, C)": "A tagger does not pool: it scores every token's vector, where a sentence classifier reads [CLS] alone.",
    "(B, T, C)": "Each token gets one score per tag, so the logits keep the batch, the tokens and the tags.",
    "(B, T, D)": "(B, T, D) is the encoder's output; the head's one job is to turn each D-wide vector into C scores.",
    "(B, T, 2)": "Two scores per token are the span head's start and end; a tagger gives one score per tag.",
}


def shape_question(forms: dict[str, tuple[int, ...]], d_model: int, n_tags: int) -> Prediction:
    """The tagging head's logits on the student's batch; forms: SHAPE_FORMS with the batch's numbers put in."""
    B, T, _ = forms["(B, T, D)"]
    return Prediction(
        LESSON,
        "tag-shape",
        f"Your sentence and your pair make a batch of B = {B} rows, padded to T = {T} tokens; the encoder gives "
        f"D = {d_model} numbers per token. The tagging head scores C = {n_tags} tags. What shape are its logits?",
        tuple(Option(f"{form} = {forms[form]}", SHAPE_MISCONCEPTIONS[form]) for form in SHAPE_FORMS),
        concept="outputs_head_shape",
        idea="head-output-shape",
    )


SHAPE = Prediction(LESSON, "tag-shape", "")  # its key, for revealed(): has the student answered it on this batch?


PROBE_LABELS = {  # short: ui.frame.predict keeps the first 40 characters of a choice
    "frozen": "The frozen probe",
    "scratch": "Random weights, trained end to end",
    "same": f"About the same (within {SAME_MARGIN * 100:.0f} points)",
}
PROBE_MISCONCEPTIONS = {
    "frozen": (
        "Pre-trained vectors are not a ready answer to every task: a frozen encoder offers only what masked-word "
        "training happened to put in them, and one linear layer on top cannot add more."
    ),
    "scratch": (
        "Training every weight does not make up for starting from nothing: from random weights the encoder must "
        "learn its words and their order from this task's few examples alone."
    ),
    "same": (
        "The starting point is not a detail: what the encoder knows before the task shows up in the held-out "
        "score, for better or worse."
    ),
}


def probe_question(task_name: str, steps: int) -> Prediction:
    return Prediction(
        LESSON,
        "probe-or-scratch",
        f"Three runs on {task_name}, {steps} steps each, from three starting points (your commit starts their "
        "training, unless someone has trained them already). Which will score higher on held-out data: the frozen "
        "probe (the pre-trained encoder kept fixed, only the head learns) or random weights (the same "
        "architecture, every weight trained on this task)?",
        tuple(Option(PROBE_LABELS[o], PROBE_MISCONCEPTIONS[o]) for o in PROBE_OUTCOMES),
        concept="outputs_probe_features",
        idea="frozen-probe-vs-random",
    )


def closest_misconception(c: ClosestSentence, i: int) -> str:
    """Why option i (wrong) is not the closest, from the numbers: shared words, or what the sentences are about."""
    best, mine, theirs = c.options[c.answer], c.cosine["mean"][c.answer], c.cosine["mean"][i]
    if len(c.shared[i]) > len(c.shared[c.answer]):
        return (
            f"Shared words are not shared meaning: “{c.options[i]}” has more of your words "
            f"({', '.join(c.shared[i])}) than “{best}”, yet its vector is further from yours (cosine {theirs:.2f} "
            f"against {mine:.2f})."
        )
    return (
        "all-MiniLM-L6-v2 was trained to put sentences that mean the same close together, so what a sentence is "
        f"about decides: “{best}” is closer to yours (cosine {mine:.2f}) than “{c.options[i]}” ({theirs:.2f})."
    )


def closest_question(c: ClosestSentence, sentence: str) -> Prediction:
    """sentence: the student's, as the page shows it (escaped for markdown)."""
    return Prediction(
        LESSON,
        "closest-sentence",
        f"all-MiniLM-L6-v2 turns “{sentence}” and each sentence below into one vector, the mean of its tokens' "
        "final vectors. Which sentence's vector is closest to yours (the highest cosine)?",
        tuple(Option(o, "" if i == c.answer else closest_misconception(c, i)) for i, o in enumerate(c.options)),
        concept="outputs_closest_pooled",
        idea="closest-pooled-sentence",
    )


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON)

SHAPES_STEP, STARTS_STEP, POOLING_STEP = 0, 5, 6  # "The shapes", "Three starting points", "Pooling"
ROOM_PAIR = ("the girl was hungry", "she ate the bread")  # the lesson's own default pair, batched with the sentence


@st.cache_data(show_spinner=False, max_entries=16)
def _shapes_run(key: tuple, _run: Run):
    """The three fresh heads on the lesson's batch (the lecturer's sentence and the lesson's pair), on the lab's
    trained MLM, their shapes measured, once per sentence (key: run_key)."""
    return core.head_shapes(_run.model.bert, _run.tokenizer, [(_run.proof["sentence"], None), ROOM_PAIR])


def _shape_question(run: Run) -> tuple[Prediction, int]:
    shapes = _shapes_run(run_key(run), run)
    forms = core.shape_forms(shapes, "tagging")
    asked = shape_question(forms, run.model.bert.config.d_model, shapes.classes["tagging"])
    prompt = asked.prompt.replace("Your sentence and your pair make", "The sentence and the lesson's pair make")
    return replace(asked, prompt=prompt), SHAPE_FORMS.index(core.logits_form(shapes, "tagging"))


register(
    "outputs-tag-shape",
    "Using the outputs: what shape are a tagging head's logits?",
    ask=_shape_question,
    step=SHAPES_STEP,
    charts=lambda run: [view.head_shapes_chart(_shapes_run(run_key(run), run))],
    trained=True,
    lead=lambda run: f"The pair is “{ROOM_PAIR[0]}” + “{ROOM_PAIR[1]}”; the single sentence is this one. ",
    link=sentence_link("out_sentence"),
)


ROOM_TASK = "sentence"  # the lesson's default task for the three starting points


def _starts(run: Run):
    """The lesson's three runs on its default task and length, with the round's seed: trained once per setting
    on this server (ui.models.run_fine_tune, which the lesson's page shares), so the question, its answer and its
    charts read the same runs; a few seconds each the first time."""
    key = (ROOM_TASK, DEFAULT_STEPS[ROOM_TASK], int(run.proof["seed"]))
    by_start = {start: run_fine_tune(key[0], start, key[1], key[2]) for start in STARTS}
    return by_start, core.compare_starts(by_start)


def _probe_question(run: Run) -> tuple[Prediction, int]:
    _, cmp = _starts(run)
    asked = probe_question(view.TASK_NAMES[ROOM_TASK], DEFAULT_STEPS[ROOM_TASK])
    prompt = asked.prompt.replace(" (your commit starts their training, unless someone has trained them already)", "")
    return replace(asked, prompt=prompt), PROBE_OUTCOMES.index(core.probe_or_scratch(cmp))


def _probe_charts(run: Run) -> list:
    by_start, cmp = _starts(run)
    return [view.starts_loss_chart(by_start), view.starts_scores_chart(cmp)]


register(
    "outputs-probe-or-scratch",
    "Using the outputs: frozen probe or random weights, which scores higher?",
    ask=_probe_question,
    step=STARTS_STEP,
    charts=_probe_charts,
    trained=True,
    lead=lambda run: f"The lab's MLM fine-tuned with seed {int(run.proof['seed'])}. ",
    link=lambda proof: {"out_compare": ROOM_TASK},
)


def _closest(run: Run) -> ClosestSentence:
    """The lesson's sentence whose MiniLM mean-pooled vector is closest to the lecturer's."""
    pre, why, _ = minilm()
    if run.proof.get("model") != "minilm" or pre is None:
        raise CannotAsk(
            "This question is about all-MiniLM-L6-v2's sentence vectors: choose it as the model (the sidebar's, or "
            f"the deck step's).{' ' + why if why else ''}"
        )
    found = closest_sentence(pre, run.proof["sentence"])
    if found is None:
        raise CannotAsk("No sentence of the lesson is clearly closest to this one: try another sentence.")
    return found


def _closest_question(run: Run) -> tuple[Prediction, int]:
    found = _closest(run)
    return closest_question(found, run.proof["sentence"]), found.answer


register(
    "outputs-closest-sentence",
    "Using the outputs: which sentence's vector is closest to yours?",
    ask=_closest_question,
    step=POOLING_STEP,
    charts=lambda run: [view.closest_chart(_closest(run))],
)
