"""What every trained head's answer shares: the words its task never used, and when it is only a guess."""

from __future__ import annotations

from functools import lru_cache

import torch

from ...finetune.tasks import MAX_LENGTH, make_task

# A head trained on the grammar's tasks has met only the grammar's words, in its sentence shapes. On
# anything else it still answers, often with a high probability: an answer is flagged as a guess when
# the text holds words the task's training data never used, or when the head's probability for its
# answer is below CONFIDENT.
CONFIDENT = 0.8


@lru_cache(maxsize=16)
def task_words(task: str, seed: int = 0) -> frozenset[str]:
    """Every word (and punctuation mark) of the task's training texts: all the head ever read."""
    words: set[str] = set()
    for ex in make_task(task, seed).train:
        for text in (ex.text_a, ex.text_b):
            if text:
                words.update(text.lower().split())
    return frozenset(words)


def unseen_words(tokenizer, task: str, seed: int, *texts: str | None) -> list[str]:
    """The words of the student's texts that the task's training data never used, each once, in order."""
    known = task_words(task, seed)
    out: list[str] = []
    for text in texts:
        for word in tokenizer.split(text or ""):
            w = word.lower()
            if w not in known and w not in out:
                out.append(w)
    return out


def is_guess(unseen: list[str], confidence: float) -> bool:
    """Outside what the head was trained on (unseen words), or unsure of its own answer."""
    return bool(unseen) or confidence < CONFIDENT


def _encode(tokenizer, a: str, b: str | None = None):
    enc = tokenizer.encode(a, b, max_length=MAX_LENGTH, truncate=True)
    return enc, torch.tensor([enc.ids]), torch.tensor([enc.segments]), torch.zeros(1, len(enc), dtype=torch.bool)
