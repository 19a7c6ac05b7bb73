"""What several sections of the outputs lesson use: the tasks' and starting points' names, the page's note on the
model, and a row of coloured cells (the tagging labels and the tags)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from encoder_core.finetune.tasks import TAGS

from ..figures import CATEGORICAL, CELLS_ARE_WORDS, token_labels

TASK_NAMES = {
    "sentence": "sentence classification",
    "pair": "sentence-pair classification",
    "tagging": "tagging",
    "qa": "extractive question answering",
}
START_NAMES = {
    "finetune": "pre-trained, fine-tuned end to end",
    "frozen": "pre-trained, encoder frozen (linear probe)",
    "scratch": "same architecture, random weights",
}

TAG_COLOURS = dict(zip(TAGS, ("#d9d9d9",) + CATEGORICAL[:5]))

MODEL_TEXT = (
    "Every head here is fine-tuned on a copy of the lab's trained MLM, whatever the sidebar's encoder; the pooling "
    "section also reads all-MiniLM-L6-v2."
)


def metric_name(task: str) -> str:
    return "exact match" if task == "qa" else "accuracy"


def coloured_cells(
    words: Sequence[str],
    codes: Sequence[int],
    colours: Sequence[str],
    text: Sequence[str],
    *,
    row: str,
    title: str,
    x_title: str,
    hover: str = "%{text}",
    customdata=None,
) -> go.Figure:
    """One row of cells, one per word: cell i in colours[codes[i]] with text[i] written in it, so colour is
    never the only cue. hover: what follows "<word>: " when pointing at a cell."""
    n = len(colours)
    scale = [[edge, colour] for i, colour in enumerate(colours) for edge in (i / n, (i + 1) / n)]
    fig = go.Figure(
        go.Heatmap(
            z=[[code + 0.5 for code in codes]],
            x=token_labels(words),
            y=[row],
            text=[list(text)],
            texttemplate="%{text}",
            customdata=customdata,
            zmin=0,
            zmax=n,
            colorscale=scale,
            showscale=False,
            xgap=3,
            hovertemplate=f"%{{x}}: {hover}<extra></extra>",
            meta=CELLS_ARE_WORDS,  # the words are the chart: lecture mode shrinks them, never drops them
        )
    )
    fig.update_layout(
        title={"text": title},
        xaxis={"title": {"text": x_title}, "showticklabels": False},
        yaxis={"title": {"text": row}, "showticklabels": False},
        margin={"l": 52, "r": 10, "t": 60, "b": 52},  # space for the axis titles: plotly draws once
        height=190,
    )
    return fig
