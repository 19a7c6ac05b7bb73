"""What the block lesson's page and several of its sections use: the page's notes, and a [T, width] tensor as a
heatmap and as a table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..figures import matrix_heatmap

NORM_LABELS = {"post": "post-norm (BERT)", "pre": "pre-norm"}

MAX_HEATMAP_HEIGHT = 720


def model_choice_note(choice: str, seed: int) -> str | None:
    """Why this lesson stays on the small seeded model when the sidebar asks for another encoder."""
    if choice == "small":
        return None
    return (
        f"This lesson runs on the small model with seed {seed}, whatever the sidebar's encoder: it compares a "
        "post-norm and a pre-norm block with the very same weights, and only the seeded model can be built "
        "both ways. Attention, Padding, Heads and Trade-offs run on the encoder you picked."
    )


def wait_note(section: str | None, what: str) -> str:
    """What a section says where it holds something back: the prediction to answer first (None: the one below)."""
    where = "below" if section is None else f"in “{section}”"
    return f"Answer the prediction {where} first, or skip it: {what}."


def _values(x) -> np.ndarray:
    """A tensor's values in its own dtype: a float32 table stays float32, as the CSV download shows it."""
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def tensor_heatmap(values, tokens: Sequence[str], *, title: str, x_title: str = "feature") -> go.Figure:
    """A [T, width] tensor, one row per token; the height is capped so a long input stays on one screen."""
    fig = matrix_heatmap(values, tokens, title=title, x_title=x_title)
    if fig.layout.height > MAX_HEATMAP_HEIGHT:
        fig.layout.height = MAX_HEATMAP_HEIGHT
    return fig


def tensor_table(values, tokens: Sequence[str], prefix: str = "f") -> pd.DataFrame:
    """A [T, width] tensor: a token column, then one column per feature (f0, f1, ... or u0, u1, ...)."""
    arr = _values(values)
    frame = pd.DataFrame(arr, columns=[f"{prefix}{j}" for j in range(arr.shape[1])])
    frame.insert(0, "token", list(tokens))
    return frame
