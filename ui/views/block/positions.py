"""Section 2, positions: the sinusoid table, and how similar positions are, sine waves against a learned table."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.block import PositionTables

from ..figures import Chart, matrix_heatmap
from .common import _values

COSINE = (-1.0, 1.0)  # a cosine similarity's fixed colour range

POSITION_HEATMAP_HEIGHT = 420

POSITIONS_INTRO = (
    "Attention on its own ignores order: shuffle the tokens and each one gets the same mix. The position "
    "row is what tells *cat at 2* from *cat at 5*. BERT learns its position table; the original Transformer "
    "used a fixed table of sine and cosine waves, one frequency per pair of features, fast on the left, slow "
    "on the right."
)
POSITIONS_CAP = (
    "The sine formula itself has no last row, so a sinusoidal model could in principle be given more "
    "positions; a learned table cannot, and this encoder refuses any input longer than its table either way."
)


def position_heatmap(values, *, title: str, x_title: str, zrange: tuple[float, float] | None = None) -> go.Figure:
    """A table indexed by position (numbered rows): the sinusoid table, or a position-by-position similarity.
    zrange=(-1, 1) for a cosine; otherwise the scale fits the values, centred on 0."""
    return matrix_heatmap(
        values, None, title=title, x_title=x_title, y_title="position", zrange=zrange, height=POSITION_HEATMAP_HEIGHT
    )


def position_table(table) -> pd.DataFrame:
    """A (positions, d) table: one row per position, columns f0, f1, ..."""
    return pd.DataFrame(_values(table)).rename(columns=lambda j: f"f{j}")


def similarity_table(similarity) -> pd.DataFrame:
    """A (positions, positions) similarity: rows and columns numbered by position."""
    return pd.DataFrame(_values(similarity))


def sinusoid_heatmap(pos: PositionTables) -> go.Figure:
    return position_heatmap(
        pos.sinusoid, title=f"sinusoidal table, first {pos.n_positions} positions", x_title="feature"
    )


def sinusoid_chart(pos: PositionTables) -> Chart:
    n_features = pos.sinusoid.shape[1]
    alt = f"Sine and cosine waves for {pos.n_positions} positions and {n_features} features, values in [-1, 1]."
    return Chart(sinusoid_heatmap(pos), alt, position_table(pos.sinusoid))


def sinusoid_similarity_heatmap(pos: PositionTables) -> go.Figure:
    return position_heatmap(
        pos.sinusoid_similarity, title="cosine similarity between sinusoid positions", x_title="position", zrange=COSINE
    )


def sinusoid_similarity_chart(pos: PositionTables) -> Chart:
    alt = (
        f"Neighbouring sinusoid positions are similar (cos(0, 1) = {pos.neighbour_cosine:.3f}), "
        f"distant ones less so (cos(0, {pos.n_positions - 1}) = {pos.farthest_cosine:.3f})."
    )
    return Chart(sinusoid_similarity_heatmap(pos), alt, similarity_table(pos.sinusoid_similarity))


def learned_similarity_heatmap(pos: PositionTables) -> go.Figure:
    """Only for a model with a learned position table (pos.learned_similarity not None)."""
    return position_heatmap(
        pos.learned_similarity,
        title="cosine similarity between this model's learned positions",
        x_title="position",
        zrange=COSINE,
    )


def learned_similarity_chart(pos: PositionTables) -> Chart:
    """Only for a model with a learned position table (pos.learned_similarity not None)."""
    alt = (
        f"The untrained learned table: off-diagonal similarities average {pos.learned_off_diagonal_mean:.3f} "
        f"(largest {pos.learned_off_diagonal_largest:.3f}); nearness has to be learned in training."
    )
    return Chart(learned_similarity_heatmap(pos), alt, similarity_table(pos.learned_similarity))
