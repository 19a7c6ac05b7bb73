"""5. RoBERTa: static vs dynamic masking, how many different views of a sentence each schedule gives."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...objectives.mlm_masking import exact_counts, mask_tokens

# Seed 002's list of what RoBERTa changed (no change to the architecture).
ROBERTA_CHANGES = (
    ("Next-sentence prediction", "trained alongside MLM", "dropped: MLM only, on continuous sentences"),
    ("Masking", "static: patterns fixed once, in preprocessing", "dynamic: a new pattern each epoch"),
    ("Batch size", "256 sequences", "8K sequences"),
    ("Training text", "16GB", "160GB"),
    ("Training steps", "100K", "500K"),
)
# BERT's released preprocessing duplicated the data 10 times, each copy with its own static mask.
SCHEDULES = {"static, 1 pattern": 1, "static, 10 copies (BERT)": 10, "dynamic (RoBERTa)": None}


def expected_distinct(n_patterns: int, draws: int) -> float:
    """Expected number of distinct patterns among `draws` independent uniform draws from n_patterns."""
    if draws <= 0:
        return 0.0
    if n_patterns <= 1:
        return 1.0
    return n_patterns * -math.expm1(draws * math.log1p(-1.0 / n_patterns))


@dataclass
class MaskingViews:
    n_eligible: int
    n_chosen: int  # per view (exact mode)
    n_patterns: int  # how many different sets of chosen positions there are: C(n_eligible, n_chosen)
    epochs: list[int]  # 1..E
    distinct: dict[str, list[int]]  # schedule -> distinct views seen after each epoch, drawn
    expected: dict[str, list[float]]  # the same, closed form
    coverage: dict[str, float]  # fraction of positions that carried a loss at least once in E epochs, drawn
    expected_coverage: dict[str, float]


def masking_views(n_eligible: int, epochs: int, seed: int, rate: float = 0.15) -> MaskingViews:
    """Draw the chosen positions epoch by epoch under each schedule, and count the distinct views."""
    if epochs < 1 or n_eligible < 0:
        raise ValueError(f"need epochs >= 1 and n_eligible >= 0, got {epochs}, {n_eligible}")
    k = exact_counts(n_eligible, rate).chosen
    n_patterns = math.comb(n_eligible, k)
    ids = torch.arange(n_eligible)[None] + 1  # id 0 is the only special: never chosen

    def draw(g: torch.Generator) -> frozenset[int]:
        m = mask_tokens(ids, mask_id=0, special_ids=[0], vocab_size=n_eligible + 1, rate=rate, generator=g)
        return frozenset(m.chosen[0].nonzero().flatten().tolist())

    distinct, expected, coverage, exp_cov = {}, {}, {}, {}
    for s, (name, copies) in enumerate(SCHEDULES.items()):
        g = torch.Generator().manual_seed(int(seed) * 7919 + s)
        fixed = [draw(g) for _ in range(copies)] if copies else None
        seen, covered, curve = set(), set(), []
        for e in range(epochs):
            pattern = fixed[e % copies] if fixed else draw(g)
            seen.add(pattern)
            covered |= pattern
            curve.append(len(seen))
        distinct[name] = curve
        m_of = (lambda e, c=copies: min(e, c)) if copies else (lambda e: e)
        expected[name] = [expected_distinct(n_patterns, m_of(e)) for e in range(1, epochs + 1)]
        coverage[name] = len(covered) / n_eligible if n_eligible else 0.0
        exp_cov[name] = 1 - (1 - k / n_eligible) ** m_of(epochs) if n_eligible else 0.0
    return MaskingViews(n_eligible, k, n_patterns, list(range(1, epochs + 1)), distinct, expected, coverage, exp_cov)
