"""Scaled dot-product attention with the two masks the lessons are about.

Masks are additive: -inf at every (query, key) pair that must not be attended,
added to the scores before the softmax, so those keys get a weight of exactly 0.
A query row whose keys are *all* masked has no valid distribution; instead of the
NaN a plain softmax would give, its weights are all 0 and its output is the zero
vector (nothing was attended).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .config import EncoderConfig


def additive_mask(
    T: int,
    *,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor | None:
    """Float mask broadcastable to (B, H, T, T): 0 where attending is allowed, -inf where not.

    causal: query i may not see keys j > i. key_padding_mask (B, T), True = ignore that key.
    """
    mask = None
    if causal:
        future = torch.ones(T, T, dtype=torch.bool, device=device).triu(1)
        mask = torch.zeros(T, T, dtype=dtype, device=device).masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        pad = torch.zeros(key_padding_mask.shape, dtype=dtype, device=device)
        pad = pad.masked_fill(key_padding_mask.to(device), float("-inf"))[:, None, None, :]  # (B, 1, 1, T)
        mask = pad if mask is None else mask + pad
    return mask


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k) + mask) v.  q, k, v: (..., T, d_k).  Returns (output, weights).

    weights[..., i, j] is how much query i takes from key j: rows are queries, columns keys.
    """
    T, d_k = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)  # (..., T, T)
    mask = additive_mask(T, causal=causal, key_padding_mask=key_padding_mask, dtype=scores.dtype, device=q.device)
    if mask is not None:
        if key_padding_mask is not None and q.dim() == 3:
            mask = mask[:, 0]  # (B, 1, T) for unbatched-over-heads input (B, T, d)
        scores = scores + mask
        dead = torch.isinf(scores).all(dim=-1, keepdim=True)  # rows with nothing to attend
        scores = scores.masked_fill(dead, 0.0)
        weights = torch.softmax(scores, dim=-1).masked_fill(dead, 0.0)
    else:
        weights = torch.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    return weights @ v, weights


class SelfAttention(nn.Module):
    """Multi-head self-attention. Names follow Hugging Face's BertSelfAttention (query, key, value)."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        d = config.d_model
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.config.n_heads, self.config.d_head).transpose(1, 2)  # (B, H, T, d_head)

    def forward(
        self,
        x: torch.Tensor,
        *,
        causal: bool = False,
        key_padding_mask: torch.Tensor | None = None,
        need_weights: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, T, D = x.shape
        q, k, v = (self.split_heads(proj(x)) for proj in (self.query, self.key, self.value))
        p = self.config.dropout if self.training else 0.0
        if need_weights:
            out, weights = attention(q, k, v, causal=causal, key_padding_mask=key_padding_mask, dropout_p=p)
        else:
            # Fused kernel; it would give NaN on a row with no visible key, which only an
            # all-pad sequence can produce: such input is refused by Encoder.forward.
            mask = additive_mask(T, causal=causal, key_padding_mask=key_padding_mask, dtype=x.dtype, device=x.device)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            weights = None
        return out.transpose(1, 2).reshape(B, T, D), weights  # (B, T, D), (B, H, T, T)
