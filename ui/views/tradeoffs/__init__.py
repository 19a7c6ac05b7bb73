"""Figures, tables and sentences for the trade-offs lesson: pure builders, encoder_core results in.

One module per section of the lesson (pages/tradeoffs.py), in its order: reuse, length, quadratic, efficiency,
mismatch, roberta, pitfall_pads, pitfall_labels, pitfall_outputs; pitfalls holds what the three pitfall sections
share, page the list of sections. The names the pages, the class room and tests use are re-exported here."""

from .efficiency import EFFICIENCY_TEXT, corruption_text, loss_counts_chart, objectives_chart
from .length import cap_alt, cap_chart, cap_cut_text, cut_answer_text, length_text, trained_cap_text
from .mismatch import (
    CASE_NAMES,
    MISMATCH_TEXT,
    mismatch_alt,
    mismatch_answer_text,
    mismatch_chart,
    mismatch_moved_text,
    mismatch_table,
)
from .page import SECTIONS
from .pitfall_labels import averaging_chart, pitfall_leak_metric
from .pitfall_outputs import answer_words, pitfall_cls_metric, qa_example_text, truncation_chart
from .pitfall_pads import pitfall_mask_chart, pitfall_mask_metric, pitfall_pads_chart, pitfall_pads_metric
from .pitfalls import PITFALL_FIX, PITFALL_TEXT, PITFALL_TITLES
from .quadratic import quadratic_text, scaling_flops_chart, scaling_model_text, scaling_sizes_chart, timing_chart
from .reuse import (
    append_costs_alt,
    append_flops_chart,
    append_shift_chart,
    append_time_chart,
    flops_text,
    reuse_text,
    saving_text,
)
from .roberta import roberta_table, views_chart, views_summary_table, views_text
