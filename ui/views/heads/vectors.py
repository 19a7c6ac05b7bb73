"""Section 6, sentence vectors: cosine similarities under both poolings, and one word's two senses layer by layer."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.heads import Similarities, WordVectorCosines

from ..figures import CELL_VALUES, COLORBAR_X, DIVERGING, PAIR, Chart, after_layer_names, as_array, esc, wire_array
from .common import _short, matrix_table

VECTORS_INTRO = (
    "One vector for a whole sentence: take the [CLS] token's final vector, or the mean of all real (non-pad) "
    "token vectors. all-MiniLM-L6-v2 was trained for sentence similarity with the mean, so that is the vector "
    "it was built to give; its [CLS] vector was not trained for this job. Cosine similarity compares "
    "directions: 1 means the same direction, 0 unrelated."
)
BANK_READING = (
    "At the embeddings the two vectors are the same token embedding at the same position, so the cosine is 1. "
    "Every layer mixes in the context through attention, and the two “bank”s drift apart when the "
    "context differs, much less when it means the same thing."
)

POOLINGS = {"mean": "mean pooling", "cls": "[CLS] vector"}  # the order the page shows them in


def similarity_figure(matrix, labels: Sequence[str], *, title: str) -> go.Figure:
    """(N, N) cosine similarities on a fixed [-1, 1] scale, values written in the cells."""
    v = wire_array(matrix)
    names = [f"{i}: {esc(_short(t))}" for i, t in enumerate(labels)]
    fig = go.Figure(
        go.Heatmap(
            z=v,
            x=names,
            y=names,
            zmin=-1.0,
            zmax=1.0,
            zmid=0.0,
            colorscale=DIVERGING,
            texttemplate=CELL_VALUES,
            hovertemplate="%{y}<br>%{x}<br>cosine %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "cosine"}, "x": COLORBAR_X},
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "sentence"}, "tickangle": -30},
        yaxis={"title": {"text": "sentence"}, "autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=max(340, 60 * len(names) + 200),
    )
    return fig


def similarity_alt(matrix, pooling_name: str) -> str:
    return (
        f"Cosine similarity of {matrix.shape[0]} sentences by {pooling_name}; sentences 0 and 1: "
        f"{float(matrix[0, 1]):.2f}."
    )


def similarity_table(matrix, texts: Sequence[str]) -> pd.DataFrame:
    """(N, N) cosines, rows and columns numbered from 0 as in the figure."""
    names = [f"{i}: {t}" for i, t in enumerate(texts)]
    return matrix_table(matrix, names, "sentence", [str(i) for i in range(len(texts))], numbered=False)


def similarity_charts(sims: Similarities) -> dict[str, Chart]:
    """Each pooling's (N, N) cosines, by pooling ("mean", "cls")."""
    charts = {}
    for pooling, name in POOLINGS.items():
        matrix = getattr(sims, pooling)
        figure = similarity_figure(matrix, sims.texts, title=f"Cosine similarity, {name}")
        charts[pooling] = Chart(figure, similarity_alt(matrix, name), similarity_table(matrix, sims.texts))
    return charts


def similarities_text(sims: Similarities) -> str:
    """Sentences 0 and 1 under both poolings, and the range each pooling spans over the pairs (markdown)."""
    (lo_mean, hi_mean), (lo_cls, hi_cls) = sims.pair_range("mean"), sims.pair_range("cls")
    return (
        f"Sentences 0 and 1: **{float(sims.mean[0, 1]):.2f}** with mean pooling, **{float(sims.cls[0, 1]):.2f}** "
        f"with [CLS]. Across the pairs of different sentences, mean pooling ranges from {lo_mean:.2f} to "
        f"{hi_mean:.2f}, [CLS] from {lo_cls:.2f} to {hi_cls:.2f}: the narrower the range, the less the vector "
        "tells related sentences from unrelated ones."
    )


def bank_intro(word: str, river: str, money: str, river_again: str) -> str:
    return (
        f"**The “{word}” pair again, now with a trained model.** The vector of “{word}” in “{river}” against the "
        f"one in “{money}”, and against “{river_again}” (the same sense; all three sentences are word for word the "
        f"same up to and including “{word}”)."
    )


def word_cosine_lines(series: dict[str, object], *, title: str) -> go.Figure:
    """Cosine between two vectors of the same word, at the embeddings and after each layer (from 0)."""
    fig = go.Figure()
    for i, (name, values) in enumerate(series.items()):
        v = as_array(values)
        fig.add_scatter(
            x=after_layer_names(len(v)),
            y=v,
            name=esc(name),
            mode="lines+markers",  # the two lines run close: their final values are the metrics above
            line={"color": PAIR[i % 2], "dash": ("solid", "dash")[i % 2], "width": 3},
            hovertemplate="%{x}: %{y:.3f}<extra>" + esc(name) + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "stage of the model"}},
        yaxis={"title": {"text": "cosine similarity"}, "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.3},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=440,
    )
    return fig


def bank_figure(different: WordVectorCosines, same: WordVectorCosines) -> go.Figure:
    """The cosine of one word's two vectors, layer by layer: in a different sense, and in the same sense."""
    return word_cosine_lines(
        {"river vs money (different sense)": different.per_layer, "river vs stream (same sense)": same.per_layer},
        title=f"Cosine between two vectors of “{different.word}”, layer by layer",
    )


def bank_alt(different: WordVectorCosines, same: WordVectorCosines) -> str:
    return (
        f"Cosine between the vectors of {different.word} in two sentences: river vs money falls from "
        f"{float(different.per_layer[0]):.3f} to {different.final:.3f}; river vs stream ends at {same.final:.3f}."
    )


def bank_table(different: WordVectorCosines, same: WordVectorCosines) -> pd.DataFrame:
    """The two cosine curves of bank_figure, by depth."""
    return pd.DataFrame(
        {
            "stage": after_layer_names(len(different.per_layer)),
            "river vs money": different.per_layer,
            "river vs stream": same.per_layer,
        }
    ).round(4)


def bank_chart(different: WordVectorCosines, same: WordVectorCosines) -> Chart:
    return Chart(bank_figure(different, same), bank_alt(different, same), bank_table(different, same))
