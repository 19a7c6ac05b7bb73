"""Computations behind each lesson page: one module per lesson, small dataclasses out.

LESSONS is the one list of lessons: the navigation, the home page's map and the quiz's
lesson names are all read from it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    id: str  # pages/<id>.py, its URL path /<id>, and the quiz's name for the lesson
    title: str
    icon: str  # a Material Symbols name, shown beside the title in the navigation
    summary: str  # one line for the home page's map


LESSONS = (
    Lesson(
        "attention", "Attention", "visibility", "bidirectional vs causal: what dropping the causal mask costs and buys"
    ),
    Lesson(
        "padding", "Padding", "space_bar", "batches, [PAD], the key padding mask, and the pad leak when it is forgotten"
    ),
    Lesson(
        "masking",
        "Masked LM",
        "masks",
        "15% chosen, 80/10/10, labels of -100, the loss only where the answer was hidden",
    ),
    Lesson(
        "block",
        "The block",
        "layers",
        "one post-norm layer step by step: LayerNorm(x + Attn(x)), LayerNorm(x + FFN(x))",
    ),
    Lesson("heads", "Heads", "grid_view", "multi-head attention, and what the heads of a real pretrained encoder do"),
    Lesson(
        "outputs", "Using the outputs", "model_training", "heads for labels, tags and answer spans, fine-tuned live"
    ),
    Lesson(
        "tradeoffs",
        "Trade-offs and pitfalls",
        "balance",
        "every cost of an encoder measured, every classic mistake run",
    ),
)
LESSON_IDS = tuple(lesson.id for lesson in LESSONS)
LESSON_TITLES = {lesson.id: lesson.title for lesson in LESSONS}
