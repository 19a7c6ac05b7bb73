"""What several sections of the heads lesson use: the page's own notes, shapes, matrices as tables, one head's slice
as a heatmap."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..figures import matrix_heatmap

SELECTED_COLOUR = "#ff7f0e"
MAP_MAX_HEIGHT = 1100  # px: a long sentence's single map stays within a screen or two

ALL_UNKNOWN_TEXT = (
    "Every word became [UNK]: the model sees no content, only the unknown-word token. "
    "The maps below show how it attends when it knows nothing about the words."
)


def wait_note(section: str | None, what: str) -> str:
    """What a section says where it holds something back: the prediction to answer first (None: the ones above)."""
    where = "above" if section is None else f"in “{section}”"
    return f"Answer the predictions {where} first, or skip them: {what}."


def shape_text(shape: Iterable[int]) -> str:
    return " × ".join(str(n) for n in shape)


def _short(text: str, n: int = 28) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def token_columns(tokens: Sequence[str]) -> list[str]:
    return [f"{i} {t}" for i, t in enumerate(tokens)]


def matrix_table(
    matrix, rows: Iterable, row_name: str, col_names: Sequence[str] | None = None, *, numbered: bool = True
) -> pd.DataFrame:
    """The numbers of a matrix as a table: one named row per token (or feature), string column names."""
    values = np.asarray(matrix)  # a tensor keeps its own dtype, so the rounding is the one shown
    cols = col_names if col_names is not None else [f"d{j}" for j in range(values.shape[1])]
    df = pd.DataFrame(values, columns=cols).round(4)
    df.insert(0, row_name, [f"{i} {r}" if numbered else str(r) for i, r in enumerate(rows)])
    return df


def token_table(matrix, tokens: Sequence[str]) -> pd.DataFrame:
    """A (T, features) activation: one row per token."""
    return matrix_table(matrix, tokens, "token")


def weights_table(weights, tokens: Sequence[str]) -> pd.DataFrame:
    """A (T, T) attention map: one row per query, one column per key."""
    return matrix_table(weights, tokens, "query", token_columns(tokens))


def head_slices(matrix, tokens: Sequence[str], *, title: str, x_title: str) -> go.Figure:
    """A [T, d_head] (or [T, D]) activation: tokens are rows, features columns, centred at 0."""
    fig = matrix_heatmap(
        matrix, tokens, title=title, x_title=x_title, y_title="token", height=max(260, 22 * len(tokens) + 130)
    )
    # "feature" in the hover whatever the columns are called.
    fig.update_traces(hovertemplate="token %{y}, feature %{x}: %{z:.3f}<extra></extra>")
    return fig
