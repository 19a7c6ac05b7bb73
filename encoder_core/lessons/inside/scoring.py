"""Scoring the explanations against the knockouts: Spearman's rank correlation, one sentence or a sweep."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ...model.output_heads import MaskedLanguageModel
from .cloze import Cloze, prepare_cloze
from .explanations import METHODS, Explanations, explanations
from .forward import clean_answer
from .knockouts import Knockouts, token_knockouts


def ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties given the mean of the ranks they span (as Spearman's rho needs)."""
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(v, kind="stable")
    r = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        r[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation: the Pearson correlation of the ranks. NaN when either side is constant."""
    ra, rb = ranks(a), ranks(b)
    if len(ra) != len(rb):
        raise ValueError("both sides need the same number of values")
    da, db = ra - ra.mean(), rb - rb.mean()
    denominator = math.sqrt(float((da * da).sum() * (db * db).sum()))
    return float((da * db).sum() / denominator) if denominator else float("nan")


def scored_positions(cloze: Cloze) -> list[int]:
    """The tokens an explanation is scored on: every one but the [MASK] asked about."""
    return [i for i in range(len(cloze.ids)) if i != cloze.position]


def agreement(expl: Explanations, knock: Knockouts, cloze: Cloze) -> dict[str, float]:
    """Spearman's rho of each explanation with the token knockouts' importance (how much f drops when the
    token is hidden: −change), over scored_positions. 1: the same order; 0: unrelated; −1: reversed."""
    keep = scored_positions(cloze)
    importance = (-knock.tokens[keep]).tolist()
    return {name: spearman(scores[keep].tolist(), importance) for name, scores in expl.by_method().items()}


def best_method(scores: dict[str, float]) -> str:
    """The method with the highest rank correlation (an undefined one counts as lowest)."""
    return max(scores, key=lambda m: -math.inf if math.isnan(scores[m]) else scores[m])


@dataclass
class Sweep:
    sentences: list[str]
    rho: np.ndarray  # (N, methods): each sentence's rank correlation per method, in METHODS order
    baseline: str
    steps: int

    @property
    def mean(self) -> dict[str, float]:
        """The mean over the sentences where the correlation is defined."""
        return {m: float(np.nanmean(self.rho[:, i])) for i, m in enumerate(METHODS)}

    @property
    def wins(self) -> dict[str, int]:
        """On how many sentences each method agrees best."""
        best = [best_method(dict(zip(METHODS, row, strict=True))) for row in self.rho]
        return {m: best.count(m) for m in METHODS}


def sweep(
    model: MaskedLanguageModel,
    tokenizer,
    sentences: Sequence[str],
    baseline: str = "[PAD]",
    steps: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> Sweep:
    """Every explanation scored against the token knockouts on each sentence. progress(done, total) after each."""
    rows = []
    for n, text in enumerate(sentences):
        cloze = prepare_cloze(tokenizer, text)
        answer, f = clean_answer(model, cloze)
        knock = Knockouts(answer, "", f, torch.zeros(0), token_knockouts(model, cloze, answer, f))
        scores = agreement(explanations(model, tokenizer, cloze, answer, baseline, steps), knock, cloze)
        rows.append([scores[m] for m in METHODS])
        if progress is not None:
            progress(n + 1, len(sentences))
    return Sweep(list(sentences), np.array(rows, dtype=np.float64), baseline, steps)
