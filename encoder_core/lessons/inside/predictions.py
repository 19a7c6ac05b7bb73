"""The predictions' answers: which head, which token and which explanation a question offers, and why."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from .cloze import Cloze
from .explanations import METHODS
from .knockouts import Knockouts
from .scoring import best_method, scored_positions

# No coin tosses: a knockout question offers only parts whose knockout changes the answer's log-probability at
# least KNOCKOUT_MARGIN less than the right one's (with it knocked out, the answer is at least e^0.3 ≈ 1.35
# times likelier than with the right one knocked out). A part closer than that is left out, and the reveal
# names it.
KNOCKOUT_MARGIN = 0.3
N_OPTIONS = 4  # parts offered in a knockout question: the right one and up to three tempting ones
# Explanations whose Spearman ρ comes within EXPLANATION_MARGIN of the best one's all count as right: on a
# sentence of a dozen tokens a difference of 0.1 in ρ is about one pair of tokens swapped.
EXPLANATION_MARGIN = 0.1


def _offer(best, pools, apart) -> dict:
    """{part: why it is offered}: best ("answer"), then the first part of each (reason, pool) that is apart
    from the best by the margin and not offered yet, until N_OPTIONS."""
    picked = {best: "answer"}
    for reason, pool in pools:
        if len(picked) == N_OPTIONS:
            break
        c = next((c for c in pool if c not in picked and apart(c)), None)
        if c is not None:
            picked[c] = reason
    return picked


@dataclass
class HeadChoice:
    candidates: list[tuple[int, int]]  # (layer, head), in layer-then-head order
    reasons: list[str]  # why each is offered: "answer", "sharpest", "last layer", "first layer", "runner-up"
    answer: int  # index of the head whose knockout lowers f most
    effects: list[float]  # each candidate's knockout change
    peaks: list[tuple[float, int]] = field(default_factory=list)  # each one's largest weight from the [MASK], and where
    close: list[tuple[int, int]] = field(default_factory=list)  # heads not offered, within the margin of the answer

    @property
    def asked(self) -> bool:
        """At least one head stands apart from the most important one by the margin."""
        return len(self.candidates) >= 2


def head_choice(knock: Knockouts, attentions: torch.Tensor, position: int) -> HeadChoice:
    """The head that matters most, and heads a student might pick for a wrong reason (the sharpest attention
    from the [MASK]; a head of the last layer; a head of the first layer; the next most harmful knockout), each
    at least KNOCKOUT_MARGIN apart from it. attentions (L, H, T, T)."""
    L, H = knock.heads.shape
    best = knock.most_important_head()
    floor = float(knock.heads[best]) + KNOCKOUT_MARGIN
    sharp = attentions[:, :, position].amax(-1)  # (L, H): the largest weight each head puts anywhere
    ordered_sharp = [divmod(int(i), H) for i in torch.argsort(sharp.flatten(), descending=True)]
    picked = _offer(
        best,
        (
            ("sharpest", ordered_sharp),
            ("last layer", [(L - 1, h) for h in torch.argsort(sharp[-1], descending=True).tolist()]),
            ("first layer", [(0, h) for h in torch.argsort(sharp[0], descending=True).tolist()]),
            ("runner-up", [divmod(int(i), H) for i in torch.argsort(knock.heads.flatten())]),
        ),
        lambda c: float(knock.heads[c]) >= floor,
    )
    candidates = sorted(picked)
    every = [divmod(i, H) for i in range(L * H)]
    return HeadChoice(
        candidates,
        [picked[c] for c in candidates],
        candidates.index(best),
        [float(knock.heads[c]) for c in candidates],
        [(float(sharp[c]), int(attentions[c[0], c[1], position].argmax())) for c in candidates],
        [c for c in every if c != best and float(knock.heads[c]) < floor],
    )


@dataclass
class TokenChoice:
    candidates: list[int]  # token positions offered, in sentence order
    reasons: list[str]  # why each is offered: "answer", "attended", "neighbour", "special", "runner-up"
    answer: int  # index of the token whose hiding lowers f most
    changes: list[float]  # each one's knockout change in f (negative: hiding it lowers the answer)
    attention: list[float]  # the last layer's attention from the [MASK] to each, mean of the heads
    close: list[int] = field(default_factory=list)  # tokens not offered, within the margin of the answer

    @property
    def asked(self) -> bool:
        """At least one token stands apart from the most important one by the margin."""
        return len(self.candidates) >= 2


def token_choice(knock: Knockouts, attentions: torch.Tensor, cloze: Cloze) -> TokenChoice:
    """The token whose hiding lowers the answer most, and tokens a student might pick for a wrong reason (the
    one the last layer attends to most from the [MASK]; the nearest to the [MASK]; [CLS] or [SEP]; the next
    largest drop), each at least KNOCKOUT_MARGIN apart from it. attentions (L, H, T, T)."""
    keep = scored_positions(cloze)
    change = knock.tokens
    best = min(keep, key=lambda i: float(change[i]))
    floor = float(change[best]) + KNOCKOUT_MARGIN
    raw = attentions[-1, :, cloze.position].mean(0).double()  # (T,): as Explanations.raw
    attended = sorted(keep, key=lambda i: -float(raw[i]))
    picked = _offer(
        best,
        (
            ("attended", attended),
            ("neighbour", sorted(keep, key=lambda i: (abs(i - cloze.position), i))),
            ("special", [i for i in attended if cloze.tokens[i] in ("[CLS]", "[SEP]")]),
            ("runner-up", sorted(keep, key=lambda i: float(change[i]))),
        ),
        lambda i: float(change[i]) >= floor,
    )
    candidates = sorted(picked)
    return TokenChoice(
        candidates,
        [picked[i] for i in candidates],
        candidates.index(best),
        [float(change[i]) for i in candidates],
        [float(raw[i]) for i in candidates],
        [i for i in keep if i != best and float(change[i]) < floor],
    )


def best_methods(scores: dict[str, float]) -> list[str]:
    """The methods within EXPLANATION_MARGIN of the best rank correlation (none when every one is undefined)."""
    top = scores[best_method(scores)]
    if math.isnan(top):
        return []
    return [m for m in METHODS if not math.isnan(scores[m]) and scores[m] >= top - EXPLANATION_MARGIN]


def explanation_asked(scores: dict[str, float]) -> bool:
    """Worth asking: some method falls outside the margin of the best (and the best is defined)."""
    return 0 < len(best_methods(scores)) < len(METHODS)
