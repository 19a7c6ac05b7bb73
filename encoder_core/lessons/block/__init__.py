"""The block lesson: one sentence through the embeddings and one whole encoder layer.

Every function returns a small dataclass of tensors and numbers. Functions that read a
shared model run under torch.inference_mode and never change it; the deep-stack study
builds its own throwaway models because it needs a backward pass.

One module per section (pages/block.py's tabs), all re-exported here: walk (what the sections
share: the walk through one layer, per-token statistics), input (Input), positions (Positions),
stage (Inside the block), trained (Trained FFN), activations (GELU vs ReLU), norms (Post- vs
pre-norm), equivalence (Against PyTorch), params (Parameters).
"""

from __future__ import annotations

from ...model.config import EncoderConfig, preset
from ...model.model import (
    EmbeddingParts,
    Encoder,
    EncoderBlock,
    build_encoder,
    sinusoidal_table,
    stage_function,
    stages_for,
)
from ...model.reference import FLOAT32_TOLERANCE, block_equivalence
from ...model.tokenizer import SPECIAL_TOKENS, WordPieceTokenizer
from .activations import ActivationCurves, ActiveUnits, activation_curves, active_units
from .equivalence import Equivalence, check_against_pytorch
from .input import TRAP_MIN_GAP, NormAffine, NormRow, first_word_position, norm_affine, norm_row, norm_std_traps
from .norms import (
    BERT_BASE_LOUDNESS,
    BERT_BASE_WIDTH,
    BERT_INIT_STD,
    DEEP_STACK_MAX_TOKENS,
    GROWTH_BAND,
    GROWTH_OUTCOMES,
    GROWTH_VISIBLE,
    INIT_CHOICES,
    STABLE_GRAD_SPREAD,
    DeepStackRun,
    DeepStackStudy,
    WeightMatch,
    compare_weights,
    deep_stack_study,
    growth_clear,
    growth_outcome,
    init_std_for,
    width_matched_std,
)
from .params import BlockParams, block_params
from .positions import LengthCap, PositionTables, cosine_similarity_matrix, length_cap, position_tables
from .stage import (
    FFN_STAGES,
    FFN_WIDE_STAGES,
    SHAPE_CHOICES,
    STAGE_FORMULAS,
    StageCode,
    normalised_stages,
    shape_choice,
    stage_code,
    stage_formula,
)
from .trained import (
    FFN_TOKEN_MARGIN,
    FFN_TOKEN_MIN_WORDS,
    FFN_TOKEN_OPTIONS,
    FfnNorms,
    FfnTokenChoice,
    ffn_norms_of,
    ffn_output_norms,
    ffn_token_choice,
    layer_order,
    word_positions,
)
from .walk import (
    BlockWalk,
    Span,
    TensorSummary,
    TokenStats,
    mean_norm_per_stage,
    span,
    span_of,
    summarize,
    summarize_parts,
    token_stats,
    walk_block,
)

__all__ = [
    "ActivationCurves",
    "ActiveUnits",
    "BERT_BASE_LOUDNESS",
    "BERT_BASE_WIDTH",
    "BERT_INIT_STD",
    "BlockParams",
    "BlockWalk",
    "DEEP_STACK_MAX_TOKENS",
    "DeepStackRun",
    "DeepStackStudy",
    "EmbeddingParts",
    "Encoder",
    "EncoderBlock",
    "EncoderConfig",
    "Equivalence",
    "FFN_STAGES",
    "FFN_TOKEN_MARGIN",
    "FFN_TOKEN_MIN_WORDS",
    "FFN_TOKEN_OPTIONS",
    "FFN_WIDE_STAGES",
    "FLOAT32_TOLERANCE",
    "FfnNorms",
    "FfnTokenChoice",
    "GROWTH_BAND",
    "GROWTH_OUTCOMES",
    "GROWTH_VISIBLE",
    "INIT_CHOICES",
    "LengthCap",
    "NormAffine",
    "NormRow",
    "PositionTables",
    "SHAPE_CHOICES",
    "SPECIAL_TOKENS",
    "STABLE_GRAD_SPREAD",
    "STAGE_FORMULAS",
    "Span",
    "StageCode",
    "TRAP_MIN_GAP",
    "TensorSummary",
    "TokenStats",
    "WeightMatch",
    "WordPieceTokenizer",
    "activation_curves",
    "active_units",
    "block_equivalence",
    "block_params",
    "build_encoder",
    "check_against_pytorch",
    "compare_weights",
    "cosine_similarity_matrix",
    "deep_stack_study",
    "ffn_norms_of",
    "ffn_output_norms",
    "ffn_token_choice",
    "first_word_position",
    "growth_clear",
    "growth_outcome",
    "init_std_for",
    "layer_order",
    "length_cap",
    "mean_norm_per_stage",
    "norm_affine",
    "norm_row",
    "norm_std_traps",
    "normalised_stages",
    "position_tables",
    "preset",
    "shape_choice",
    "sinusoidal_table",
    "span",
    "span_of",
    "stage_code",
    "stage_formula",
    "stage_function",
    "stages_for",
    "summarize",
    "summarize_parts",
    "token_stats",
    "walk_block",
    "width_matched_std",
    "word_positions",
]
