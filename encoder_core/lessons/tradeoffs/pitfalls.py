"""The pitfalls run: the loss averaged over every position, truncation that cuts the answer out of a passage."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model.output_heads import MaskedLanguageModel
from ...model.tokenizer import WordPieceTokenizer
from ...objectives.loss import LossBreakdown, loss_breakdown
from ...objectives.mlm_masking import tokenizer_mask
from .common import _ids


@dataclass
class LossAveraging:
    breakdown: LossBreakdown
    grad_norm_right: float  # |d loss / d logits| for the mean over the chosen positions
    grad_norm_wrong: float  # the same for the mean over every position

    @property
    def scale(self) -> float:
        """wrong / right: the chosen share of the positions, n_counted / n_positions."""
        return self.breakdown.n_counted / self.breakdown.n_positions


def loss_averaging(mlm: MaskedLanguageModel, tokenizer: WordPieceTokenizer, ids, seed: int) -> LossAveraging | None:
    """Mask the sentence (15%, exact), then average its loss both ways. None when nothing was chosen."""
    ids = _ids(ids)
    m = tokenizer_mask(tokenizer, ids, generator=torch.Generator().manual_seed(int(seed)))
    if not bool(m.chosen.any()):
        return None
    with torch.inference_mode():
        logits, _ = mlm(m.inputs, need_weights=False)
    breakdown = loss_breakdown(logits, m.labels)
    norms = []
    for divisor in (breakdown.n_counted, breakdown.n_positions):
        leaf = logits.clone().requires_grad_(True)  # a copy outside inference mode: the model is not touched
        per = torch.nn.functional.cross_entropy(leaf.transpose(1, 2), m.labels.clamp(min=0), reduction="none")
        (per.masked_fill(~breakdown.counted, 0.0).sum() / divisor).backward()
        norms.append(float(leaf.grad.norm()))
    return LossAveraging(breakdown, norms[0], norms[1])


# ---- pitfall 6: truncation that cuts the answer out of a QA passage --------------------------------


@dataclass
class AnswerTruncation:
    lengths: list[int]  # the max_length values tried
    answer_kept: list[int]  # per length: the answer's word pieces still in the input
    answer_pieces: int  # the answer's word pieces in the whole passage
    shortest_keeping: int | None  # the smallest length tried from which on every length keeps the whole answer
    answer_last_index: int  # the answer's last piece, as a position in the untruncated input


def answer_truncation(
    tokenizer: WordPieceTokenizer, question: str, passage: str, answer_words: tuple[int, int], lengths
) -> AnswerTruncation:
    """For each max_length, encode (question, passage) truncated as BERT pipelines do (the longer text is cut first,
    from its end) and count how many of the answer's pieces survive. answer_words: its first and last word in the
    passage, as the tokenizer splits words."""
    words = tokenizer.split_words(passage)
    first, last = answer_words
    if not 0 <= first <= last < len(words):
        raise ValueError(f"answer words {answer_words} are outside the passage's {len(words)} words")
    start = sum(len(p) for _, p in words[:first])  # the answer's first piece, counted within the passage
    end = sum(len(p) for _, p in words[: last + 1])  # one past its last piece
    offset = len(tokenizer.encode(question).ids)  # [CLS] question [SEP] before the passage
    kept = []
    for length in lengths:
        enc = tokenizer.encode(question, passage, max_length=length, truncate=True)
        passage_pieces = sum(enc.segments) - 1  # segment 1 holds the passage and its [SEP]
        kept.append(max(0, min(end, passage_pieces) - start))
    shortest = None  # from here on up every length keeps the whole answer
    for length, k in zip(reversed(list(lengths)), reversed(kept)):
        if k < end - start:
            break
        shortest = length
    return AnswerTruncation(list(lengths), kept, end - start, shortest, offset + end - 1)
