"""Section 8, counting the block's parameters: counted from the modules, next to the formula."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from encoder_core.lessons.block import BlockParams

PARAM_COUNT_COLUMNS = ("counted from the modules", "from the formula")


def param_table(counts_by_model: Mapping[str, BlockParams]) -> pd.DataFrame:
    """Per model: each part of one block counted from the modules next to its formula, then the whole block."""
    rows = []
    for name, c in counts_by_model.items():
        rows += [
            (name, "attention: W_Q, W_K, W_V, W_O + biases", "4d² + 4d", c.attention, c.attention_formula),
            (name, "FFN: W₁, b₁, W₂, b₂", "2·d·d_ff + d_ff + d", c.ffn, c.ffn_formula),
            (name, "two LayerNorms: γ, β", "4d", c.norms, c.norms_formula),
            (name, f"whole block (d={c.d_model}, d_ff={c.d_ff})", "sum", c.total, c.total_formula),
        ]
    return pd.DataFrame(rows, columns=["model", "part", "formula", *PARAM_COUNT_COLUMNS])


def param_note(counts: Mapping[str, BlockParams]) -> str:
    """The parameter table read aloud: BERT-base's FFN share, and this lesson's block when it is in the table."""
    base = counts["bert-base"]
    small = counts.get("small")
    ours = f" This lesson's block has {small.total:,}." if small is not None else ""
    return (
        f"The FFN holds about two thirds of a block: {base.ffn_share:.0%} for BERT-base, whose block has "
        f"{base.total:,} parameters ({base.stack_total:,} for its {base.n_layers} layers, before embeddings).{ours} "
        "Every number above is counted from a block built with that config."
    )
