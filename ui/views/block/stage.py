"""Section 3, inside the block: every stage's tensor, its per-token statistics, and the mean norm stage by stage."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.block import BlockWalk, TensorSummary, TokenStats

from ..figures import PAIR, Chart, as_array, esc, token_labels
from .common import _values, tensor_heatmap, tensor_table

STAGE_LABELS = {
    "input": "input x",
    "attention": "attention",
    "residual_1": "x + attention",
    "norm_1": "LayerNorm 1",
    # Named by their weights, not by what they do to the width: the width is a question the lesson asks.
    "ffn_hidden": "FFN W₁",
    "ffn_activated": "GELU",
    "ffn_output": "FFN W₂",
    "residual_2": "+ FFN",
    "norm_2": "LayerNorm 2",
}

STAT_COLORS = ("#1f77b4", "#ff7f0e", "#000000")

HELD_NORM = "this stage is a LayerNorm's output, and its numbers tell what a LayerNorm leaves in a row"
HELD_FFN = "the FFN's inside, its code and its numbers show how wide its hidden layer is"


def stage_labels(stages: Sequence[str]) -> list[str]:
    return [STAGE_LABELS[s] for s in stages]


def stage_note(walk: BlockWalk, stage: str) -> str:
    """What this stage of the block does, with the walk's own numbers where it quotes any."""
    stats, d, d_ff, sqrt_d = walk.stats[stage], walk.d_model, walk.d_ff, walk.sqrt_d
    notes = {
        "input": "What enters this layer, one row per token: the embeddings' output at layer 0, "
        "otherwise the previous layer's output.",
        "attention": "The only place where tokens exchange information: each token's row is a weighted mix "
        "of every token's value vector, projected back to d features by W^O.",
        "residual_1": "The skip connection: attention's output is added to the block's input, so a token keeps "
        "what it had and receives a correction.",
        "ffn_hidden": f"Each token on its own is expanded from {d} to {d_ff} features by W₁. "
        "No token sees another here.",
        "ffn_activated": "GELU keeps positive values almost unchanged and squashes negative ones towards 0, "
        "not all the way (see the next section).",
        "ffn_output": f"W₂ projects the {d_ff} units back to {d} features: the FFN's correction to each token.",
    }
    if walk.norm == "post":
        notes |= {
            "norm_1": f"LayerNorm rescales each token's row to mean 0 and standard deviation 1 (γ = 1, β = 0 at "
            f"initialisation): the std line is flat at {stats.mean_std:.3f}, every norm ≈ √d = {sqrt_d:.2f}.",
            "residual_2": "The second skip connection adds the FFN's correction to its own input h.",
            "norm_2": f"Post-norm ends every block on a LayerNorm, so each token leaves with norm "
            f"{stats.mean_l2:.3f} ≈ √d whatever happened inside. This is what the next layer receives.",
        }
    else:
        notes |= {
            "norm_1": "Pre-norm normalises a copy for attention to read; the stream x itself is left as it was.",
            "norm_2": "The FFN reads a normalised copy of the stream; the stream goes on unnormalised.",
            "residual_2": f"Pre-norm's block output is a plain sum: mean norm {stats.mean_l2:.3f} here "
            f"(√d = {sqrt_d:.2f}). Nothing in the block pulls it back, so it can drift from layer to layer.",
        }
    return notes[stage]


def ffn_shape_note(rows: int, cols: int, d: int) -> str:
    """The FFN-shape prediction's answer, said with the hidden layer's own shape."""
    return (
        f"u is {rows} × {cols}: one row per token, and {cols} = {cols // d} × {d} units, because W₁ is {d} × {cols}. "
        f"Each token is widened on its own, then W₂ ({cols} × {d}) brings it back to d = {d} for the residual sum."
    )


def _is_ffn_wide(walk: BlockWalk, stage: str) -> bool:
    return walk.trace[stage].shape[1] == walk.d_ff


