"""Section 4, what each head does: every head named by its pattern, the patterns per layer, and the sinks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.heads import SinkSummary
from encoder_core.model.head_patterns import HeadLabel

from ..figures import Chart, esc

# Okabe-Ito: five colours that stay distinct under the common colour-vision deficiencies.
PATTERN_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")


def labels_intro(threshold: float) -> str:
    return (
        "Each head gets a name from its own weights: for every pattern we average, over the query rows, the weight "
        "it puts on the previous token, the next token, [CLS], [SEP], or itself. The largest of the five names the "
        f"head if it reaches {threshold:.2f}; otherwise the head is *broad*. The mass is that largest average."
    )


def labels_table(labels: Sequence[HeadLabel]) -> pd.DataFrame:
    """One row per head: its label, the mass behind it, and every pattern's mass."""
    return pd.DataFrame(
        [
            {"layer": lab.layer, "head": lab.head, "pattern": lab.pattern, "mass": round(lab.mass, 3)}
            | {p: round(v, 3) for p, v in lab.masses.items()}
            for lab in labels
        ]
    )


def pattern_lines(averages: Sequence[dict[str, float]], *, title: str = "") -> go.Figure:
    """Per layer, each pattern's mass averaged over the layer's heads."""
    fig = go.Figure()
    layers = np.arange(len(averages))
    dashes = ("solid", "dash", "dot", "dashdot", "longdash")
    for i, pattern in enumerate(averages[0] if averages else []):
        fig.add_scatter(
            x=layers,
            y=np.array([row[pattern] for row in averages]),
            name=esc(pattern),
            mode="lines+markers",
            line={"color": PATTERN_COLOURS[i % len(PATTERN_COLOURS)], "dash": dashes[i % len(dashes)], "width": 3},
            hovertemplate="layer %{x}: %{y:.3f}<extra>" + esc(pattern) + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "layer"}, "dtick": 1},
        yaxis={"title": {"text": "mean mass over the layer's heads"}, "range": [0, 1]},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=380,
    )
    return fig


def averages_figure(averages: Sequence[dict[str, float]], model_name: str) -> go.Figure:
    return pattern_lines(averages, title=f"Each pattern's mass, averaged over the heads of a layer ({model_name})")


def averages_alt(averages: Sequence[dict[str, float]]) -> str:
    per_layer = (f"layer {i}: [CLS] {row['[CLS]']:.2f}, [SEP] {row['[SEP]']:.2f}" for i, row in enumerate(averages))
    return "Per layer mean mass of each pattern: " + "; ".join(per_layer) + "."


def averages_table(averages: Sequence[dict[str, float]]) -> pd.DataFrame:
    return pd.DataFrame(averages).round(4).reset_index(names="layer")


def averages_chart(averages: Sequence[dict[str, float]], model_name: str) -> Chart:
    return Chart(averages_figure(averages, model_name), averages_alt(averages), averages_table(averages))


def sinks_text(sinks: SinkSummary) -> str:
    """Where the heads park their weight, read out of the sink summary (markdown)."""
    return (
        f"On this input, **{sinks.n_cls}** of {sinks.n_heads} heads are labelled [CLS] and **{sinks.n_sep}** [SEP]; "
        f"{sinks.n_more_cls} heads put more weight on [CLS] than on [SEP]. Averaged over all heads, [CLS] receives "
        f"**{sinks.mean_cls:.2f}** of each row's weight and [SEP] **{sinks.mean_sep:.2f}**. All labels: "
        + ", ".join(f"{n} {p}" for p, n in sinks.counts.items())
        + "."
    )


def sinks_reading(sinks: SinkSummary, model_choice: str, trained: bool) -> str:
    """Why so much weight lands on a special token, and what this model's heads can say about it (markdown)."""
    if model_choice == "minilm":
        here = (
            f"the parking place is mostly [CLS]: {sinks.n_cls} [CLS] heads against {sinks.n_sep} [SEP] heads on "
            "your sentence."
            if sinks.n_cls > sinks.n_sep
            else f"the parking place is usually [CLS], but not on your sentence: {sinks.n_cls} [CLS] heads against "
            f"{sinks.n_sep} [SEP] heads. Try the example sentence to compare."
        )
        return (
            "**Why so much weight on a special token?** A softmax row must add up to 1, so a head with nothing "
            "useful to take from a sentence still has to put its weight somewhere. Clark et al. (2019, *What Does "
            "BERT Look At?*) found that in BERT-base many heads, especially in the middle layers, put most of their "
            "weight on [SEP], and argued that this works as a *no-op*: the head parks its attention there when its "
            "pattern does not apply, and that weight barely changes the output. In all-MiniLM-L6-v2, a compressed "
            f"(distilled) model further trained for sentence similarity, {here} Same mechanism, different sink: "
            "which token a model uses is learned, not designed."
        )
    if trained:
        return (
            "The lab's MLM is small (2 layers, 4 heads) and trained for minutes, so its heads have had little "
            "reason to specialise. Choose all-MiniLM-L6-v2 in the sidebar to see heads that long training shaped."
        )
    return (
        "The small model's weights are random (seeded), so its patterns are accidents of initialisation, "
        "not learned behaviour. Choose all-MiniLM-L6-v2 in the sidebar to see heads that training shaped."
    )
