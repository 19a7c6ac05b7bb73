"""The trade-offs lesson's predictions: the questions and the wrong ideas behind each wrong answer."""

from __future__ import annotations

from encoder_core.lessons.tradeoffs import CASES
from ui.frame.predict import Option, Question

LESSON = "tradeoffs"


def cache_question(prefix: int, n: int) -> Question:
    return Question(
        LESSON,
        "cache-saving",
        f"Now append N = {n} tokens to your {prefix}-token sentence, one at a time. After each one the encoder "
        "reruns the whole sequence; a causal model with a KV cache runs only the new token's row against the "
        "cached keys and values. How many times more FLOPs does the encoder spend on the N appends?",
        tolerance=0.25,
        too_high=(
            "The saving is about the sequence's length, not its square: most of a step's work is the projections "
            "and the FFN, which the encoder reruns once per row, about T rows against the cache's one."
        ),
        too_low=(
            "A cache saves more than the attention: without one, every append sends every earlier row through every "
            "layer again, so each step costs about T times the cached one."
        ),
        concept="tradeoffs_append_flops",
    )


CASE_LABELS = {"masked": "[MASK] in its place", "random": "a random word in its place", "kept": "the word itself"}
CASE_MISCONCEPTIONS = {
    "masked": (
        "Seeing [MASK] most in training does not make it the best clue: a visible word is stronger, and the 10% "
        "kept case taught the model to use it."
    ),
    "random": (
        "A wrong word is not a blank: the model mostly trusts what it sees, so a random word pulls its prediction "
        "towards that wrong word and away from the original."
    ),
    "kept": (
        "The model does not simply copy what it sees: the 10% random case taught it that a visible word can be "
        "wrong, so its context can outweigh the word."
    ),
}


def mismatch_question(position: int, word: str) -> Question:
    """word: the original word at the position, as the page shows it (escaped for markdown)."""
    return Question(
        LESSON,
        "mask-mismatch",
        f"The trained MLM reads your sentence three times, with position {position} (“{word}”) holding [MASK], a "
        f"random word, or “{word}” itself. Under which input does it give “{word}” the highest probability there?",
        tuple(Option(CASE_LABELS[c], CASE_MISCONCEPTIONS[c]) for c in CASES),
        concept="masking_split",
    )
