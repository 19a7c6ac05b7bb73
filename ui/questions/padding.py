"""The padding lesson's predictions: what a student is asked before the model answers.

The answers come from encoder_core.lessons.padding (mean_pad_share, leak_trend); the options of
LEAK_TREND are in the order of its LEAK_TRENDS.
"""

from __future__ import annotations

from encoder_core.lessons.padding import LEAK_TRENDS
from ui.frame.predict import Option, Question


def pad_share(n_real: int, n_pads: int, layer: int, head: int) -> Question:
    """A number: without the mask, the share of a real token's attention that goes to the pads."""
    return Question(
        "padding",
        "pad-share",
        f"Suppose nobody passes the mask. At layer {layer}, head {head}, what share of its attention does a real "
        f"token of the single sentence give its {n_pads} [PAD]s, on average over its {n_real} real tokens? "
        "(0 is none, 1 is all of it)",
        concept="padding_pad_weight",
        too_high="A [PAD] is an ordinary key, not a favoured one: the head weighs each key by how well it matches "
        "the query, and [PAD] is often a poor match.",
        too_low="Without the mask nothing marks a [PAD] as empty: each one is a key with an embedding and a "
        "position, and takes its share of every softmax row.",
    )


LEAK_TREND_OPTIONS = {
    "grows": Option(
        "They move, further with more pads",
        "More pads need not mean a bigger move: each pad sits at its own position, so their pulls do not simply "
        "add up.",
    ),
    "same": Option(
        "They move by the same, however many",
        "Each extra pad is one more key taking a share of every softmax row, so the pull on the real tokens "
        "changes with the number of pads.",
    ),
    "still": Option(
        "They stay put: a [PAD] changes nothing",
        "Without the mask a [PAD] is a token like any other: it takes attention, and every later layer passes "
        "the change on.",
    ),
    "shrinks": Option(
        "They move less as more pads are added",
        "Extra pads do not cancel each other out: together they take more of the attention, not less.",
    ),
}


def leak_trend(most_pads: int) -> Question:
    """A choice: without the mask, how the real outputs move as pads are appended (answer: leak_trend)."""
    return Question(
        "padding",
        "leak-trend",
        f"Mask off. Append [PAD]s after the single sentence, 1 of them, then more, up to {most_pads}. "
        "Compared with the sentence run alone, what happens to its real tokens' final vectors?",
        tuple(LEAK_TREND_OPTIONS[code] for code in LEAK_TRENDS),
        concept="padding_masked_gap",
    )
