"""Checked against PyTorch: the block and PyTorch's own encoder layer on the same weights."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model.model import EncoderBlock
from ...model.reference import FLOAT32_TOLERANCE, block_equivalence


@dataclass(frozen=True)
class Equivalence:
    max_abs_diff: float  # largest |ours - PyTorch's| over the block's output
    tolerance: float

    @property
    def agrees(self) -> bool:
        """Within the tolerance (a NaN never agrees)."""
        return self.max_abs_diff <= self.tolerance


def check_against_pytorch(block: EncoderBlock, x: torch.Tensor, tolerance: float = FLOAT32_TOLERANCE) -> Equivalence:
    """Run one block and nn.TransformerEncoderLayer holding a copy of its weights on x, (T, D) or (B, T, D)."""
    with torch.inference_mode():
        diff = block_equivalence(block, x[None] if x.dim() == 2 else x)
    return Equivalence(diff, tolerance)
