"""Split d into heads, then concatenate and project with W_O: one head's mechanics, recomputed by hand."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...model.hooks import run_with_cache
from ...model.model import Encoder
from ...model.tokenizer import Encoding

# Recomputing a block's attention head by head agrees with the block up to float32 rounding.
MECHANICS_TOLERANCE = 1e-6


@dataclass
class HeadMechanics:
    """One block's multi-head attention, recomputed head by head from its weight matrices."""

    layer: int
    head: int
    tokens: list[str]
    block_input: torch.Tensor  # (T, D): what the attention sublayer reads
    q: torch.Tensor  # (T, d_head): the chosen head's queries
    k: torch.Tensor  # (T, d_head)
    v: torch.Tensor  # (T, d_head)
    weights: torch.Tensor  # (T, T): the chosen head's softmax(q k^T / sqrt(d_head))
    all_weights: torch.Tensor  # (H, T, T)
    head_outputs: torch.Tensor  # (H, T, d_head): each head's weights @ v
    concat: torch.Tensor  # (T, D): the head outputs side by side
    w_o: torch.Tensor  # (D, D) as nn.Linear stores it: (out, in)
    b_o: torch.Tensor  # (D,)
    projected: torch.Tensor  # (T, D) = concat @ W_O^T + b
    block_attention: torch.Tensor  # (T, D): the block's own "attention" stage from its trace
    max_abs_error: float  # max |projected - block_attention|
    weights_error: float  # max |all_weights - the weights the model returned|
    tolerance: float = MECHANICS_TOLERANCE  # the largest max_abs_error that still counts as agreement

    @property
    def agrees(self) -> bool:
        """True when the recomputation gives the block's own attention output (within the tolerance)."""
        return self.max_abs_error <= self.tolerance

    @property
    def n_heads(self) -> int:
        return self.all_weights.shape[0]

    @property
    def d_head(self) -> int:
        return self.q.shape[1]

    @property
    def n_weights(self) -> int:
        """Attention weights this layer computes on the sentence: one per head, query and key (H x T x T)."""
        return self.all_weights.numel()

    def weight_count_traps(self, n_layers: int) -> dict[str, int]:
        """What a student holding each named misconception would count instead of H x T x T: "layers", every layer's
        weights; "width", one weight per feature too (x d); "one head", a single T x T grid; "per token", one weight
        per head and token (H x T)."""
        H, T, _ = self.all_weights.shape
        d = self.w_o.shape[0]
        return {"layers": n_layers * self.n_weights, "width": self.n_weights * d, "one head": T * T, "per token": H * T}

    def slices(self) -> dict[str, torch.Tensor]:
        """The chosen head's Q, K and V, by name."""
        return {"Q": self.q, "K": self.k, "V": self.v}

    def strongest_key(self, query: int) -> tuple[int, float]:
        """(key position, weight) of the largest weight in the chosen head's row for this query."""
        row = self.weights[query]
        return int(row.argmax()), float(row.max())

    def shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """The tensors of the lesson with their real shapes, in the order they are computed."""
        return [
            ("block input x", tuple(self.block_input.shape)),
            ("W_Q, W_K, W_V (each)", (self.w_o.shape[0], self.w_o.shape[1])),
            (f"Q, K, V of head {self.head}", tuple(self.q.shape)),
            (f"weights of head {self.head}", tuple(self.weights.shape)),
            ("weights of all heads", tuple(self.all_weights.shape)),
            ("head outputs", tuple(self.head_outputs.shape)),
            ("concatenation", tuple(self.concat.shape)),
            ("W_O", tuple(self.w_o.shape)),
            ("output", tuple(self.projected.shape)),
        ]


@torch.inference_mode()
def head_mechanics(model: Encoder, enc: Encoding, layer: int, head: int) -> HeadMechanics:
    """Split the block's d_model into H heads of d_head, run each, concatenate, apply W_O.

    Computed from the weights (not from the model's attention code) and compared with what the model's
    own pass gives at the hook points attn.pattern and attn.out (W_O applied to its concatenation).
    """
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer must be in 0..{cfg.n_layers - 1}, got {layer}")
    if not 0 <= head < cfg.n_heads:
        raise ValueError(f"head must be in 0..{cfg.n_heads - 1}, got {head}")
    ids = torch.tensor([enc.ids], dtype=torch.long)
    segments = torch.tensor([enc.segments], dtype=torch.long)
    point = f"blocks.{layer}.attn"
    _, cache = run_with_cache(model, ids, segments, names=[f"{point}.in", f"{point}.pattern", f"{point}.out"])
    x = cache[f"{point}.in"][0]  # (T, D): what this layer's attention reads (the block decides: x or LN1(x))
    sub = model.encoder.layer[layer].attention
    H, dh = cfg.n_heads, cfg.d_head

    def per_head(linear: torch.nn.Linear) -> torch.Tensor:
        # Rows h*dh .. (h+1)*dh of the (out, in) weight produce head h's columns.
        w = linear.weight.view(H, dh, cfg.d_model)  # (H, d_head, D)
        b = linear.bias.view(H, 1, dh)  # (H, 1, d_head)
        return torch.einsum("td,hkd->htk", x, w) + b  # (H, T, d_head)

    q, k, v = per_head(sub.self.query), per_head(sub.self.key), per_head(sub.self.value)
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(dh), dim=-1)  # (H, T, T)
    head_outputs = weights @ v  # (H, T, d_head)
    concat = torch.cat(list(head_outputs), dim=-1)  # (T, H * d_head) = (T, D)
    w_o, b_o = sub.output.dense.weight, sub.output.dense.bias
    projected = concat @ w_o.T + b_o
    block_attention = cache[f"{point}.out"][0]
    return HeadMechanics(
        layer=layer,
        head=head,
        tokens=list(enc.tokens),
        block_input=x.clone(),
        q=q[head].clone(),
        k=k[head].clone(),
        v=v[head].clone(),
        weights=weights[head].clone(),
        all_weights=weights.clone(),
        head_outputs=head_outputs.clone(),
        concat=concat.clone(),
        w_o=w_o.detach().clone(),
        b_o=b_o.detach().clone(),
        projected=projected.clone(),
        block_attention=block_attention.clone(),
        max_abs_error=float((projected - block_attention).abs().max()),
        weights_error=float((weights - cache[f"{point}.pattern"][0]).abs().max()),
    )
