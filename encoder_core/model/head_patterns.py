"""Name what each attention head mostly does on one sentence.

For every head we measure five masses, each an average over the real (non-pad) query rows:

  previous token  weight on key i-1, over the rows i that have a real previous token
  next token      weight on key i+1, over the rows i that have a real next token
  [CLS]           total weight on the [CLS] column(s)
  [SEP]           total weight on the [SEP] column(s) (a pair has two)
  self            weight on key i (the diagonal)

Rule: the head is labelled with the pattern of largest mass if that mass is at least
`threshold` (0.4 by default), else "broad"; the reported mass is that largest one either way.
Ties go to the pattern listed first above. The patterns overlap on purpose (row 1's previous
token is [CLS]; row 0's self is [CLS]), so a mass says how well a pattern describes the head,
not a share of a partition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

PATTERNS = ("previous token", "next token", "[CLS]", "[SEP]", "self")
NEIGHBOUR_PATTERNS = PATTERNS[:2]  # the positional ones: the head looks one token to the side
BROAD = "broad"
DEFAULT_THRESHOLD = 0.4


@dataclass(frozen=True)
class HeadLabel:
    layer: int
    head: int
    pattern: str  # one of PATTERNS, or BROAD
    mass: float  # the largest of the masses below
    masses: dict[str, float]  # every pattern's mass


def _as_tensor(attn) -> torch.Tensor:
    if isinstance(attn, (list, tuple)):
        attn = torch.stack(list(attn))  # per-layer (H, T, T)
    if not isinstance(attn, torch.Tensor) or attn.dim() != 4 or attn.shape[-1] != attn.shape[-2]:
        shape = tuple(attn.shape) if isinstance(attn, torch.Tensor) else type(attn).__name__
        raise ValueError(f"attention must have shape (layers, heads, T, T) for one sequence, got {shape}")
    return attn.detach().float()


def pattern_masses(
    attn: torch.Tensor | Sequence[torch.Tensor],
    tokens: Sequence[str],
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """(L, H, len(PATTERNS)) masses for one sequence. attn: (L, H, T, T) or a list of L (H, T, T).

    key_padding_mask: (T,) or (1, T) bool, True = pad; pad rows are ignored and pad keys never count
    as a neighbour. Without it every position is treated as real.
    """
    a = _as_tensor(attn)
    T = a.shape[-1]
    if len(tokens) != T:
        raise ValueError(f"{len(tokens)} tokens for attention over {T} positions")
    if key_padding_mask is None:
        real = torch.ones(T, dtype=torch.bool)
    else:
        real = ~key_padding_mask.reshape(-1).to(torch.bool).cpu()
        if real.numel() != T:
            raise ValueError(f"key_padding_mask has {real.numel()} positions, attention has {T}")
    if not bool(real.any()):
        raise ValueError("the sequence has no real token")
    rows = real.nonzero().flatten()  # real query positions
    idx = torch.arange(T)
    has_prev = real & torch.cat([torch.zeros(1, dtype=torch.bool), real[:-1]])  # i real and i-1 real
    has_next = real & torch.cat([real[1:], torch.zeros(1, dtype=torch.bool)])
    cls_cols = torch.tensor([t == "[CLS]" for t in tokens]) & real
    sep_cols = torch.tensor([t == "[SEP]" for t in tokens]) & real

    def neighbour(keep: torch.Tensor, offset: int) -> torch.Tensor:
        i = keep.nonzero().flatten()
        if i.numel() == 0:  # a one-token sequence has no neighbours
            return a.new_zeros(a.shape[:2])
        return a[:, :, i, i + offset].mean(-1)

    masses = [
        neighbour(has_prev, -1),
        neighbour(has_next, 1),
        a[:, :, rows][..., cls_cols].sum(-1).mean(-1),
        a[:, :, rows][..., sep_cols].sum(-1).mean(-1),
        a[:, :, rows, idx[rows]].mean(-1),
    ]
    return torch.stack(masses, dim=-1)


def label_heads(
    attn: torch.Tensor | Sequence[torch.Tensor],
    tokens: Sequence[str],
    key_padding_mask: torch.Tensor | None = None,
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[HeadLabel]:
    """One HeadLabel per head, layer by layer, by the rule in the module docstring."""
    m = pattern_masses(attn, tokens, key_padding_mask)
    labels = []
    for layer in range(m.shape[0]):
        for head in range(m.shape[1]):
            values = m[layer, head]
            best = int(values.argmax())  # first index on a tie
            mass = float(values[best])
            labels.append(
                HeadLabel(
                    layer,
                    head,
                    PATTERNS[best] if mass >= threshold else BROAD,
                    mass,
                    {p: float(v) for p, v in zip(PATTERNS, values)},
                )
            )
    return labels


def layer_averages(
    attn: torch.Tensor | Sequence[torch.Tensor],
    tokens: Sequence[str],
    key_padding_mask: torch.Tensor | None = None,
) -> list[dict[str, float]]:
    """Per layer, each pattern's mass averaged over the layer's heads."""
    m = pattern_masses(attn, tokens, key_padding_mask).mean(dim=1)  # (L, P)
    return [{p: float(v) for p, v in zip(PATTERNS, row)} for row in m]


def head_label(labels: Sequence[HeadLabel], layer: int, head: int) -> HeadLabel:
    """The label of one head, from label_heads' list."""
    for lab in labels:
        if (lab.layer, lab.head) == (layer, head):
            return lab
    raise ValueError(f"no label for layer {layer}, head {head}")
