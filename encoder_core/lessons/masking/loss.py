"""Which positions carry a loss: the counting example, the loss's positions and the hardest one."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import torch

from ...model.tokenizer import WordPieceTokenizer
from ...objectives.mlm_masking import IGNORE_INDEX
from .draw import MaskingDraw
from .shapes import MLMForward, mlm_forward

# Seed 004's counting example: "the cat went home" is six positions with [CLS] and [SEP];
# hiding "cat" and "went" leaves two positions that carry a loss.
COUNT_EXAMPLE_TEXT = "the cat went home"
COUNT_EXAMPLE_HIDDEN = (2, 3)


@dataclass
class CountExample:
    """Seed 004's counting rule on the trained model: six positions, two hidden, the mean is over two."""

    tokens: list[str]
    input_tokens: list[str]
    forward: MLMForward

    @property
    def n_positions(self) -> int:
        return self.forward.breakdown.n_positions

    @property
    def n_counted(self) -> int:
        return self.forward.breakdown.n_counted

    @property
    def losses(self) -> list[float]:
        return [float(v) for v in self.forward.breakdown.per_position[0]]


def count_example(
    model, tokenizer: WordPieceTokenizer, text: str = COUNT_EXAMPLE_TEXT, hidden: tuple[int, ...] = COUNT_EXAMPLE_HIDDEN
) -> CountExample:
    """Hide the given positions with [MASK], label only them, run the model."""
    enc = tokenizer.encode(text)
    ids = torch.tensor([enc.ids], dtype=torch.long)
    if any(not 0 < p < len(enc.ids) - 1 for p in hidden):
        raise ValueError(f"positions {hidden} must be inside the sentence (1..{len(enc.ids) - 2})")
    inputs = ids.clone()
    labels = torch.full_like(ids, IGNORE_INDEX)
    for p in hidden:
        inputs[0, p] = tokenizer.mask_id
        labels[0, p] = ids[0, p]
    return CountExample(
        enc.tokens, tokenizer.decode(inputs[0]), mlm_forward(model, inputs, labels, tokenizer=tokenizer)
    )


# ---- what a student is asked to predict (ui.frame.predict asks; these compute the model's answer) ----

# Which positions of a draw carry a loss: every one; the chosen ones ([MASK], random and kept); only the
# [MASK]s; every word but [CLS] and [SEP]. In the order the question offers them.
LOSS_SETS = ("every", "chosen", "masked", "words")


def loss_positions(draw: MaskingDraw) -> list[int]:
    """The positions whose label is not -100: the only ones the loss reads."""
    return [p.position for p in draw.positions if p.label != IGNORE_INDEX]


def loss_set_positions(draw: MaskingDraw) -> dict[str, list[int]]:
    """The positions each of LOSS_SETS names, in this draw."""
    ps = draw.positions
    return {
        "every": [p.position for p in ps],
        "chosen": [p.position for p in ps if p.chosen],
        "masked": [p.position for p in ps if p.fate == "masked"],
        "words": [p.position for p in ps if p.reason != "special"],  # all but [CLS], [SEP] (and [PAD])
    }


def matching_loss_sets(draw: MaskingDraw) -> list[str]:
    """The LOSS_SETS whose positions are exactly the labelled ones. More than one when this draw cannot tell
    them apart: when every chosen position became [MASK], "chosen" and "masked" are the same positions."""
    labelled = loss_positions(draw)
    return [name for name, positions in loss_set_positions(draw).items() if positions == labelled]


def loss_outcome(draw: MaskingDraw) -> str:
    """Which of LOSS_SETS the labelled positions are: "chosen" whenever it fits (the rule), else the one that does."""
    matches = matching_loss_sets(draw)
    if not matches:
        raise ValueError(f"the labelled positions {loss_positions(draw)} are none of {LOSS_SETS}")
    return "chosen" if "chosen" in matches else matches[0]


# Which chosen position carries the largest loss, −log p(original word), under a trained MLM. A coin toss is
# not a question: the largest must lead every other position offered by LOSS_MARGIN nats (there the model
# finds its original word at least e^0.5 ≈ 1.65 times less likely), and an option that comes within the
# margin of the largest counts as right too.
LOSS_MARGIN = 0.5
MAX_LOSS_OPTIONS = 6  # positions offered at most: the largest, and others drawn with the draw's own seed


@dataclass(frozen=True)
class HardestChoice:
    """The chosen positions a student picks the largest loss from, and the model's answer."""

    positions: tuple[int, ...]  # the chosen positions offered, in sentence order
    losses: tuple[float, ...]  # the cross-entropy at each: −log p(original word), in nats
    answer: int  # index into positions of the largest loss
    right: tuple[int, ...]  # indices within LOSS_MARGIN of the largest: each counts as right
    n_chosen: int  # positions chosen in the draw (more than offered when over MAX_LOSS_OPTIONS)

    @property
    def asked(self) -> bool:
        """Two positions or more offered, and at least one of them outside the margin of the largest."""
        return len(self.positions) >= 2 and len(self.right) < len(self.positions)

    def probability(self, i: int) -> float:
        """The probability the model gives the original word at the i-th position offered."""
        return math.exp(-self.losses[i])


def hardest_choice(draw: MaskingDraw, forward: MLMForward) -> HardestChoice:
    """The draw's chosen positions with their losses under the model's pass (mlm_forward over the draw)."""
    per_position = forward.breakdown.per_position[0]
    chosen = [p.position for p in draw.positions if p.chosen]
    if not chosen:
        return HardestChoice((), (), 0, (), 0)
    loss = {t: float(per_position[t]) for t in chosen}
    top = max(chosen, key=loss.__getitem__)
    others = [t for t in chosen if t != top]
    if len(others) >= MAX_LOSS_OPTIONS:
        others = random.Random(draw.seed).sample(others, MAX_LOSS_OPTIONS - 1)
    offered = tuple(sorted([top, *others]))
    losses = tuple(loss[t] for t in offered)
    right = tuple(i for i, v in enumerate(losses) if v >= loss[top] - LOSS_MARGIN)
    return HardestChoice(offered, losses, offered.index(top), right, len(chosen))
