"""BERT's masked-language-model corruption: choose positions, corrupt them 80/10/10, label them.

Two ways to choose:
- exact (default): n = round_half_up(rate x eligible) positions per sequence, and the split
  is exact too: n_mask = round_half_up(0.8 n), n_random = min(round_half_up(0.1 n), n - n_mask),
  the rest kept. 200 eligible -> 30 chosen -> 24 [MASK], 3 random, 3 kept. Small counts:
  1 chosen -> 1 [MASK]; 3 -> 2 [MASK], 0 random, 1 kept; 5 -> 4 [MASK], 1 random, 0 kept.
- coin flip (BERT's original): each eligible position is chosen with probability rate, then
  a second draw sends it to [MASK] (0.8), a random token (0.1) or leaves it (0.1).
[CLS], [SEP], [PAD] (any id in special_ids) are never eligible. Random replacements are
drawn from ordinary tokens only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

IGNORE_INDEX = -100  # CrossEntropyLoss's default ignore_index

NOT_CHOSEN, MASKED, RANDOM, KEPT = 0, 1, 2, 3


def round_half_up(x: float) -> int:
    """0.5 rounds up (Python's round() would give 2 for 2.5: banker's rounding)."""
    return int(math.floor(x + 0.5 + 1e-9))


@dataclass(frozen=True)
class MaskCounts:
    eligible: int
    chosen: int
    masked: int
    random: int
    kept: int


def exact_counts(n_eligible: int, rate: float = 0.15, p_mask: float = 0.8, p_random: float = 0.1) -> MaskCounts:
    """The exact-mode rule, for any number of eligible tokens."""
    if n_eligible < 0:
        raise ValueError(f"n_eligible must be >= 0, got {n_eligible}")
    check_rates(rate, p_mask, p_random)
    chosen = min(n_eligible, round_half_up(rate * n_eligible))
    masked = round_half_up(p_mask * chosen)
    random = min(round_half_up(p_random * chosen), chosen - masked)
    return MaskCounts(n_eligible, chosen, masked, random, chosen - masked - random)


def check_rates(rate: float, p_mask: float, p_random: float) -> None:
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"rate must be in [0, 1], got {rate}")
    if not (0.0 <= p_mask <= 1.0 and 0.0 <= p_random <= 1.0 and p_mask + p_random <= 1.0):
        raise ValueError(f"p_mask and p_random must be in [0, 1] with a sum <= 1, got {p_mask}, {p_random}")


@dataclass
class MaskingResult:
    inputs: torch.Tensor  # (B, T) what the model receives
    labels: torch.Tensor  # (B, T) original id where chosen, -100 elsewhere
    actions: torch.Tensor  # (B, T) NOT_CHOSEN / MASKED / RANDOM / KEPT
    eligible: torch.Tensor  # (B, T) bool

    @property
    def chosen(self) -> torch.Tensor:
        return self.actions != NOT_CHOSEN

    def counts(self) -> MaskCounts:
        a = self.actions
        return MaskCounts(
            int(self.eligible.sum()),
            int((a != NOT_CHOSEN).sum()),
            int((a == MASKED).sum()),
            int((a == RANDOM).sum()),
            int((a == KEPT).sum()),
        )


def mask_tokens(
    ids: torch.Tensor,
    *,
    mask_id: int,
    special_ids,
    vocab_size: int,
    rate: float = 0.15,
    exact: bool = True,
    generator: torch.Generator | None = None,
    p_mask: float = 0.8,
    p_random: float = 0.1,
    replacement_ids: torch.Tensor | None = None,
) -> MaskingResult:
    """Corrupt ids (B, T) for MLM. Seed it with an explicit torch.Generator for repeatable draws."""
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long or ids.dim() != 2:
        raise ValueError("ids must be a torch.long tensor of shape (B, T)")
    check_rates(rate, p_mask, p_random)
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= vocab_size):
        raise ValueError(f"token ids must be in [0, {vocab_size})")
    special = torch.tensor(sorted(set(int(s) for s in special_ids)), dtype=torch.long)
    eligible = ~torch.isin(ids, special)
    if replacement_ids is None:
        everything = torch.arange(vocab_size)
        replacement_ids = everything[~torch.isin(everything, special)]
    if replacement_ids.numel() == 0:
        raise ValueError("no ordinary token to use as a random replacement")

    actions = torch.full_like(ids, NOT_CHOSEN)
    if exact:
        for row in range(ids.shape[0]):
            positions = eligible[row].nonzero().flatten()
            c = exact_counts(len(positions), rate, p_mask, p_random)
            order = positions[torch.randperm(len(positions), generator=generator)][: c.chosen]
            actions[row, order[: c.masked]] = MASKED
            actions[row, order[c.masked : c.masked + c.random]] = RANDOM
            actions[row, order[c.masked + c.random :]] = KEPT
    else:
        chosen = (torch.rand(ids.shape, generator=generator) < rate) & eligible
        roll = torch.rand(ids.shape, generator=generator)
        split_80_10_10(actions, chosen, roll, p_mask, p_random)
    return apply_actions(ids, actions, eligible, mask_id, replacement_ids, generator)


def split_80_10_10(actions: torch.Tensor, chosen: torch.Tensor, roll: torch.Tensor, p_mask: float, p_random: float):
    """Write each chosen position's fate into actions from its uniform roll: [MASK], random or kept."""
    actions[chosen & (roll < p_mask)] = MASKED
    actions[chosen & (roll >= p_mask) & (roll < p_mask + p_random)] = RANDOM
    actions[chosen & (roll >= p_mask + p_random)] = KEPT


