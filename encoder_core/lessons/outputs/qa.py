"""Question answering: the span head's start and end."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...finetune.tasks import BASE_FORM, TAG_OF, FineTuneRun, best_spans, passage_mask
from .trust import _encode, is_guess, unseen_words


@dataclass
class SpanPrediction:
    question_tokens: list[str]
    passage_tokens: list[str]
    start_probs: list[float]  # over the passage's tokens only: sums to 1
    end_probs: list[float]
    start: int  # index into passage_tokens
    end: int  # >= start
    unknown: list[str]
    truncated: int
    missing_words: list[str]  # question words naming something the passage never mentions
    unseen: list[str] = field(default_factory=list)  # words of the question or passage the training data never used

    @property
    def answer(self) -> str:
        return " ".join(self.passage_tokens[self.start : self.end + 1]).replace(" ##", "")

    @property
    def confidence(self) -> float:
        """The chosen span's probability: its start's times its end's."""
        return self.start_probs[self.start] * self.end_probs[self.end]

    @property
    def guess(self) -> bool:
        return bool(self.missing_words) or is_guess(self.unseen, self.confidence)


QUESTION_WORDS = frozenset(("where", "who", "what", "did", "was", "is", "the", "a", "an", "?", "which", "when"))


@torch.inference_mode()
def answer_span(run: FineTuneRun, tokenizer, question: str, passage: str) -> SpanPrediction:
    """The trained span head's best span of the passage (end >= start), with its start and end distributions."""
    enc, ids, segs, mask = _encode(tokenizer, question, passage)
    inside = passage_mask(segs, mask)
    if not bool(inside.any()):
        raise ValueError("the passage is empty: there is no span to choose from")
    logits = run.model(ids, segs, mask, inside)  # (1, T, 2), -inf outside the passage
    s, e = best_spans(logits)[0].tolist()
    where = inside[0].nonzero().flatten()
    lo = int(where[0])
    start_p = torch.softmax(logits[0, where, 0], -1)
    end_p = torch.softmax(logits[0, where, 1], -1)
    passage_words = {w.lower() for w in tokenizer.split(passage)}
    asked = [w.lower() for w in tokenizer.split(question)]
    verbs = set(BASE_FORM.values()) | {w for w, tag in TAG_OF.items() if tag == "verb"}
    missing = [w for w in asked if w.isalpha() and w not in QUESTION_WORDS | verbs | passage_words]
    return SpanPrediction(
        enc.tokens[1 : enc.segments.index(1) - 1],
        [enc.tokens[int(i)] for i in where],
        start_p.tolist(),
        end_p.tolist(),
        s - lo,
        e - lo,
        enc.unknown,
        enc.truncated,
        missing,
        unseen_words(tokenizer, run.task, run.seed, question, passage),
    )
