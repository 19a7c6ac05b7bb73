"""The MLM loss, broken down per position: which positions count, and the right mean."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .mlm_masking import IGNORE_INDEX


@dataclass
class LossBreakdown:
    per_position: torch.Tensor  # (B, T) cross-entropy at every position against its label; 0 where ignored
    counted: torch.Tensor  # (B, T) bool, label != -100
    n_counted: int
    n_positions: int
    mean: float  # over counted positions only: what F.cross_entropy(ignore_index=-100) gives
    wrong_mean_all_positions: float  # the same sum divided by every position: the classic mistake


def loss_breakdown(
    logits: torch.Tensor, labels: torch.Tensor, key_padding_mask: torch.Tensor | None = None
) -> LossBreakdown:
    """logits (B, T, V), labels (B, T) with -100 at positions that carry no loss."""
    if logits.dim() != 3 or labels.shape != logits.shape[:2]:
        raise ValueError(
            f"expected logits (B, T, V) and labels (B, T), got {tuple(logits.shape)} and {tuple(labels.shape)}"
        )
    counted = labels != IGNORE_INDEX
    per_position = F.cross_entropy(logits.transpose(1, 2), labels.clamp(min=0), reduction="none")
    per_position = per_position.masked_fill(~counted, 0.0)
    n_counted = int(counted.sum())
    n_positions = int(labels.numel() if key_padding_mask is None else (~key_padding_mask).sum())
    total = float(per_position.sum())
    mean = total / n_counted if n_counted else float("nan")  # nothing chosen: no loss to average
    return LossBreakdown(
        per_position, counted, n_counted, n_positions, mean, total / n_positions if n_positions else float("nan")
    )
