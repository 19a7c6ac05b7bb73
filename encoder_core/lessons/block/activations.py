"""GELU next to ReLU: the two curves and which FFN units each keeps active."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .walk import Span


@dataclass
class ActivationCurves:
    x: torch.Tensor
    gelu: torch.Tensor
    relu: torch.Tensor

    @property
    def x_span(self) -> Span:
        return Span(float(self.x[0]), float(self.x[-1]))

    @property
    def lowest_gelu(self) -> float:
        return float(self.gelu.min())


def activation_curves(lo: float = -4.0, hi: float = 4.0, n: int = 161) -> ActivationCurves:
    x = torch.linspace(lo, hi, n)
    return ActivationCurves(x, F.gelu(x), F.relu(x))


@dataclass
class ActiveUnits:
    """How the two activations treat the same FFN pre-activations u (T x d_ff values)."""

    total: int
    gelu_positive: int
    relu_positive: int
    gelu_negative: int  # GELU lets small negative values through
    relu_zero: int  # ReLU sets every u <= 0 to exactly 0 (and its gradient there is 0)
    gelu_min: float  # GELU's most negative output on this input (never below about -0.17)
    per_token_gelu_positive: list[int]
    per_token_relu_positive: list[int]


def active_units(ffn_hidden: torch.Tensor) -> ActiveUnits:
    """ffn_hidden (T, d_ff): the FFN's pre-activations from a block trace."""
    g, r = F.gelu(ffn_hidden), F.relu(ffn_hidden)
    return ActiveUnits(
        total=ffn_hidden.numel(),
        gelu_positive=int((g > 0).sum()),
        relu_positive=int((r > 0).sum()),
        gelu_negative=int((g < 0).sum()),
        relu_zero=int((r == 0).sum()),
        gelu_min=float(g.min()),
        per_token_gelu_positive=(g > 0).sum(dim=-1).tolist(),
        per_token_relu_positive=(r > 0).sum(dim=-1).tolist(),
    )
