"""Sections 2 and 3, classify a sentence and a sentence pair: the trained classifier's answer on the student's input."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.outputs import ClassPrediction

from ..figures import PAIR, Chart, as_array, esc
from .common import TASK_NAMES


def class_chart(pred: ClassPrediction, task: str) -> Chart:
    labels = [esc(label) for label in pred.labels]
    fig = go.Figure(
        go.Bar(
            x=as_array(pred.probabilities),
            y=labels,
            orientation="h",
            marker_color=[PAIR[0] if label == pred.best else "#9fbfdc" for label in pred.labels],
            text=[f"{p:.1%}" for p in pred.probabilities],
            textposition="outside",
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": f"The trained {esc(TASK_NAMES[task])} head on your input"},
        xaxis={"title": {"text": "probability"}, "range": [0, 1.15]},
        yaxis={"title": {"text": "class"}, "type": "category"},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=240,
    )
    shown = ", ".join(f"{label} {p:.1%}" for label, p in zip(pred.labels, pred.probabilities))
    table = pd.DataFrame({"class": list(pred.labels), "probability": pred.probabilities})
    return Chart(fig, f"The head says {pred.best}: {shown}.", table)
