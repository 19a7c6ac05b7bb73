"""Trade-offs and pitfalls: every cost of an encoder measured on the student's sentence.

Functions take a model (read only: run in eval mode under torch.inference_mode, never changed)
and token ids, and return small dataclasses. FLOPs are counted from a real run's shapes
(encoder_core.model.costs) and checked against closed forms by the tests; wall times are measured
only when asked (time_lengths, append_costs' seconds) and never asserted on.

One module per section of the lesson: reuse (1. no reuse of earlier work), length (2. the cap, truncation,
windows, attention's cost), sample_efficiency (3. which positions carry a loss), mismatch (4. the [MASK]
mismatch), dynamic_masking (5. RoBERTa's static vs dynamic masking), pitfalls (the loss averaged over every
position, truncation that cuts the answer out); common holds what they share. Every public name is
re-exported here.
"""

from __future__ import annotations

from .common import MAX_SENTENCE_TOKENS
from .dynamic_masking import ROBERTA_CHANGES, SCHEDULES, MaskingViews, expected_distinct, masking_views
from .length import (
    BYTES_PER_WEIGHT,
    TIMING_LENGTHS,
    WINDOW_OVERLAP,
    AttentionScaling,
    FirstCut,
    LengthCap,
    LengthTimings,
    attention_scaling,
    first_cut,
    length_cap,
    length_ids,
    time_lengths,
)
from .mismatch import (
    CASES,
    MISMATCH_MARGIN,
    CaseOutcome,
    MaskMismatch,
    case_margins,
    clear_position,
    eligible_positions,
    likeliest_case,
    mask_mismatch,
)
from .pitfalls import AnswerTruncation, LossAveraging, answer_truncation, loss_averaging
from .reuse import AppendCosts, AppendReuse, append_costs, append_one_token, appended_ids, cache_traps
from .sample_efficiency import OBJECTIVES, ObjectiveLabels, objective_labels, ordinary_word_ids, rtd_labels

__all__ = [
    "AnswerTruncation",
    "AppendCosts",
    "AppendReuse",
    "AttentionScaling",
    "BYTES_PER_WEIGHT",
    "CASES",
    "CaseOutcome",
    "FirstCut",
    "LengthCap",
    "LengthTimings",
    "LossAveraging",
    "MAX_SENTENCE_TOKENS",
    "MISMATCH_MARGIN",
    "MaskMismatch",
    "MaskingViews",
    "OBJECTIVES",
    "ObjectiveLabels",
    "ROBERTA_CHANGES",
    "SCHEDULES",
    "TIMING_LENGTHS",
    "WINDOW_OVERLAP",
    "answer_truncation",
    "append_costs",
    "append_one_token",
    "appended_ids",
    "attention_scaling",
    "cache_traps",
    "case_margins",
    "clear_position",
    "eligible_positions",
    "expected_distinct",
    "first_cut",
    "length_cap",
    "length_ids",
    "likeliest_case",
    "loss_averaging",
    "mask_mismatch",
    "masking_views",
    "objective_labels",
    "ordinary_word_ids",
    "rtd_labels",
    "time_lengths",
]
