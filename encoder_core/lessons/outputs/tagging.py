"""Tag every word: a label per token, only a word's first piece scored."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...finetune.tasks import FineTuneRun, first_pieces
from .trust import CONFIDENT, _encode, task_words


@dataclass
class TagPrediction:
    tokens: list[str]
    unknown: list[str]
    truncated: int
    words: list[str]  # as typed
    pieces: list[list[str]]
    tags: list[str]  # one per word, read at its first piece
    confidence: list[float]  # the chosen tag's probability
    seen: list[bool] = field(default_factory=list)  # per word: did the task's training data use it?

    @property
    def unseen(self) -> list[str]:
        return list(dict.fromkeys(w.lower() for w, s in zip(self.words, self.seen) if not s))

    @property
    def guessed(self) -> list[bool]:
        """Per word: a guess (a word the tagger never met, or a tag it gives below CONFIDENT)."""
        return [not s or c < CONFIDENT for s, c in zip(self.seen, self.confidence)]

    @property
    def guess(self) -> bool:
        return any(self.guessed)


@torch.inference_mode()
def tag_words(run: FineTuneRun, tokenizer, text: str) -> TagPrediction:
    enc, ids, segs, mask = _encode(tokenizer, text)
    probs = torch.softmax(run.model(ids, segs, mask)[0], -1)  # (T, n_tags)
    split = tokenizer.split_words(text)
    firsts = [p for p in first_pieces(tokenizer, text) if p < len(enc) - 1]  # words cut off by truncation drop out
    best = probs[firsts].max(-1)
    words = [w for w, _ in split[: len(firsts)]]
    known = task_words(run.task, run.seed)
    return TagPrediction(
        enc.tokens,
        enc.unknown,
        enc.truncated,
        words,
        [p for _, p in split[: len(firsts)]],
        [run.labels[int(i)] for i in best.indices],
        best.values.tolist(),
        [w.lower() in known for w in words],
    )
