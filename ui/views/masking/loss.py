"""Section 3, the loss: which positions carry a label, and the mean over them against the wrong mean."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.masking import COUNT_EXAMPLE_TEXT, CountExample, MaskingDraw, MLMForward
from encoder_core.objectives.loss import LossBreakdown

from ..figures import PAIR, Chart, as_array, esc, token_labels

IGNORED_GREY = "#b0b0b0"

LOSS_NARRATIVE = (
    "Only chosen positions get a label (their original id); every other position is labelled **-100**, "
    "the value PyTorch's cross-entropy skips. A chosen position that got a random word, or kept its own, "
    "is scored like a [MASK]: any position might be scored, so every position's vector has to stay honest."
)
NO_LOSS_TEXT = (
    "No position carries a loss in this draw, so the mean is undefined: there are no positions to "
    "average (PyTorch returns nan here). Raise the rate or draw again."
)


def mean_text(value: float) -> str:
    return "undefined" if value != value else f"{value:.4f}"  # nan: nothing was chosen, no positions to average


def loss_positions_text(draw: MaskingDraw, labelled: Sequence[int]) -> str:
    """Which positions carry a label in this draw, and what each chosen one became."""
    if not labelled:
        return "No position carries a label in this draw: nothing was chosen."
    c = draw.counts
    return (
        f"Labelled (not -100) in this draw: position{'s' if len(labelled) > 1 else ''} "
        f"**{', '.join(map(str, labelled))}** of 0–{len(draw.positions) - 1}: the {c.chosen} chosen "
        f"({c.masked} [MASK], {c.random} random, {c.kept} kept)."
    )


def loss_metrics(fwd: MLMForward) -> list[tuple[str, str]]:
    """The right mean, PyTorch's own and the wrong one, as the page's metrics show them."""
    b = fwd.breakdown
    return [
        (f"mean over the {b.n_counted} chosen positions", mean_text(b.mean)),
        ("PyTorch cross_entropy(ignore_index=-100)", mean_text(fwd.pytorch_loss)),
        (f"wrong: sum / all {b.n_positions} positions", mean_text(b.wrong_mean_all_positions)),
    ]


def loss_bars(
    tokens: Sequence[str],
    input_tokens: Sequence[str],
    per_position,
    counted,
    *,
    mean: float,
    wrong_mean: float,
    title: str = "",
) -> go.Figure:
    """Cross-entropy at every position. Positions labelled -100 are grey bars of height 0, marked
    "ignored"; two lines give the right mean (over chosen positions) and the wrong one (over all)."""
    losses = as_array(per_position)
    counted = np.asarray(counted, dtype=bool)
    labels = token_labels(tokens)
    received = [esc(t) for t in input_tokens]
    fig = go.Figure()
    for name, keep, colour in (
        ("carries a loss", counted, PAIR[0]),
        ("label -100: adds nothing", ~counted, IGNORED_GREY),
    ):
        idx = np.flatnonzero(keep)
        if not len(idx):
            continue
        fig.add_bar(
            x=[labels[i] for i in idx],
            y=losses[idx],
            name=name,
            marker_color=colour,
            text=[f"{losses[i]:.2f}" if counted[i] else "ignored" for i in idx],
            textposition="outside",
            customdata=[received[i] for i in idx],
            hovertemplate="%{x} (model received %{customdata}): loss %{y:.4f}<extra></extra>",
        )
    if counted.any():
        for name, value, dash, colour in (
            ("mean over chosen positions (right)", mean, "solid", PAIR[0]),
            ("sum / every position (wrong)", wrong_mean, "dash", PAIR[1]),
        ):
            fig.add_scatter(
                x=labels,
                y=np.full(len(labels), value),
                mode="lines",
                name=f"{name}: {value:.3f}",
                line={"color": colour, "dash": dash, "width": 3},
                hovertemplate=f"{name}: {value:.4f}<extra></extra>",
            )
    top = float(losses.max()) if losses.size else 1.0
    fig.update_layout(
        title={"text": esc(title)},
        barmode="overlay",
        xaxis={"title": {"text": "position and original token"}, "categoryorder": "array", "categoryarray": labels},
        yaxis={"title": {"text": "cross-entropy (nats)"}, "range": [0, max(top, 0.1) * 1.25]},
        legend={"orientation": "h", "y": -0.3},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=420,
    )
    return fig


def loss_figure(fwd: MLMForward, tokens: Sequence[str], input_tokens: Sequence[str], *, title: str) -> go.Figure:
    """loss_bars for the first sequence of a forward pass."""
    b = fwd.breakdown
    return loss_bars(
        tokens,
        input_tokens,
        b.per_position[0],
        b.counted[0],
        mean=b.mean,
        wrong_mean=b.wrong_mean_all_positions,
        title=title,
    )


def loss_alt(b: LossBreakdown) -> str:
    if not b.n_counted:
        return (
            f"None of the {b.n_positions} positions carries a loss: every bar is 0 and there are no "
            "positions to average."
        )
    return (
        f"{b.n_counted} of {b.n_positions} positions carry a loss; their mean is {mean_text(b.mean)}, "
        f"while dividing the same sum by all positions gives {mean_text(b.wrong_mean_all_positions)}."
    )


def loss_table(fwd: MLMForward, tokens: Sequence[str], input_tokens: Sequence[str]) -> pd.DataFrame:
    """Per position of the first sequence: what the model got, its label, its loss and its top guess."""
    if fwd.top_guess_tokens is None:
        raise ValueError("the forward pass carries no decoded guesses: run mlm_forward with the tokenizer")
    b, guesses = fwd.breakdown, fwd.top_guess_tokens[0]
    rows = []
    for t, token in enumerate(tokens):
        counted = bool(b.counted[0, t])
        rows.append(
            {
                "position": t,
                "original": token,
                "model receives": input_tokens[t],
                "label": int(fwd.labels[0, t]),
                "loss": float(b.per_position[0, t]),
                "p(original)": float(fwd.label_probability[0, t]) if counted else None,
                "model's top guess": guesses[t],
            }
        )
    return pd.DataFrame(rows)


def loss_chart(fwd: MLMForward, tokens: Sequence[str], input_tokens: Sequence[str]) -> Chart:
    """The draw's loss, position by position."""
    title = "Cross-entropy at each position (grey: label -100, contributes nothing)"
    figure = loss_figure(fwd, tokens, input_tokens, title=title)
    return Chart(figure, loss_alt(fwd.breakdown), loss_table(fwd, tokens, input_tokens))