def apply_actions(ids, actions, eligible, mask_id: int, replacement_ids, generator) -> MaskingResult:
    """The model's input and the labels from each position's fate (random words drawn here, in order)."""
    inputs = ids.clone()
    inputs[actions == MASKED] = mask_id
    n_random = int((actions == RANDOM).sum())
    picks = torch.randint(len(replacement_ids), (n_random,), generator=generator)
    inputs[actions == RANDOM] = replacement_ids[picks]
    labels = torch.where(actions != NOT_CHOSEN, ids, torch.full_like(ids, IGNORE_INDEX))
    return MaskingResult(inputs, labels, actions, eligible)


def tokenizer_mask(tokenizer, ids: torch.Tensor, **options) -> MaskingResult:
    """mask_tokens with the tokenizer's own [MASK] id, special ids and vocabulary size."""
    return mask_tokens(
        ids, mask_id=tokenizer.mask_id, special_ids=tokenizer.special_ids, vocab_size=tokenizer.vocab_size, **options
    )


def whole_word_mask(
    ids: torch.Tensor,
    continues: torch.Tensor,
    *,
    mask_id: int,
    special_ids,
    rate: float = 0.15,
    generator: torch.Generator | None = None,
    p_mask: float = 0.8,
    p_random: float = 0.1,
    replacement_ids: torch.Tensor,
) -> MaskingResult:
    """Whole-word masking (coin flip): each word is chosen with probability rate, and then all its pieces.

    continues (B, T) bool: True where a token goes on the word before it (a "##" piece). The 80/10/10
    draw is made once per word, so a chosen word is all [MASK], all random pieces, or all kept: the
    model cannot guess "##brella" from a visible "um".
    """
    if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long or ids.dim() != 2:
        raise ValueError("ids must be a torch.long tensor of shape (B, T)")
    check_rates(rate, p_mask, p_random)
    special = torch.tensor(sorted(set(int(s) for s in special_ids)), dtype=torch.long)
    eligible = ~torch.isin(ids, special)
    starts = eligible & ~continues
    # word number of every position: a running count of word starts (pieces share their word's number)
    word = torch.cumsum(starts.long(), dim=1) - 1
    n_words = int(word.max()) + 1 if word.numel() else 0
    chosen_word = torch.rand((ids.shape[0], max(n_words, 1)), generator=generator) < rate
    roll = torch.rand((ids.shape[0], max(n_words, 1)), generator=generator)
    w = word.clamp(min=0)
    chosen = eligible & (word >= 0) & chosen_word.gather(1, w)
    r = roll.gather(1, w)
    actions = torch.full_like(ids, NOT_CHOSEN)
    split_80_10_10(actions, chosen, r, p_mask, p_random)
    return apply_actions(ids, actions, eligible, mask_id, replacement_ids, generator)