def stage_heatmap(walk: BlockWalk, stage: str, tokens: Sequence[str]) -> go.Figure:
    """One stage's tensor; the FFN's inside is labelled by unit, the stream by feature."""
    width = walk.trace[stage].shape[1]
    x_title = "FFN unit" if _is_ffn_wide(walk, stage) else "feature"
    return tensor_heatmap(walk.trace[stage], tokens, title=f"{STAGE_LABELS[stage]} [T, {width}]", x_title=x_title)


def stage_table(walk: BlockWalk, stage: str, tokens: Sequence[str]) -> pd.DataFrame:
    return tensor_table(walk.trace[stage], tokens, "u" if _is_ffn_wide(walk, stage) else "f")


def stage_chart(walk: BlockWalk, stage: str, tokens: Sequence[str], size: TensorSummary) -> Chart:
    """One stage's tensor (size: core.summarize of it)."""
    alt = (
        f"The {STAGE_LABELS[stage]} tensor: {size.rows} tokens by {size.cols} features, "
        f"values from {size.lo:.3f} to {size.hi:.3f}."
    )
    return Chart(stage_heatmap(walk, stage, tokens), alt, stage_table(walk, stage, tokens))


def token_stats_figure(stats: TokenStats, tokens: Sequence[str], *, title: str = "") -> go.Figure:
    """Per-token mean, standard deviation and L2 norm of one stage, one line each."""
    fig = go.Figure()
    labels = token_labels(tokens)
    series = (("mean", stats.mean, "dash"), ("std", stats.std, "dot"), ("L2 norm", stats.l2, "solid"))
    for (name, values, dash), color in zip(series, STAT_COLORS):
        fig.add_scatter(
            x=labels,
            y=as_array(values),
            name=name,
            mode="lines+markers",
            line={"color": color, "dash": dash},
            hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "token"}},
        yaxis={"title": {"text": "over the token's features"}},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def stats_table(stats: TokenStats, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"token": list(tokens), "mean": _values(stats.mean), "std": _values(stats.std), "L2 norm": _values(stats.l2)}
    )


def stage_stats_chart(stats: TokenStats, tokens: Sequence[str]) -> Chart:
    l2, std = stats.l2_span, stats.std_span
    alt = (
        f"Per token at this stage: L2 norm from {l2.lo:.3f} to {l2.hi:.3f}, "
        f"standard deviation from {std.lo:.3f} to {std.hi:.3f}."
    )
    figure = token_stats_figure(stats, tokens, title="per token: mean, std, L2 norm")
    return Chart(figure, alt, stats_table(stats, tokens))


def stage_profile_figure(stage_labels: Sequence[str], mean_norms, current: int, *, title: str = "") -> go.Figure:
    """Mean L2 norm of the tokens at each stage of the block; the selected stage is ringed."""
    y = as_array(mean_norms)
    labels = [esc(s) for s in stage_labels]
    fig = go.Figure(
        go.Scatter(
            x=labels,
            y=y,
            mode="lines+markers",
            name="mean ||x||",
            line={"color": PAIR[0]},
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.add_scatter(
        x=[labels[current]],
        y=[y[current]],
        mode="markers",
        name="this step",
        marker={"size": 18, "color": "rgba(0,0,0,0)", "line": {"color": PAIR[1], "width": 3}},
        hoverinfo="skip",
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "stage of the block, in order"}},
        yaxis={"title": {"text": "mean over tokens of ||x||"}, "rangemode": "tozero"},
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=340,
    )
    return fig


def stage_profile_table(stages: Sequence[str], mean_norms: Sequence[float]) -> pd.DataFrame:
    return pd.DataFrame({"stage": list(stages), "mean L2 norm": list(mean_norms)})


def stage_profile_chart(stages: Sequence[str], mean_norms: Sequence[float], current: int) -> Chart:
    """Mean token norm at each stage (core.mean_norm_per_stage), the current stage ringed."""
    labels = stage_labels(stages)
    alt = f"Mean token L2 norm at each stage: {', '.join(f'{lab} {v:.2f}' for lab, v in zip(labels, mean_norms))}."
    figure = stage_profile_figure(labels, mean_norms, current, title="mean ||x|| at each stage")
    return Chart(figure, alt, stage_profile_table(stages, mean_norms))
