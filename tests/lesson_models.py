"""The models a lesson can run on, as the sidebar offers them, for the lesson tests.

ui.models.lesson_model hands a page the chosen encoder and its tokenizer: "small" (the seeded
teaching model, seed 0 by default, with the English WordPiece tokenizer), "mlm" (the encoder of
the lab's trained masked-language model, model.bert, with the checkpoint's tokenizer) or
"minilm" (all-MiniLM-L6-v2). Tests take the `lesson_model` fixture of conftest.py, parametrised
over LESSON_MODELS; each model is loaded once per session by conftest's session fixtures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

LESSON_MODELS = ("small", "mlm", "minilm")


@dataclass(frozen=True)
class LessonModel:
    """An encoder a lesson runs on and its tokenizer (shared by the session: read them, never change them)."""

    choice: str  # "small", "mlm" or "minilm", as the sidebar names it
    encoder: object  # encoder_core Encoder, eval mode
    tokenizer: object  # WordPieceTokenizer

    @property
    def config(self):
        return self.encoder.config

    @property
    def float32_tolerance(self) -> float:
        """How far two float32 computations of the same thing may drift: sums of d_model terms
        (1e-6 at the small models' d = 64, 1e-5 at MiniLM's d = 384)."""
        return 1e-6 if self.config.d_model <= 64 else 1e-5


def lesson_model_from(choice: str, fixture: Callable[[str], object]) -> LessonModel:
    """The LessonModel for a sidebar choice, built from conftest's session fixtures (fixture(name) -> value)."""
    if choice == "small":
        return LessonModel("small", fixture("small_model"), fixture("tok"))
    if choice == "mlm":
        model, tokenizer, _ = fixture("trained_mlm")
        return LessonModel("mlm", model.bert, tokenizer)
    if choice == "minilm":
        pre = fixture("minilm")
        return LessonModel("minilm", pre.model, pre.tokenizer)
    raise ValueError(f"unknown lesson model {choice!r}; expected one of {LESSON_MODELS}")
