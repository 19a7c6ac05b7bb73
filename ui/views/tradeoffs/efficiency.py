"""Section 4, sample efficiency: how many positions each objective scores."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import OBJECTIVES, ObjectiveLabels

from ..figures import CELLS_ARE_WORDS, Chart, esc, grouped_bars, token_labels


def objectives_figure(lab: ObjectiveLabels) -> go.Figure:
    """One row per objective, one cell per position: dark where a loss is computed, the target written in it."""
    n = len(lab.tokens)
    mlm = [1 if c else 0 for c in lab.chosen]
    nxt = [0 if t is None else 1 for t in lab.next_targets]
    rtd = [1] * n
    text = [
        [f"{esc(lab.mlm_inputs[i])}<br>→ {esc(lab.tokens[i])}" if c else "" for i, c in enumerate(lab.chosen)],
        [esc(t) if t is not None else "" for t in lab.next_targets],
        [f"{esc(t)}<br>replaced" if r else esc(t) for t, r in zip(lab.rtd_inputs, lab.rtd_replaced)],
    ]
    return go.Figure(
        go.Heatmap(
            z=[mlm, nxt, rtd],
            x=token_labels(lab.tokens),
            y=list(OBJECTIVES),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 12},
            zmin=0,
            zmax=1,
            colorscale=[[0, "#f2f2f2"], [1, "#9ecae1"]],
            showscale=False,
            xgap=2,
            ygap=2,
            hovertemplate="%{y}, %{x}: target %{text}<extra></extra>",
            meta=CELLS_ARE_WORDS,  # the words are the chart: lecture mode shrinks them, never drops them
        ),
        layout={
            "title": {"text": "Where each objective puts a loss, and its target"},
            "xaxis": {"title": {"text": "position (the sentence as read)"}},
            "yaxis": {"title": {"text": "objective"}, "autorange": "reversed"},
            "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
            "height": 340,
        },
    )


def objectives_alt(lab: ObjectiveLabels) -> str:
    c = lab.counts()
    return (
        f"Of {len(lab.tokens)} positions, MLM scores {c[OBJECTIVES[0]]}, next-token prediction "
        f"{c[OBJECTIVES[1]]} and replaced-token detection all {c[OBJECTIVES[2]]}; "
        f"{sum(lab.rtd_replaced)} of them hold a replaced token."
    )


def objectives_table(lab: ObjectiveLabels) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "token": token_labels(lab.tokens),
            "MLM input": lab.mlm_inputs,
            "MLM label": [t if c else "-100" for t, c in zip(lab.tokens, lab.chosen)],
            "next-token target": [t or "—" for t in lab.next_targets],
            "RTD input": lab.rtd_inputs,
            "RTD label": ["replaced" if r else "original" for r in lab.rtd_replaced],
        }
    )


def objectives_chart(lab: ObjectiveLabels) -> Chart:
    return Chart(objectives_figure(lab), objectives_alt(lab), objectives_table(lab))


def loss_counts_figure(lab: ObjectiveLabels) -> go.Figure:
    counts = lab.counts()
    fig = grouped_bars(
        list(counts),
        {"positions with a loss": list(counts.values())},
        title=f"Positions that carry a loss, of {len(lab.tokens)}",
        x_title="objective",
        y_title="positions (count)",
        numbered=False,
        text_format=".0f",
    )
    fig.update_layout(yaxis={"rangemode": "tozero"}, showlegend=False)
    return fig


def loss_counts_alt(lab: ObjectiveLabels) -> str:
    c = lab.counts()
    return (
        f"Bars of {c[OBJECTIVES[0]]}, {c[OBJECTIVES[1]]} and {c[OBJECTIVES[2]]} positions with a loss, of "
        f"{len(lab.tokens)}: replaced-token detection learns from {c[OBJECTIVES[2]] / max(1, c[OBJECTIVES[0]]):.1f} "
        "times as many positions as MLM."
    )


def loss_counts_table(lab: ObjectiveLabels) -> pd.DataFrame:
    counts = lab.counts()
    n = len(lab.tokens)
    return pd.DataFrame({"objective": list(counts), "positions": list(counts.values()), "of": n})


def loss_counts_chart(lab: ObjectiveLabels) -> Chart:
    return Chart(loss_counts_figure(lab), loss_counts_alt(lab), loss_counts_table(lab))


def corruption_text(lab: ObjectiveLabels) -> str:
    how = (
        "the lab's trained MLM acts as ELECTRA's small generator: each chosen position is shown to it as [MASK] "
        "and it samples a word from its prediction there"
        if lab.corruption == "generator"
        else "the trained MLM is not available, so each chosen position gets a uniformly random word"
    )
    return (
        f"The corruption: MLM's chosen positions are corrupted, and {how}. A sample that happens to equal the "
        "original is labelled *original*, as in ELECTRA. In the grid an MLM cell reads *input → target*, a "
        "next-token cell the token to predict, and an RTD cell the token the discriminator reads."
    )


EFFICIENCY_TEXT = (
    "MLM learns from about 15% of the positions; the rest of the forward pass teaches nothing. Next-token "
    "prediction scores every position but the last. ELECTRA's **replaced-token detection** scores all of "
    "them: a discriminator reads the corrupted sentence and says, at every position, whether the token is "
    "the original. Same sentence, several times the signal."
)
