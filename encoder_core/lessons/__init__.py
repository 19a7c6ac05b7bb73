"""Computations behind each lesson page: one module per lesson, small dataclasses out.

LESSONS is the one list of lessons, and a lesson's entry here is the one place it is declared: the
navigation (title, icon, URL path), the home page's map, the quiz (encoder_core/quiz/<id>.py, when there
is one) and the class room's lesson questions (ui/questions/<id>.py, when there is one) are all found
from it. docs/architecture.md, "Adding a lesson", lists the files a new lesson brings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    id: str  # pages/<id>.py, its URL path /<id>, and the quiz's name for the lesson
    title: str
    summary: str  # one line for the home page's map
    icon: str  # the navigation's icon: a Material Symbols name (fonts.google.com/icons)


LESSONS = (
    Lesson(
        "attention",
        "Attention",
        "bidirectional vs causal: what dropping the causal mask costs and buys",
        icon="visibility",
    ),
    Lesson(
        "padding",
        "Padding",
        "batches, [PAD], the key padding mask, and the pad leak when it is forgotten",
        icon="space_bar",
    ),
    Lesson(
        "masking",
        "Masked LM",
        "15% chosen, 80/10/10, labels of -100, the loss only where the answer was hidden",
        icon="masks",
    ),
    Lesson(
        "block",
        "The block",
        "one post-norm layer step by step: LayerNorm(x + Attn(x)), LayerNorm(x + FFN(x))",
        icon="layers",
    ),
    Lesson(
        "heads", "Heads", "multi-head attention, and what the heads of a real pretrained encoder do", icon="grid_view"
    ),
    Lesson(
        "outputs",
        "Using the outputs",
        "heads for labels, tags and answer spans, fine-tuned live",
        icon="model_training",
    ),
    Lesson(
        "tradeoffs",
        "Trade-offs and pitfalls",
        "every cost of an encoder measured, every classic mistake run",
        icon="balance",
    ),
    Lesson(
        "inside",
        "Looking inside",
        "which explanation of the model to trust, scored against real knockouts",
        icon="troubleshoot",
    ),
)
LESSON_IDS = tuple(lesson.id for lesson in LESSONS)
LESSON_TITLES = {lesson.id: lesson.title for lesson in LESSONS}
