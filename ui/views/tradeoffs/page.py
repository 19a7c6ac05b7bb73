"""The trade-offs lesson's sections, in order: what the page builds its tabs from."""

from __future__ import annotations

SECTIONS = (  # the page's sections, in order: title, the one line it shows, its tab's label
    (
        "No reuse of earlier work",
        "Append a token: causal vectors stay put, bidirectional ones all move. What does a cache save?",
        "No reuse",
    ),
    ("Length: a hard cap", "Past the position table the text is cut: which of your pieces goes first?", "Length cap"),
    ("Attention grows with T²", "Double T, four times the weights; the rest of the pass only doubles.", "T² cost"),
    ("Sample efficiency", "MLM scores ~15% of positions; next-token and ELECTRA score nearly all.", None),
    (
        "The [MASK] mismatch",
        "Fine-tuning never shows [MASK]: which input lets the model recover a word best?",
        "[MASK] mismatch",
    ),
    ("RoBERTa: dynamic masking", "One fixed pattern vs a new one each epoch: many more distinct views.", "RoBERTa"),
    ("Pitfalls 1-2: the pads", "Forget the mask and batch-mates leak in; never read a pad's output.", "Pitfalls: pads"),
    (
        "Pitfalls 3-4: labels and the loss",
        "Score only hidden positions, and average over those alone.",
        "Pitfalls: labels",
    ),
    (
        "Pitfalls 5-6: reading the outputs",
        "A raw [CLS] is no sentence vector; truncation can cut the answer out.",
        "Pitfalls: outputs",
    ),
)
