"""Section 3, all heads at once: every head's map in one mosaic, the chosen head's large map, and the answers of the
two predictions about a trained model's heads."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from encoder_core.lessons.heads import HeadChoice, TopKeyChoice
from encoder_core.model.head_patterns import HeadLabel

from ..figures import COLORBAR_X, SEQUENTIAL, Chart, as_array, attention_heatmap, bar_chart, esc, per_token_table
from .common import MAP_MAX_HEIGHT, SELECTED_COLOUR, _short, weights_table

PATTERN_SHORT = {
    "previous token": "prev",
    "next token": "next",
    "[CLS]": "CLS",
    "[SEP]": "SEP",
    "self": "self",
    "broad": "broad",
}

GRID_WIDTH_PX = 850  # a typical main-column width: sizes the gap that holds each caption
CAPTION_PX = 18


def grid_intro(n_heads_total: int, model_name: str) -> str:
    return (
        f"All {n_heads_total} heads of {model_name} on your sentence, one small map each: rows are layers, "
        "columns heads; inside each map, rows are queries and columns keys, as in the large map below. "
        "Above each map: the pattern that describes it best and how much weight goes there (next step; in "
        "lecture mode, point at a map to see them). The outlined map is the chosen layer and head. First, two "
        "predictions about a trained model's heads."
    )


def no_previous_note(model_name: str, trained: bool) -> str:
    """Why "All heads at once" asks nothing about the previous token."""
    if not trained:
        return (
            f"{model_name[:1].upper() + model_name[1:]} has random weights: which of its heads looks back is an "
            "accident of initialisation, so there is nothing to predict about it here."
        )
    return f"No head of {model_name} looks back clearly more than the others on this input: nothing to predict here."


def grid_gaps(n_heads: int, T: int, captions: bool = True) -> tuple[int, int]:
    """(columns between thumbnails, rows above each thumbnail) in the mosaic's cells.

    Above each thumbnail there is space for one line of caption text, whatever the cell size.
    """
    cols = n_heads * (T + 1) - 1
    return 1, (max(2, math.ceil(CAPTION_PX * cols / GRID_WIDTH_PX)) if captions else 1)


def head_grid(
    attentions,
    labels: Sequence,
    selected: tuple[int, int],
    *,
    title: str = "",
    captions: bool = True,
) -> go.Figure:
    """Every head's attention map as one mosaic: layers are rows, heads columns, one thumbnail each.

    attentions: (L, H, T, T), already cut to the tokens to show. labels: HeadLabels in layer-major
    order; with captions, each thumbnail is captioned with its pattern and mass (lecture type is too
    large for 12 captions a row). One heatmap trace keeps it fast.
    """
    a = as_array(attentions).astype(np.float32)
    L, H, T, _ = a.shape
    gap_x, gap_y = grid_gaps(H, T, captions)
    rows, cols = L * (T + gap_y), H * (T + gap_x) - gap_x
    z = np.full((rows, cols), np.nan, dtype=np.float32)
    for layer in range(L):
        for head in range(H):
            r, c = layer * (T + gap_y) + gap_y, head * (T + gap_x)
            z[r : r + T, c : c + T] = a[layer, head]
    # Hover: which layer/head/query/key a cell is. Integers, so the figure stays small.
    rr, cc = np.divmod(np.arange(rows), T + gap_y), np.divmod(np.arange(cols), T + gap_x)
    layer_of, q_of = rr[0], rr[1] - gap_y
    head_of, k_of = cc[0], cc[1]
    custom = np.stack(
        np.broadcast_arrays(layer_of[:, None], head_of[None, :], q_of[:, None], k_of[None, :]), axis=-1
    ).astype(np.int16)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            customdata=custom,
            zmin=0.0,
            zmax=1.0,
            colorscale=SEQUENTIAL,
            hoverongaps=False,
            hovertemplate="layer %{customdata[0]}, head %{customdata[1]}<br>"
            "query %{customdata[2]} -> key %{customdata[3]}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "weight"}, "len": 0.8, "x": COLORBAR_X},
        )
    )
    if captions:
        # One text trace: 72 layout annotations would make the figure several times slower to build.
        text = [
            (lab.layer, lab.head, f"{PATTERN_SHORT.get(lab.pattern, lab.pattern)} {lab.mass:.2f}") for lab in labels
        ]
        fig.add_scatter(
            x=np.array([h * (T + gap_x) + (T - 1) / 2 for _, h, _ in text]),
            y=np.array([layer * (T + gap_y) + gap_y - 1.0 for layer, _, _ in text]),  # just above the thumbnail
            text=[c for _, _, c in text],
            mode="text",
            textposition="top center",
            textfont={"size": 11},
            hoverinfo="skip",
            showlegend=False,
        )
    sl, sh = selected
    fig.update_layout(
        title={"text": esc(title)},
        shapes=[
            {
                "type": "rect",
                "x0": sh * (T + gap_x) - 0.8,
                "x1": sh * (T + gap_x) + T - 0.2,
                "y0": sl * (T + gap_y) + gap_y - 0.8,
                "y1": sl * (T + gap_y) + gap_y + T - 0.2,
                "line": {"color": SELECTED_COLOUR, "width": 3},
            }
        ],
        xaxis={
            "tickvals": [h * (T + gap_x) + (T - 1) / 2 for h in range(H)],
            "ticktext": [f"head {h}" for h in range(H)],
            "title": {"text": "head (in each map: keys across)"},
            "side": "top",
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={
            "tickvals": [layer * (T + gap_y) + gap_y + (T - 1) / 2 for layer in range(L)],
            "ticktext": [f"layer {layer}" for layer in range(L)],
            "title": {"text": "layer (in each map: queries down)"},
            "autorange": "reversed",
            "scaleanchor": "x",
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
        },
        plot_bgcolor="#ffffff",
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        # Square cells: the height follows the mosaic's shape at a typical main-column width.
        height=int(110 + 900 * rows / cols),
    )
    return fig


def grid_alt(label: HeadLabel, n_heads_total: int, model_name: str) -> str:
    return (
        f"Attention maps of all {n_heads_total} heads of {model_name}. The chosen head, layer {label.layer} "
        f"head {label.head}, is labelled {label.pattern} with mass {label.mass:.2f}."
    )


def grid_chart(attentions, labels: Sequence[HeadLabel], chosen: HeadLabel, model_name: str, *, captions: bool) -> Chart:
    """Every head's map (attentions (L, H, T, T), already cut to the tokens shown), the chosen one outlined."""
    n_layers, n_heads = attentions.shape[:2]
    title = f"{n_layers} layers × {n_heads} heads"
    fig = head_grid(attentions, labels, (chosen.layer, chosen.head), title=title, captions=captions)
    return Chart(fig, grid_alt(chosen, n_layers * n_heads, model_name))


