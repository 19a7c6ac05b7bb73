"""PyTorch's own encoder layer holding a block's weights: an independent check of EncoderBlock.

nn.TransformerEncoderLayer computes the same function as EncoderBlock when it gets the
same weights, dropout 0, GELU/ReLU and the same norm placement. block_equivalence gives
the largest difference between the two on one input, a number a page can show live.
"""

from __future__ import annotations

import torch
from torch import nn

from .model import EncoderBlock

# float32 rounding alone keeps the two within this on one block at BERT's scale; a wiring
# mistake (a swapped weight, a misplaced LayerNorm) lands orders of magnitude above it.
FLOAT32_TOLERANCE = 1e-5


def to_torch_layer(block: EncoderBlock) -> nn.TransformerEncoderLayer:
    """A new nn.TransformerEncoderLayer (batch_first, dropout 0, eval mode) with a copy of block's weights."""
    cfg = block.config
    ref_param = block.attention.self.query.weight
    layer = nn.TransformerEncoderLayer(
        cfg.d_model,
        cfg.n_heads,
        cfg.d_ff,
        dropout=0.0,
        activation=cfg.activation,
        layer_norm_eps=cfg.layer_norm_eps,
        batch_first=True,
        norm_first=cfg.norm == "pre",
        device=ref_param.device,
        dtype=ref_param.dtype,
    )
    sa = block.attention.self
    pairs = {
        # nn keeps W_Q, W_K, W_V as one (3D, D) matrix, stacked in that order.
        "self_attn.in_proj_weight": torch.cat([sa.query.weight, sa.key.weight, sa.value.weight]),
        "self_attn.in_proj_bias": torch.cat([sa.query.bias, sa.key.bias, sa.value.bias]),
        "self_attn.out_proj.weight": block.attention.output.dense.weight,
        "self_attn.out_proj.bias": block.attention.output.dense.bias,
        "linear1.weight": block.intermediate.dense.weight,
        "linear1.bias": block.intermediate.dense.bias,
        "linear2.weight": block.output.dense.weight,
        "linear2.bias": block.output.dense.bias,
        "norm1.weight": block.attention.output.LayerNorm.weight,
        "norm1.bias": block.attention.output.LayerNorm.bias,
        "norm2.weight": block.output.LayerNorm.weight,
        "norm2.bias": block.output.LayerNorm.bias,
    }
    layer.load_state_dict({k: v.detach().clone() for k, v in pairs.items()}, strict=True)
    return layer.eval()


@torch.no_grad()
def block_equivalence(
    block: EncoderBlock,
    x: torch.Tensor,
    key_padding_mask: torch.Tensor | None = None,
    *,
    causal: bool = False,
) -> float:
    """Max |EncoderBlock(x) - nn.TransformerEncoderLayer(x)| over real (non-pad) token rows.

    x (B, T, D); key_padding_mask (B, T) bool, True = pad. Both run in eval mode (no dropout).
    Pad rows are left out: PyTorch's fused inference kernel need not compute them.
    """
    ref = to_torch_layer(block)
    was_training = block.training
    if was_training:  # an eval-mode block (a shared, cached model) is never touched
        block.eval()
    try:
        ours, _, _ = block(x, causal=causal, key_padding_mask=key_padding_mask, need_weights=False)
    finally:
        if was_training:
            block.train()
    T = x.shape[1]
    # bool like the padding mask (True = blocked): nn warns when the two mask types differ.
    src_mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1) if causal else None
    theirs = ref(x, src_mask=src_mask, src_key_padding_mask=key_padding_mask, is_causal=causal)
    diff = (ours - theirs).abs()
    if key_padding_mask is not None:
        diff = diff[~key_padding_mask]
    return float(diff.max()) if diff.numel() else 0.0
