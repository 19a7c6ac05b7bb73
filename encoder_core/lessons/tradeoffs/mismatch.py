"""4. The [MASK] mismatch: the token seen in pre-training and never in use, and what BERT's 80/10/10 does."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...model.output_heads import MaskedLanguageModel
from ...model.tokenizer import WordPieceTokenizer
from .common import _ids
from .sample_efficiency import ordinary_word_ids

CASES = ("masked", "random", "kept")  # what the chosen position holds: BERT's 80 / 10 / 10


@dataclass
class CaseOutcome:
    case: str  # one of CASES
    input_token: str  # what the position held
    top: list[tuple[str, float]]  # the five likeliest tokens there
    p_original: float  # the probability of the original token
    rank: int  # its rank among the whole vocabulary (1 = first choice)


@dataclass
class MaskMismatch:
    position: int
    original: str
    cases: list[CaseOutcome]  # masked, random, kept: at `position`
    mean_p_original: dict[str, float]  # per case, averaged over every word position of the sentence
    n_positions: int  # how many positions that average covers
    positions: list[int] = field(default_factory=list)  # every word position, in order
    p_original_at: dict[str, list[float]] = field(default_factory=dict)  # per case, at each of `positions`


def eligible_positions(tokenizer: WordPieceTokenizer, ids) -> list[int]:
    """Positions MLM may choose: every token that is not [CLS], [SEP], [PAD], [UNK] or [MASK]."""
    special = set(tokenizer.special_ids)
    return [i for i, t in enumerate(_ids(ids)[0].tolist()) if t not in special]


def mask_mismatch(
    mlm: MaskedLanguageModel, tokenizer: WordPieceTokenizer, ids, position: int, seed: int
) -> MaskMismatch:
    """At each word position: put [MASK], a random word, or leave the word; how likely is the original?"""
    ids = _ids(ids)
    positions = eligible_positions(tokenizer, ids)
    if position not in positions:
        raise ValueError(f"position {position} is not a word position; choose one of {positions}")
    pool = ordinary_word_ids(tokenizer)
    g = torch.Generator().manual_seed(int(seed))
    randoms = pool[torch.randint(len(pool), (len(positions),), generator=g)]
    rows = []
    for i, p in enumerate(positions):
        for case in CASES:
            row = ids[0].clone()
            row[p] = {"masked": tokenizer.mask_id, "random": int(randoms[i]), "kept": int(ids[0, p])}[case]
            rows.append(row)
    batch = torch.stack(rows)
    with torch.inference_mode():
        logits, _ = mlm(batch, need_weights=False)
    probs = torch.softmax(logits, dim=-1)  # (3 n, T, V)
    p_orig = {c: [] for c in CASES}
    cases = []
    for i, p in enumerate(positions):
        orig = int(ids[0, p])
        for j, case in enumerate(CASES):
            dist = probs[3 * i + j, p]
            p_orig[case].append(float(dist[orig]))
            if p == position:
                top = dist.topk(5)
                cases.append(
                    CaseOutcome(
                        case,
                        tokenizer.vocab[int(batch[3 * i + j, p])],
                        [(tokenizer.vocab[int(k)], float(v)) for v, k in zip(top.values, top.indices)],
                        float(dist[orig]),
                        int((dist > dist[orig]).sum()) + 1,
                    )
                )
    return MaskMismatch(
        position,
        tokenizer.vocab[int(ids[0, position])],
        cases,
        {c: sum(v) / len(v) for c, v in p_orig.items()},
        len(positions),
        positions,
        p_orig,
    )


def likeliest_case(mm: MaskMismatch) -> str:
    """The one of CASES under which the original word is likeliest at the chosen position."""
    return max(mm.cases, key=lambda c: c.p_original).case


# The likeliest input is asked about only where it beats both others by MISMATCH_MARGIN in probability (a
# tenth: a gap a student can see on the chart); elsewhere the question moves to the nearest word where it does.
MISMATCH_MARGIN = 0.1


def case_margins(mm: MaskMismatch) -> dict[int, float]:
    """Per word position: how far p(original) under the likeliest input is ahead of the next input's."""
    out = {}
    for i, p in enumerate(mm.positions):
        ranked = sorted((mm.p_original_at[c][i] for c in CASES), reverse=True)
        out[p] = ranked[0] - ranked[1]
    return out


def clear_position(mm: MaskMismatch, asked: int, margin: float = MISMATCH_MARGIN) -> int | None:
    """The word position nearest to `asked` (asked itself first, then the left one of two as near) where the
    likeliest input wins by `margin`; None when no word of the sentence has such a winner."""
    clear = [p for p, m in case_margins(mm).items() if m >= margin]
    return min(clear, key=lambda p: (abs(p - asked), p)) if clear else None
