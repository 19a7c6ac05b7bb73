"""Classify a sentence, and a sentence pair: the [CLS] head's label."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...finetune.tasks import FineTuneRun
from .trust import _encode, is_guess, unseen_words


@dataclass
class ClassPrediction:
    tokens: list[str]
    unknown: list[str]
    truncated: int
    labels: tuple[str, ...]
    probabilities: list[float]  # softmax over the classes, sums to 1
    unseen: list[str] = field(default_factory=list)  # words the task's training data never used

    @property
    def best(self) -> str:
        return self.labels[max(range(len(self.labels)), key=self.probabilities.__getitem__)]

    @property
    def confidence(self) -> float:
        """The probability of the class the head chose."""
        return max(self.probabilities)

    @property
    def guess(self) -> bool:
        return is_guess(self.unseen, self.confidence)


@torch.inference_mode()
def classify(run: FineTuneRun, tokenizer, text_a: str, text_b: str | None = None) -> ClassPrediction:
    enc, ids, segs, mask = _encode(tokenizer, text_a, text_b)
    probs = torch.softmax(run.model(ids, segs, mask)[0], -1)
    unseen = unseen_words(tokenizer, run.task, run.seed, text_a, text_b)
    return ClassPrediction(enc.tokens, enc.unknown, enc.truncated, run.labels, probs.tolist(), unseen)
