"""Figures and tables of the heads lesson, and the sentences that read their numbers out (each
figure's text alternative, a result's summary): pure builders, numbers or encoder_core results in ->
plotly Figure, pandas DataFrame, text or a Chart (all three together) out (no model runs).

One module per section of the lesson (pages/heads.py), in its order: split, concat, grid, labels, pieces,
vectors; common holds what several sections (and the page itself) use. The names the pages, tests and
benchmarks use are re-exported here."""

from .common import ALL_UNKNOWN_TEXT, token_table, wait_note, weights_table
from .concat import (
    concat_check_text,
    concat_text,
    concatenation_chart,
    concatenation_figure,
    w_o_chart,
    w_o_figure,
    w_o_table,
)
from .grid import (
    grid_chart,
    grid_gaps,
    grid_intro,
    head_grid,
    head_map_chart,
    no_previous_note,
    previous_token_text,
    top_key_chart,
    top_key_text,
)
from .labels import averages_chart, averages_table, labels_intro, labels_table, sinks_reading, sinks_text
from .pieces import (
    PIECES_INTRO,
    fragmentation_table,
    layer_head_table,
    pieces_map,
    pieces_map_alt,
    pieces_map_chart,
    same_word_alt,
    same_word_chart,
    same_word_text,
)
from .split import (
    own_weights_alt,
    own_weights_chart,
    own_weights_figure,
    shapes_table,
    slice_alt,
    slice_charts,
    slice_figure,
    split_text,
    weight_count_text,
)
from .vectors import (
    BANK_READING,
    VECTORS_INTRO,
    bank_alt,
    bank_chart,
    bank_figure,
    bank_intro,
    bank_table,
    similarities_text,
    similarity_alt,
    similarity_charts,
    similarity_table,
)
