"""Inside the block, one stage at a time: each stage's shape, formula and the code that computed it."""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass

from ...model.model import stage_function


def normalised_stages(norm: str, layer: int) -> frozenset[str]:
    """The stages of a block whose tensor is a LayerNorm's output: both norms, and the input when what comes in
    was normalised (post-norm: the embeddings' LayerNorm or the previous block's last one; pre-norm: only the
    embeddings', at layer 0)."""
    stages = {"norm_1", "norm_2"}
    if norm == "post" or layer == 0:
        stages.add("input")
    return frozenset(stages)


# The shapes a (rows, columns) tensor of one block could have on one sentence: T tokens, d features, d_ff FFN units.
SHAPE_CHOICES = ("T x d", "T x d_ff", "T x T", "d x d_ff")


FFN_STAGES = ("ffn_hidden", "ffn_activated", "ffn_output")  # the FFN's inside: what the FFN-shape question is about
FFN_WIDE_STAGES = FFN_STAGES[:2]  # d_ff wide


def shape_choice(shape: Sequence[int], n_tokens: int, d_model: int, d_ff: int) -> int:
    """The index in SHAPE_CHOICES of the first choice with this shape (when sizes coincide, the earlier one)."""
    sizes = {
        "T x d": (n_tokens, d_model),
        "T x d_ff": (n_tokens, d_ff),
        "T x T": (n_tokens, n_tokens),
        "d x d_ff": (d_model, d_ff),
    }
    for i, name in enumerate(SHAPE_CHOICES):
        if sizes[name] == tuple(shape):
            return i
    raise ValueError(f"shape {tuple(shape)} is none of {SHAPE_CHOICES} for T={n_tokens}, d={d_model}, d_ff={d_ff}")


# --- where each stage is computed: the source of the function that computes it ---------------


@dataclass(frozen=True)
class StageCode:
    """What the page shows under a stage: the function that computed it, read from the running code."""

    qualname: str  # e.g. "EncoderBlock._norm_1"
    path: str  # its file, from the repository's root: "encoder_core/model/model.py"
    first_line: int  # the line of that file the function starts on
    source: str  # its source, dedented


def stage_code(stage: str, norm: str) -> StageCode:
    """The source of the one function that computes this stage of a block with this placement (for "input",
    the placement's method, which runs the others in order)."""
    function = stage_function(stage, norm)
    lines, first_line = inspect.getsourcelines(function)
    path = function.__module__.replace(".", "/") + ".py"
    return StageCode(function.__qualname__, path, first_line, textwrap.dedent("".join(lines)).rstrip("\n"))


# Each stage as a formula (LaTeX). x is the block's input; T tokens, d features.
STAGE_FORMULAS = {
    "post": {
        "input": r"x \in \mathbb{R}^{T \times d}",
        "attention": r"a = \mathrm{MultiHead}(x) = "
        r"\mathrm{concat}_h\!\big(\mathrm{softmax}(Q_h K_h^\top/\sqrt{d_k})\,V_h\big)\,W^O + b^O",
        "residual_1": r"r_1 = x + a",
        "norm_1": r"h = \mathrm{LN}_1(r_1) = \gamma_1 \odot \frac{r_1 - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_1",
        "ffn_hidden": r"u = h\,W_1 + b_1 \in \mathbb{R}^{T \times 4d}",
        "ffn_activated": r"g = \mathrm{GELU}(u) = u\,\Phi(u)",
        "ffn_output": r"f = g\,W_2 + b_2 \in \mathbb{R}^{T \times d}",
        "residual_2": r"r_2 = h + f",
        "norm_2": r"y = \mathrm{LN}_2(r_2) \quad\text{(the block's output)}",
    },
    "pre": {
        "input": r"x \in \mathbb{R}^{T \times d}",
        "norm_1": r"n_1 = \mathrm{LN}_1(x) = \gamma_1 \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_1",
        "attention": r"a = \mathrm{MultiHead}(n_1) = "
        r"\mathrm{concat}_h\!\big(\mathrm{softmax}(Q_h K_h^\top/\sqrt{d_k})\,V_h\big)\,W^O + b^O",
        "residual_1": r"r_1 = x + a",
        "norm_2": r"n_2 = \mathrm{LN}_2(r_1)",
        "ffn_hidden": r"u = n_2\,W_1 + b_1 \in \mathbb{R}^{T \times 4d}",
        "ffn_activated": r"g = \mathrm{GELU}(u) = u\,\Phi(u)",
        "ffn_output": r"f = g\,W_2 + b_2 \in \mathbb{R}^{T \times d}",
        "residual_2": r"y = r_1 + f \quad\text{(the block's output, not normalised)}",
    },
}


def stage_formula(norm: str, stage: str, *, shape: bool = True) -> str:
    """A stage's formula (LaTeX); shape=False leaves out the "∈ R^{...}" that states its shape."""
    formula = STAGE_FORMULAS[norm][stage]
    return formula if shape else formula.split(r" \in ")[0]
