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
from .hooks import NO_HOOK, WEIGHT_HOOKS, Hook


def additive_mask(
    T: int,
    *,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
    dtype: torch.dtype = torch.float32,
    device=None,
) -> torch.Tensor | None:
    """Float mask broadcastable to (B, H, T, T): 0 where attending is allowed, -inf where not.

    The one rule for which keys a query may read, every path goes through it (the weights path, the fused
    kernel, and the hooks' key_mask, which Encoder.forward adds to key_padding_mask).
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
    hook: Hook = NO_HOOK,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k) + mask) v.  q, k, v: (..., T, d_k).  Returns (output, weights).

    weights[..., i, j] is how much query i takes from key j: rows are queries, columns keys.
    hook sees the scores before the mask ("attn.scores") and the weights before dropout ("attn.pattern").
    """
    T, d_k = q.shape[-2], q.shape[-1]
    scores = hook("attn.scores", q @ k.transpose(-2, -1) / math.sqrt(d_k))  # (..., T, T)
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
    weights = hook("attn.pattern", weights)
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
        head_mask: torch.Tensor | None = None,
        hook: Hook = NO_HOOK,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x (B, T, D) -> (the heads' outputs side by side (B, T, D), weights (B, H, T, T) or None).

        head_mask (H,) or (B, H) scales each head's output before W_O mixes the heads (0 knocks a head out),
        as transformers' head_mask does; the weights returned are the softmax's, before it.
        hook: "attn.scores", "attn.pattern" (see attention()) and "attn.head_out" (B, H, T, d_head).
        """
        B, T, D = x.shape
        q, k, v = (self.split_heads(proj(x)) for proj in (self.query, self.key, self.value))
        p = self.config.dropout if self.training else 0.0
        if need_weights or any(hook.wants(name) for name in WEIGHT_HOOKS):
            out, weights = attention(q, k, v, causal=causal, key_padding_mask=key_padding_mask, dropout_p=p, hook=hook)
        else:
            # Fused kernel; it would give NaN on a row with no visible key, which only an
            # all-pad sequence can produce: such input is refused by Encoder.forward.
            mask = additive_mask(T, causal=causal, key_padding_mask=key_padding_mask, dtype=x.dtype, device=x.device)
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
            weights = None
        if head_mask is not None:
            out = out * head_mask.to(out.dtype).reshape(*head_mask.shape, 1, 1)  # (B, H, T, d_head)
        out = hook("attn.head_out", out)
        weights = weights if need_weights else None
        return out.transpose(1, 2).reshape(B, T, D), weights  # (B, T, D), (B, H, T, T)