def count_example_text(ex: CountExample, text: str = COUNT_EXAMPLE_TEXT) -> str:
    b = ex.forward.breakdown
    return (
        f"**Count before you average.** *{text}* is {ex.n_positions} positions with "
        f"[CLS] and [SEP]. Hide two of them: the model receives `{' '.join(ex.input_tokens)}`. The loss is the "
        f"mean of **{ex.n_counted}** terms, {mean_text(b.mean)}; dividing by all {ex.n_positions} positions "
        f"gives {mean_text(b.wrong_mean_all_positions)}, a loss {ex.n_positions / ex.n_counted:.0f} times too "
        "small that also shifts with how long the sentence is."
    )


def count_example_alt(ex: CountExample) -> str:
    b = ex.forward.breakdown
    return (
        f"Of {ex.n_positions} positions, {ex.n_counted} carry a loss: right mean {mean_text(b.mean)}, "
        f"wrong mean over all positions {mean_text(b.wrong_mean_all_positions)}."
    )


def count_example_chart(ex: CountExample) -> Chart:
    title = f"{ex.n_positions} positions, {ex.n_counted} hidden: the mean is over {ex.n_counted}"
    figure = loss_figure(ex.forward, ex.tokens, ex.input_tokens, title=title)
    return Chart(figure, count_example_alt(ex), loss_table(ex.forward, ex.tokens, ex.input_tokens))