def head_map(weights, tokens: Sequence[str], *, title: str) -> go.Figure:
    """One head's (T, T) weights as the large map, no taller than MAP_MAX_HEIGHT."""
    fig = attention_heatmap(weights, tokens, title=title)
    fig.update_layout(height=min(fig.layout.height, MAP_MAX_HEIGHT))
    return fig


def head_map_alt(label: HeadLabel, n_tokens: int, model_name: str) -> str:
    return (
        f"Layer {label.layer}, head {label.head} of {model_name}: {label.pattern}, "
        f"mass {label.mass:.2f} ({n_tokens} tokens)."
    )


def head_map_chart(weights, tokens: Sequence[str], chosen: HeadLabel, n_tokens: int, model_name: str) -> Chart:
    """The chosen head's large map (weights cut to the tokens shown; n_tokens: the whole input's length)."""
    fig = head_map(weights, tokens, title=f"Layer {chosen.layer}, head {chosen.head}")
    return Chart(fig, head_map_alt(chosen, n_tokens, model_name), weights_table(weights, tokens))


def previous_token_text(choice: HeadChoice, n_heads_total: int, threshold: float, model_name: str) -> str:
    """The previous-token prediction's answer: the head that looks back most, next to the others asked about, and
    the heads left out of the options as too close to call."""
    (layer, head), best = choice.candidates[choice.answer], choice.previous[choice.answer]
    others = "; ".join(
        f"layer {c[0]}, head {c[1]}: {m:.2f}"
        for i, (c, m) in enumerate(zip(choice.candidates, choice.previous))
        if i != choice.answer
    )
    text = (
        f"In {model_name}, **layer {layer}, head {head}** puts the most weight on the token just before each token: "
        f"{best:.2f} of a row's weight on average, the most of all {n_heads_total} heads (the others asked about: "
        f"{others})."
    )
    if choice.too_close:
        close = "; ".join(f"layer {c[0]}, head {c[1]}: {c[2]:.2f}" for c in choice.too_close)
        text += f" Left out of the options, within {choice.margin:.2f} of it and so too close to call: {close}."
    if best < threshold:
        return text + f" Still, {best:.2f} is below {threshold:.2f}: no head of this model really looks back."
    return text + " In its map, that weight is a stripe just left of the diagonal."


def top_key_text(choice: TopKeyChoice, tokens: Sequence[str], model_name: str) -> str:
    """The word prediction's answer: where the asked word looks in that head, against its second choice."""
    q, best, w = choice.query, choice.best, choice.weights
    second = choice.runner_up
    return (
        f"In {model_name}'s layer {choice.layer}, head {choice.head}, “{tokens[q]}” (position {q}) puts "
        f"**{w[best]:.2f}** of its weight on **{best} {tokens[best]}**; its next largest is {w[second]:.2f}, on "
        f"{second} {tokens[second]}. Where a trained head sends each word was learned, word by word: not a fixed "
        "offset, and not a special token for every word."
    )


def top_key_chart(choice: TopKeyChoice, tokens: Sequence[str], model_name: str) -> Chart:
    """The asked word's row in that head: its weight on every key."""
    q, w = choice.query, choice.weights
    fig = bar_chart(
        list(tokens),
        w,
        title=f"Where “{_short(tokens[q], 16)}” looks: {model_name}, layer {choice.layer}, head {choice.head}",
        x_title="key",
        y_title="attention weight",
        text_format=".2f",
    )
    fig.update_layout(yaxis={"range": [0, 1.05]})
    alt = (
        f"The weights of query {q} ({tokens[q]}) over the {len(tokens)} keys, summing to 1: the largest, "
        f"{w[choice.best]:.2f}, on key {choice.best} ({tokens[choice.best]})."
    )
    return Chart(fig, alt, per_token_table(tokens, {"weight": list(w)}))
