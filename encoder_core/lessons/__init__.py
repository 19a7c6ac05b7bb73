"""Computations behind each lesson page: one module per lesson, small dataclasses out.

LESSONS is the one list of lessons: the navigation, the home page's map and the quiz's
lesson names are all read from it (the navigation's icons are the UI's: ui/frame/shell.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Lesson:
    id: str  # pages/<id>.py, its URL path /<id>, and the quiz's name for the lesson
    title: str
    summary: str  # one line for the home page's map


LESSONS = (
    Lesson("attention", "Attention", "bidirectional vs causal: what dropping the causal mask costs and buys"),
    Lesson("padding", "Padding", "batches, [PAD], the key padding mask, and the pad leak when it is forgotten"),
    Lesson("masking", "Masked LM", "15% chosen, 80/10/10, labels of -100, the loss only where the answer was hidden"),
    Lesson("block", "The block", "one post-norm layer step by step: LayerNorm(x + Attn(x)), LayerNorm(x + FFN(x))"),
    Lesson("heads", "Heads", "multi-head attention, and what the heads of a real pretrained encoder do"),
    Lesson("outputs", "Using the outputs", "heads for labels, tags and answer spans, fine-tuned live"),
    Lesson("tradeoffs", "Trade-offs and pitfalls", "every cost of an encoder measured, every classic mistake run"),
    Lesson("inside", "Looking inside", "which explanation of the model to trust, scored against real knockouts"),
)
LESSON_IDS = tuple(lesson.id for lesson in LESSONS)
LESSON_TITLES = {lesson.id: lesson.title for lesson in LESSONS}
