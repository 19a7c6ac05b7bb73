"""Section 1, the shapes: every head's tensors on the student's batch, the tagging labels, and the shapes exercise."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from encoder_core.finetune.tasks import TAGS
from encoder_core.lessons.outputs import HeadShapes, ShapeCheck
from encoder_core.objectives.mlm_masking import IGNORE_INDEX

from ..figures import Chart, esc
from .common import TAG_COLOURS, TASK_NAMES, coloured_cells

SHAPE_WHAT = {
    "ids": "token ids, padded to the longest row",
    "hidden": "one D-wide vector per token, from the encoder",
    "[CLS] vector": "position 0 of every row: the pooled input",
    "logits": "the head's scores: one per class (per token for tagging)",
    "start/end logits": "two scores per token: start of the answer, end of the answer",
    "start scores": "one of the two, softmaxed over the passage's tokens only",
}
EXERCISE_NAMES = {
    "hidden": "encoder output",
    "logits": "masked-LM logits",
    "chosen_logits": "logits at the masked positions",
}

EXERCISE_SIZES = {
    "batch": "B (sequences)",
    "length": "T (tokens each)",
    "d_model": "D (width)",
    "vocab_size": "V (vocabulary)",
    "n_masked": "masked positions",
}

SKIPPED_COLOUR = "#ffffff"  # -100: the loss does not look here; outlined by the gaps, labelled in the cell


def shapes_text(shapes: HeadShapes) -> str:
    B, T = shapes.steps["sentence"][0][1]
    return (
        f"Your sentence and your pair as one batch: B = {B} rows, T = {T} positions (the shorter row padded). "
        "Every shape below was read from the tensors of a real pass through the lab's MLM and three fresh heads."
    )


def shape_answer_text(shapes: HeadShapes, form: str) -> str:
    """The prediction's answer: the tagging head's logits as measured, and the form they have."""
    return f"The tagging head's logits on your batch: **{shapes.shape('tagging', 'logits')}**, that is {form}."


def shapes_table(shapes: HeadShapes) -> pd.DataFrame:
    rows = []
    for head, steps in shapes.steps.items():
        for name, shape in steps:
            rows.append({"head": TASK_NAMES[head], "tensor": name, "shape": str(shape), "what": SHAPE_WHAT[name]})
    return pd.DataFrame(rows)


def head_shapes_chart(shapes: HeadShapes, head: str = "tagging") -> Chart:
    """One head's tensors on the batch, in order, each cell its name and its measured shape."""
    steps = shapes.steps[head]
    names = [name for name, _ in steps]
    fig = coloured_cells(
        names,
        [i % 2 for i in range(len(steps))],
        ["#d9e6f2", "#f2e6d9"],
        [f"{esc(name)}<br><b>{shape}</b>" for name, shape in steps],
        row="shape",
        title=f"The {TASK_NAMES[head]} head's tensors on your batch, as measured",
        x_title="tensor, in the order the head computes them",
    )
    alt = f"The {TASK_NAMES[head]} head on the batch: " + ", then ".join(f"{n} {s}" for n, s in steps) + "."
    table = shapes_table(shapes)
    return Chart(fig, alt, table[table["head"] == TASK_NAMES[head]].reset_index(drop=True))


def tag_labels_text(tokens: Sequence[str]) -> str:
    return (
        f"The tagging labels of your sentence to tag ({len(tokens)} tokens): −100 means “skip this position in "
        "the loss”."
    )


def tag_labels_table(tokens: Sequence[str], labels: Sequence[int]) -> pd.DataFrame:
    """The tagging labels of one input, token by token: -100 where the loss must not look."""
    return pd.DataFrame(
        {
            "position": list(range(len(tokens))),
            "token": list(tokens),
            "label": [int(v) for v in labels],
            "tag": ["— (skipped by the loss)" if v == IGNORE_INDEX else TAGS[v] for v in labels],
        }
    )


def tag_labels_chart(tokens: Sequence[str], labels: Sequence[int]) -> Chart:
    """The labels of one tagging input as a row of cells: -100 (skipped) in white, each tag in its colour."""
    names = ["-100" if v == IGNORE_INDEX else TAGS[v] for v in labels]
    fig = coloured_cells(
        tokens,
        [0 if v == IGNORE_INDEX else v + 1 for v in labels],
        [SKIPPED_COLOUR] + [TAG_COLOURS[t] for t in TAGS],
        [f"{esc(t)}<br><b>{name}</b>" for t, name in zip(tokens, names)],
        row="label",
        title="Tagging labels of your sentence: -100 where the loss does not look",
        x_title="token (position from 0)",
    )
    fig.update_layout(plot_bgcolor="#bbbbbb")
    skipped = [f"{i} {t}" for i, (t, v) in enumerate(zip(tokens, labels)) if v == IGNORE_INDEX]
    alt = f"{len(tokens)} tokens; -100 at {', '.join(skipped)}; every other token carries its word's tag."
    return Chart(fig, alt, tag_labels_table(tokens, labels))


def exercise_question(ex: dict[str, int]) -> str:
    return (
        f"A batch has {ex['batch']} sequences of length {ex['length']}, model width {ex['d_model']} and a "
        f"vocabulary of {ex['vocab_size']:,}; {ex['n_masked']} positions are masked in all. Type the shape of "
        "the encoder's output, of the masked-LM logits, and of the logits kept for the loss."
    )


def exercise_table(checks: Sequence[ShapeCheck]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "tensor": [EXERCISE_NAMES[c.step] for c in checks],
            "you typed": [c.typed or "—" for c in checks],
            "computed": [str(c.expected) for c in checks],
            "result": ["right" if c.correct else ("not a shape" if c.read is None else "not quite") for c in checks],
        }
    )


def exercise_verdict(checks: Sequence[ShapeCheck]) -> str:
    right = sum(c.correct for c in checks)
    if right == len(checks):
        return "All three right: computed by running a throwaway model of exactly that size."
    return f"{right} of {len(checks)} right. The computed shapes are in the table, read from a model of that size."
