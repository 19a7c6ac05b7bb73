"""Counting the block's parameters."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from ...model.config import EncoderConfig
from ...model.model import EncoderBlock


@dataclass
class BlockParams:
    d_model: int
    d_ff: int
    n_layers: int
    attention: int  # counted from the modules: W_Q, W_K, W_V, W_O and their biases
    ffn: int  # W_1, b_1, W_2, b_2
    norms: int  # two LayerNorms: gamma and beta each
    total: int  # param_count of the whole block
    attention_formula: int  # 4 d^2 + 4 d
    ffn_formula: int  # 2 d d_ff + d_ff + d
    norms_formula: int  # 4 d

    @property
    def total_formula(self) -> int:
        return self.attention_formula + self.ffn_formula + self.norms_formula

    @property
    def ffn_share(self) -> float:
        """The FFN's fraction of the block's parameters."""
        return self.ffn / self.total

    @property
    def stack_total(self) -> int:
        """Every block of the config's stack, before the embeddings."""
        return self.total * self.n_layers


def block_params(config: EncoderConfig) -> BlockParams:
    """Count a block's parameters from its modules and from the formula. Built on the meta device:
    the module tree and every shape are real, but no memory is allocated for the values."""
    with torch.device("meta"):
        block = EncoderBlock(config)

    def count(*modules: nn.Module) -> int:
        return sum(p.numel() for m in modules for p in m.parameters())

    d, d_ff = config.d_model, config.d_ff
    return BlockParams(
        d_model=d,
        d_ff=d_ff,
        n_layers=config.n_layers,
        attention=count(block.attention.self, block.attention.output.dense),
        ffn=count(block.intermediate.dense, block.output.dense),
        norms=count(block.attention.output.LayerNorm, block.output.LayerNorm),
        total=count(block),
        attention_formula=4 * d * d + 4 * d,
        ffn_formula=2 * d * d_ff + d_ff + d,
        norms_formula=4 * d,
    )
