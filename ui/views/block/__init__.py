"""Figures and tables for the block lesson: pure functions, encoder_core results in -> plotly Figure or
pandas DataFrame out, and the Charts the page shows (each figure with its text alternative and its numbers);
and the stage names and notes the page's narrative reads.

One module per section of the lesson (pages/block.py), in its order: embeddings (the input), positions, stage, trained,
activations, norms, equivalence, params; common holds what the page and several sections use. The names the
pages, the class room and tests use are re-exported here."""

from .activations import (
    ACTIVATIONS_INTRO,
    HELD_WIDTH,
    activation_chart,
    activation_table,
    active_units_lead,
    active_units_metrics,
    active_units_table,
)
from .common import NORM_LABELS, model_choice_note, tensor_table, wait_note
from .embeddings import embedding_alts, embedding_charts, embedding_tables, input_intro, norm_row_note
from .equivalence import equivalence_intro, short_sci
from .norms import (
    GROWTH_TOO_CLOSE,
    deep_stack_charts,
    deep_stack_figure,
    deep_stack_reading,
    deep_stack_setup,
    deep_stack_tables,
    init_labels,
    residual_alt,
    same_weights_note,
)
from .params import PARAM_COUNT_COLUMNS, param_note, param_table
from .positions import (
    POSITIONS_CAP,
    POSITIONS_INTRO,
    learned_similarity_chart,
    learned_similarity_heatmap,
    position_table,
    similarity_table,
    sinusoid_chart,
    sinusoid_heatmap,
    sinusoid_similarity_chart,
    sinusoid_similarity_heatmap,
)
from .stage import (
    HELD_FFN,
    HELD_NORM,
    STAGE_LABELS,
    ffn_shape_note,
    stage_chart,
    stage_labels,
    stage_note,
    stage_profile_chart,
    stage_profile_table,
    stage_stats_chart,
    stage_table,
    stats_table,
)
from .trained import ffn_token_chart, ffn_token_text, no_clear_ffn_note, trained_intro
