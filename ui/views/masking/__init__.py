"""Figures and tables for the masked-language-modelling lesson. Pure: core results in, plotly Figure or
pandas DataFrame out; every word shown for a core code is written here.

One module per section of the lesson (pages/masking.py), in its order: draw, shapes, loss, fill, leakage,
nsp; page holds what the page says above the sections. The names the pages and tests use are re-exported here."""

from .draw import (
    EXACT_COUNT_HELP,
    FATE_COLOURS,
    FATE_WORDS,
    LABELS_HELD,
    WHY_NOT_ALWAYS_MASK,
    count_metrics,
    draw_chart,
    draw_table,
    every_fate_text,
    nothing_chosen_text,
    rule_text,
    split_bar,
    split_chart,
    split_table,
    what_happened,
    worked_count_text,
)
from .fill import (
    FILL_MODEL_NAMES,
    OTHER_WORDS,
    PIECE_COLOUR,
    PIECE_MARK,
    TRY_WORD,
    blanks_narrative,
    context,
    fill_alt,
    fill_chart,
    fill_figure,
    fill_model_name,
    fill_model_text,
    fill_plan_notes,
    fill_position_notice,
    guess_rank_text,
    hidden_word_text,
    model_quality_text,
    other_fill_model,
    other_fill_model_label,
    pieces_text,
    ranking_text,
    shown_blanks_text,
    top_k_bars,
    top_k_table,
)
from .leakage import (
    LEAKAGE_INTRO,
    curves_table,
    leakage_accuracy_chart,
    leakage_loss_chart,
    leakage_metrics,
    leakage_progress_text,
    leakage_request_text,
    leakage_table,
    leakage_text,
)
from .loss import (
    LOSS_NARRATIVE,
    NO_LOSS_TEXT,
    count_example_chart,
    count_example_text,
    loss_bars,
    loss_chart,
    loss_metrics,
    loss_positions_text,
    loss_table,
    mean_text,
)
from .nsp import NSP_NARRATIVE, nsp_table, nsp_text
from .page import mlm_choice_text
from .shapes import SHAPES_HELD, exercise_question, shape_chain, shape_table
