"""encoder_core: a small, inspectable BERT-style encoder. torch + numpy only.

MLM's corruption (mask_tokens, its actions and counts) is imported from encoder_core.objectives.mlm_masking."""

from .model.config import MAX_SEED, PRESETS, TEACHING_INIT_STD, EncoderConfig, preset
from .model.hooks import HookPoints, hook_names, run_with_cache, run_with_hooks
from .model.model import (
    POST_NORM_STAGES,
    PRE_NORM_STAGES,
    Embeddings,
    Encoder,
    EncoderBlock,
    EncoderOutput,
    build_encoder,
    init_bert_weights,
    param_count,
    sinusoidal_table,
    teaching_model,
)
from .model.output_heads import (
    MaskedLanguageModel,
    MLMHead,
    SequenceClassifier,
    SpanHead,
    TokenClassifier,
    cls_pool,
    mean_pool,
)
from .model.self_attention import SelfAttention, additive_mask, attention
from .model.tokenizer import Batch, Encoding, WordPieceTokenizer, WordTokenizer, clean_text, english_tokenizer
from .objectives.loss import LossBreakdown, loss_breakdown

__all__ = [
    "MAX_SEED",
    "TEACHING_INIT_STD",
    "POST_NORM_STAGES",
    "PRE_NORM_STAGES",
    "PRESETS",
    "Batch",
    "Embeddings",
    "Encoder",
    "EncoderBlock",
    "EncoderConfig",
    "EncoderOutput",
    "Encoding",
    "HookPoints",
    "LossBreakdown",
    "MLMHead",
    "MaskedLanguageModel",
    "SelfAttention",
    "SequenceClassifier",
    "SpanHead",
    "TokenClassifier",
    "WordPieceTokenizer",
    "WordTokenizer",
    "additive_mask",
    "attention",
    "build_encoder",
    "clean_text",
    "english_tokenizer",
    "hook_names",
    "cls_pool",
    "init_bert_weights",
    "loss_breakdown",
    "run_with_cache",
    "run_with_hooks",
    "mean_pool",
    "param_count",
    "preset",
    "sinusoidal_table",
    "teaching_model",
]
