"""The block lesson's predictions: what the student is asked, and the wrong idea behind each wrong answer."""

from __future__ import annotations

from encoder_core.lessons.block import GROWTH_OUTCOMES, SHAPE_CHOICES
from ui.frame.predict import Option, Question


def layernorm_std(token: str, position: int, std_before: float) -> Question:
    """The embeddings' LayerNorm, asked about one row whose spread before it the page quotes."""
    return Question(
        "block",
        "norm-std",
        f"Before the LayerNorm, the row of “{token}” (position {position}) has a standard deviation of "
        f"{std_before:.3f} over its features. What is its standard deviation after the LayerNorm?",
        concept="block_layernorm_output",
        tolerance=0.2,
        too_high="LayerNorm divides each row by its own spread, so the spread comes out as 1 (times the gain γ): "
        "√d is the row's length, not its spread.",
        too_low="LayerNorm does not keep or shrink a row's spread: it divides the row by it, so the spread comes out "
        "as 1 (times the gain γ).",
    )


SHAPE_SYMBOLS = {"T x d": "T × d", "T x d_ff": "T × 4d", "T x T": "T × T", "d x d_ff": "d × 4d"}
SHAPE_MISTAKES = {
    "T x d": "The FFN widens each token first: W₁ maps its d features to 4d units, and only W₂ brings them back to d.",
    "T x d_ff": "Only the FFN's inside is 4d wide; what it hands back to the residual sum is d wide.",
    "T x T": "A T × T grid is attention's, token against token; the FFN works on each token alone.",
    "d x d_ff": "d × 4d is the weight W₁, not what it produces: the output keeps one row per token.",
}


def ffn_shape(n_tokens: int, d_model: int, d_ff: int) -> Question:
    """The shape of the FFN's hidden layer on this sentence; options in the order of core.SHAPE_CHOICES."""
    sizes = {
        "T x d": (n_tokens, d_model),
        "T x d_ff": (n_tokens, d_ff),
        "T x T": (n_tokens, n_tokens),
        "d x d_ff": (d_model, d_ff),
    }
    return Question(
        "block",
        "ffn-shape",
        f"Your sentence has T = {n_tokens} tokens and the block is d = {d_model} wide. What shape is the FFN's "
        "hidden layer u = h·W₁ + b₁?",
        tuple(Option(f"{SHAPE_SYMBOLS[c]} = {sizes[c]}", SHAPE_MISTAKES[c]) for c in SHAPE_CHOICES),
        concept="block_stage_shape",
    )


GROWTH_OPTIONS = {
    "post": Option(
        "post-norm's",
        "A post-norm block ends on a LayerNorm, which brings every token's vector back to length √d, so its stream "
        "cannot grow.",
    ),
    "pre": Option(
        "pre-norm's",
        "A pre-norm stream grows only as fast as its blocks add to it, and blocks as quiet as BERT's at its start "
        "add almost nothing.",
    ),
    "both": Option(
        "both",
        "Every post-norm block ends on a LayerNorm, which resets the stream to length √d; only the pre-norm stream "
        "is free to grow.",
    ),
    "neither": Option(
        "neither",
        "Nothing rescales a pre-norm stream between blocks: louder blocks each add to it, and it keeps growing "
        "until the final LayerNorm.",
    ),
}

DEEP_GROWTH = Question(
    "block",
    "deep-growth",
    "Both stacks start from the same embeddings, each token's vector of length √d. After the last block, whose "
    "residual stream has grown by a tenth or more?",
    tuple(GROWTH_OPTIONS[o] for o in GROWTH_OUTCOMES),
    concept="block_final_norm",
)
