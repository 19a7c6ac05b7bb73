"""Choose, corrupt, label: one draw of BERT's corruption, each position's fate and why."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...model.tokenizer import WordPieceTokenizer
from ...objectives.mlm_masking import (
    KEPT,
    MASKED,
    NOT_CHOSEN,
    RANDOM,
    MaskCounts,
    MaskingResult,
    exact_counts,
    mask_tokens,
)

# What can happen to a position in a draw, as codes (the view words them), in the order the view colours them.
FATES = ("never_eligible", "not_chosen", "masked", "random", "kept")
ACTION_FATES = {NOT_CHOSEN: "not_chosen", MASKED: "masked", RANDOM: "random", KEPT: "kept"}
CHOSEN_FATES = frozenset(("masked", "random", "kept"))
# Why a position can never be chosen: [CLS], [SEP] or [PAD]; a word outside the vocabulary; a [MASK] typed in.
REASONS = ("special", "unknown", "typed_mask")


@dataclass(frozen=True)
class DrawPosition:
    """One position of a draw: what it held, what happened to it, what the model receives and its label."""

    position: int
    token: str  # the original token
    original_id: int
    fate: str  # one of FATES
    reason: str | None  # one of REASONS when the fate is never_eligible, else None
    input_token: str  # what the model receives
    input_id: int
    label: int  # the original id where chosen, -100 elsewhere

    @property
    def chosen(self) -> bool:
        return self.fate in CHOSEN_FATES


def never_eligible_reason(tokenizer: WordPieceTokenizer, token_id: int) -> str:
    if token_id == tokenizer.unk_id:
        return "unknown"
    if token_id == tokenizer.mask_id:
        return "typed_mask"
    return "special"


@dataclass
class MaskingDraw:
    """One draw of the MLM corruption over one sentence (batch of 1)."""

    tokens: list[str]  # the original tokens, [CLS] ... [SEP]
    ids: torch.Tensor  # (1, T) original ids
    result: MaskingResult  # inputs, labels, actions, eligible, each (1, T)
    input_tokens: list[str]  # what the model receives, as tokens
    rate: float
    exact: bool
    seed: int
    positions: list[DrawPosition]  # the draw position by position, with each one's fate

    @property
    def counts(self) -> MaskCounts:
        return self.result.counts()

    @property
    def rule(self) -> MaskCounts:
        """What the exact rule gives for this many eligible tokens (the coin flip matches it only on average)."""
        return exact_counts(self.counts.eligible, self.rate)

    @property
    def follows_rule(self) -> bool:
        return self.counts == self.rule

    @property
    def expected_chosen(self) -> float:
        """Coin-flip mode: the average number chosen, rate x eligible."""
        return self.rate * self.counts.eligible

    @property
    def chosen_spread(self) -> float:
        """Coin-flip mode: the standard deviation of the number chosen (binomial)."""
        n = self.counts.eligible
        return math.sqrt(n * self.rate * (1.0 - self.rate))


def draw_positions(
    tokenizer: WordPieceTokenizer, ids: torch.Tensor, result: MaskingResult, tokens: list[str], input_tokens: list[str]
) -> list[DrawPosition]:
    """Row 0 of a masking result, one DrawPosition per position: exactly one fate each."""
    out = []
    for t, token in enumerate(tokens):
        token_id = int(ids[0, t])
        eligible = bool(result.eligible[0, t])
        out.append(
            DrawPosition(
                position=t,
                token=token,
                original_id=token_id,
                fate=ACTION_FATES[int(result.actions[0, t])] if eligible else "never_eligible",
                reason=None if eligible else never_eligible_reason(tokenizer, token_id),
                input_token=input_tokens[t],
                input_id=int(result.inputs[0, t]),
                label=int(result.labels[0, t]),
            )
        )
    return out


def draw_masks(tokenizer: WordPieceTokenizer, ids: list[int], *, rate: float, exact: bool, seed: int) -> MaskingDraw:
    """Corrupt one encoded sentence with mask_tokens, seeded by an explicit generator.

    Every special id is left alone: [CLS], [SEP] and [PAD] as in BERT, and here also [UNK] and a
    typed [MASK], which hold no real word to recover.
    """
    ids_t = torch.tensor([ids], dtype=torch.long)
    generator = torch.Generator().manual_seed(int(seed))
    result = mask_tokens(
        ids_t,
        mask_id=tokenizer.mask_id,
        special_ids=tokenizer.special_ids,
        vocab_size=tokenizer.vocab_size,
        rate=float(rate),
        exact=bool(exact),
        generator=generator,
    )
    tokens, input_tokens = tokenizer.decode(ids_t[0]), tokenizer.decode(result.inputs[0])
    return MaskingDraw(
        tokens=tokens,
        ids=ids_t,
        result=result,
        input_tokens=input_tokens,
        rate=float(rate),
        exact=bool(exact),
        seed=int(seed),
        positions=draw_positions(tokenizer, ids_t, result, tokens, input_tokens),
    )


def rate_showing_every_fate(n_eligible: int, step: float = 0.01) -> float | None:
    """The smallest masking rate (a multiple of step, as the page's slider moves) at which the exact count
    gives at least one [MASK], one random token and one kept token; None if no rate does."""
    for k in range(round(1 / step) + 1):
        counts = exact_counts(n_eligible, round(k * step, 10))
        if counts.masked and counts.random and counts.kept:
            return round(k * step, 10)
    return None
