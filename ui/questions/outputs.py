"""The outputs lesson's predictions: the questions and the wrong ideas behind each wrong answer."""

from __future__ import annotations

from encoder_core.lessons.outputs import PROBE_OUTCOMES, SAME_MARGIN, SHAPE_FORMS
from ui.frame.predict import Option, Question

LESSON = "outputs"

SHAPE_MISCONCEPTIONS = {
    "(B, C)": "A tagger does not pool: it scores every token's vector, where a sentence classifier reads [CLS] alone.",
    "(B, T, C)": "Each token gets one score per tag, so the logits keep the batch, the tokens and the tags.",
    "(B, T, D)": "(B, T, D) is the encoder's output; the head's one job is to turn each D-wide vector into C scores.",
    "(B, T, 2)": "Two scores per token are the span head's start and end; a tagger gives one score per tag.",
}


def shape_question(forms: dict[str, tuple[int, ...]], d_model: int, n_tags: int) -> Question:
    """The tagging head's logits on the student's batch; forms: SHAPE_FORMS with the batch's numbers put in."""
    B, T, _ = forms["(B, T, D)"]
    return Question(
        LESSON,
        "tag-shape",
        f"Your sentence and your pair make a batch of B = {B} rows, padded to T = {T} tokens; the encoder gives "
        f"D = {d_model} numbers per token. The tagging head scores C = {n_tags} tags. What shape are its logits?",
        tuple(Option(f"{form} = {forms[form]}", SHAPE_MISCONCEPTIONS[form]) for form in SHAPE_FORMS),
        concept="outputs_head_shape",
    )


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


def probe_question(task_name: str, steps: int) -> Question:
    return Question(
        LESSON,
        "probe-or-scratch",
        f"Three runs on {task_name}, {steps} steps each, from three starting points (they train once you commit, "
        "unless someone already has). Which will score higher on held-out data: the frozen probe (the pre-trained "
        "encoder kept fixed, only the head learns) or random weights (the same architecture, every weight trained "
        "on this task)?",
        tuple(Option(PROBE_LABELS[o], PROBE_MISCONCEPTIONS[o]) for o in PROBE_OUTCOMES),
        concept="outputs_probe_parameters",
    )
