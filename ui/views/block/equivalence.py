"""Section 7, checked against PyTorch: the block next to nn.TransformerEncoderLayer."""

from __future__ import annotations


def equivalence_intro(flag: str) -> str:
    return (
        "An independent check: PyTorch's own nn.TransformerEncoderLayer, given a copy of this block's weights "
        f'(W_Q, W_K, W_V stacked into its in_proj), activation="gelu", {flag}, dropout 0, run on the same input.'
    )


def short_sci(x: float) -> str:
    """1e-05 -> "1e-5": the tolerance written as the text around it writes it."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"
