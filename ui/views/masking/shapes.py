"""Section 2, follow the shapes: the tensors of the model's pass, from ids to the logits the loss reads."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

SHAPE_ROWS = {  # a SHAPE_STEPS code -> (the tensor's name, what it holds)
    "ids": ("token ids", "B sequences, T positions: the corrupted input"),
    "hidden": ("hidden states", "D numbers per position, built from both sides"),
    "logits": ("logits", "a score for each of V vocabulary words at every position"),
    "chosen_logits": ("logits at labelled positions", "only the rows the loss reads: one per label that is not -100"),
}

SHAPES_HELD = (
    "The last step, the logits the loss reads, waits for your prediction in “The loss”: which positions "
    "it reads is the question there."
)


def shape_table(steps: Sequence[tuple[str, tuple[int, ...]]]) -> pd.DataFrame:
    """MLMForward.shape_steps() as a table: the tensor, its shape, what it holds."""
    return pd.DataFrame(
        [
            {"tensor": SHAPE_ROWS[code][0], "shape": str(shape), "what it holds": SHAPE_ROWS[code][1]}
            for code, shape in steps
        ]
    )


def shape_chain(steps: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    """The shapes in order, one line: (1, 15) -> (1, 15, 64) -> ..."""
    return " -> ".join(str(shape) for _, shape in steps)


def exercise_question(ex: dict[str, int]) -> str:
    """The shapes exercise (core's EXERCISE_SHAPE) as a question."""
    return (
        f"Try it: {ex['batch']} sequences of length {ex['length']}, width {ex['d_model']}, "
        f"{ex['vocab_size']:,} words, {ex['n_masked']} masked positions. What are the shapes?"
    )
