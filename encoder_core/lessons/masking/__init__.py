"""The masked-language-modelling lesson: one draw of BERT's corruption, the model's pass over it,
where the loss lives, and a fill-mask query built from a chosen word.

Everything here is computed with encoder_core's own masking (mask_tokens), loss (loss_breakdown)
and model; the page only lays it out.

One module per section (pages/masking.py's tabs), all re-exported here: draw (Choose, corrupt,
label), shapes (Shapes), loss (The loss), fill (Fill in the blank), leakage (Leakage), nsp
(Next-sentence prediction).
"""

from __future__ import annotations

from ...data.corpus import nsp_pairs
from ...data.lexicon import SPECIAL_TOKENS
from ...model.config import EncoderConfig
from ...model.output_heads import MaskedLanguageModel
from ...model.tokenizer import MASK, WordPieceTokenizer
from ...objectives.loss import LossBreakdown, loss_breakdown
from .draw import (
    ACTION_FATES,
    CHOSEN_FATES,
    FATES,
    REASONS,
    DrawPosition,
    MaskingDraw,
    draw_masks,
    draw_positions,
    never_eligible_reason,
    rate_showing_every_fate,
)
from .fill import (
    FILL_FALLBACKS,
    GLUED,
    GUESS_PROBLEMS,
    MAX_BLANKS,
    FillMaskView,
    FillPlan,
    GuessRank,
    MaskPrediction,
    fill_mask_view,
    fill_query,
    is_piece,
    last_hideable_word,
    mask_word,
    plan_fill,
    rank_guess,
    rank_in,
)
from .leakage import LEAKAGE_RUNS, LeakageSummary, leakage_estimate, leakage_run_at, running_mean, summarise_leakage
from .loss import (
    COUNT_EXAMPLE_HIDDEN,
    COUNT_EXAMPLE_TEXT,
    LOSS_MARGIN,
    LOSS_SETS,
    MAX_LOSS_OPTIONS,
    CountExample,
    HardestChoice,
    count_example,
    hardest_choice,
    loss_outcome,
    loss_positions,
    loss_set_positions,
    matching_loss_sets,
)
from .nsp import NSPExample, nsp_examples
from .shapes import EXERCISE_SHAPE, SHAPE_STEPS, MLMForward, mlm_forward, shape_exercise

__all__ = [
    "ACTION_FATES",
    "CHOSEN_FATES",
    "COUNT_EXAMPLE_HIDDEN",
    "COUNT_EXAMPLE_TEXT",
    "CountExample",
    "DrawPosition",
    "EXERCISE_SHAPE",
    "EncoderConfig",
    "FATES",
    "FILL_FALLBACKS",
    "FillMaskView",
    "FillPlan",
    "GLUED",
    "GUESS_PROBLEMS",
    "GuessRank",
    "HardestChoice",
    "LEAKAGE_RUNS",
    "LOSS_MARGIN",
    "LOSS_SETS",
    "LeakageSummary",
    "LossBreakdown",
    "MASK",
    "MAX_BLANKS",
    "MAX_LOSS_OPTIONS",
    "MLMForward",
    "MaskPrediction",
    "MaskedLanguageModel",
    "MaskingDraw",
    "NSPExample",
    "REASONS",
    "SHAPE_STEPS",
    "SPECIAL_TOKENS",
    "WordPieceTokenizer",
    "count_example",
    "draw_masks",
    "draw_positions",
    "fill_mask_view",
    "fill_query",
    "hardest_choice",
    "is_piece",
    "last_hideable_word",
    "leakage_estimate",
    "leakage_run_at",
    "loss_breakdown",
    "loss_outcome",
    "loss_positions",
    "loss_set_positions",
    "mask_word",
    "matching_loss_sets",
    "mlm_forward",
    "never_eligible_reason",
    "nsp_examples",
    "nsp_pairs",
    "plan_fill",
    "rank_guess",
    "rank_in",
    "rate_showing_every_fate",
    "running_mean",
    "shape_exercise",
    "summarise_leakage",
]
