"""Figures and tables of the heads lesson, and the sentences that read their numbers out (each
figure's text alternative, a result's summary): pure builders, numbers or encoder_core results in ->
plotly Figure, pandas DataFrame, text or a Chart (all three together) out (no model runs)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.heads import (
    HeadChoice,
    HeadMechanics,
    SameWordMass,
    SentenceSplits,
    Similarities,
    SinkSummary,
    TopKeyChoice,
    WordVectorCosines,
)
from encoder_core.model.head_patterns import NEIGHBOUR_PATTERNS, HeadLabel

from .figures import (
    COLORBAR_X,
    DIVERGING,
    PAIR,
    SEQUENTIAL,
    Chart,
    after_layer_names,
    as_array,
    attention_heatmap,
    bar_chart,
    esc,
    matrix_heatmap,
    per_token_table,
)

# Okabe-Ito: five colours that stay distinct under the common colour-vision deficiencies.
PATTERN_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
PATTERN_SHORT = {
    "previous token": "prev",
    "next token": "next",
    "[CLS]": "CLS",
    "[SEP]": "SEP",
    "self": "self",
    "broad": "broad",
}
SELECTED_COLOUR = "#ff7f0e"
MAP_MAX_HEIGHT = 1100  # px: a long sentence's single map stays within a screen or two


GRID_WIDTH_PX = 850  # a typical main-column width: sizes the gap that holds each caption
CAPTION_PX = 18


def grid_gaps(n_heads: int, T: int, captions: bool = True) -> tuple[int, int]:
    """(columns between thumbnails, rows above each thumbnail) in the mosaic's cells.

    Above each thumbnail there is room for one line of caption text, whatever the cell size.
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


def head_slices(matrix, tokens: Sequence[str], *, title: str, x_title: str) -> go.Figure:
    """A [T, d_head] (or [T, D]) activation: tokens are rows, features columns, centred at 0."""
    fig = matrix_heatmap(
        matrix, tokens, title=title, x_title=x_title, y_title="token", height=max(260, 22 * len(tokens) + 130)
    )
    # "feature" in the hover whatever the columns are called.
    fig.update_traces(hovertemplate="token %{y}, feature %{x}: %{z:.3f}<extra></extra>")
    return fig


def _head_boundaries(fig: go.Figure, n_heads: int, d_head: int) -> None:
    """Dashed lines between the heads' column blocks, and each block's head number on top."""
    shapes = [
        {
            "type": "line",
            "xref": "x",
            "yref": "paper",
            "x0": h * d_head - 0.5,
            "x1": h * d_head - 0.5,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#000000", "width": 2, "dash": "dash"},
        }
        for h in range(1, n_heads)
    ]
    annotations = [
        {
            "x": h * d_head + (d_head - 1) / 2,
            "y": 1.0,
            "xref": "x",
            "yref": "paper",
            "yanchor": "bottom",
            "text": f"head {h}",
            "showarrow": False,
        }
        for h in range(n_heads)
    ]
    fig.update_layout(shapes=shapes, annotations=annotations)


def concat_figure(concat, tokens: Sequence[str], n_heads: int, *, title: str) -> go.Figure:
    """The concatenation [T, D]: head 0's d_head columns, then head 1's, ..."""
    d_head = as_array(concat).shape[1] // n_heads
    fig = head_slices(concat, tokens, title=title, x_title="feature of the concatenation")
    _head_boundaries(fig, n_heads, d_head)
    fig.update_layout(margin={"t": 90})
    return fig


def output_projection_figure(w_o, n_heads: int, *, title: str) -> go.Figure:
    """W_O as nn.Linear stores it, (out, in): column block h reads head h's output."""
    d_head = as_array(w_o).shape[1] // n_heads
    fig = matrix_heatmap(
        w_o,
        None,
        title=title,
        x_title="input feature (from the concatenation)",
        y_title="output feature",
        height=520,
    )
    # The hover names the column without the axis title's aside.
    fig.update_traces(hovertemplate="output feature %{y}, input feature %{x}: %{z:.3f}<extra></extra>")
    # Square cells, so the head blocks read as the D x D matrix they are.
    fig.update_layout(
        xaxis={"constrain": "domain"},
        yaxis={"scaleanchor": "x", "constrain": "domain"},
        margin={"l": 10, "r": 10, "t": 90, "b": 10},
    )
    _head_boundaries(fig, n_heads, d_head)
    return fig


def layer_head_heatmap(values, *, title: str, colorbar: str, zmax: float = 1.0) -> go.Figure:
    """An (L, H) table of one number per head."""
    v = as_array(values)
    L, H = v.shape
    fig = go.Figure(
        go.Heatmap(
            z=v,
            x=[f"head {h}" for h in range(H)],
            y=[f"layer {layer}" for layer in range(L)],
            zmin=0.0,
            zmax=zmax,
            colorscale=SEQUENTIAL,
            text=np.round(v, 2),
            texttemplate="%{text:.2f}",
            hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": esc(colorbar)}, "x": COLORBAR_X},
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        yaxis={"autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=110 + 46 * L,
    )
    return fig


def similarity_figure(matrix, labels: Sequence[str], *, title: str) -> go.Figure:
    """(N, N) cosine similarities on a fixed [-1, 1] scale, values written in the cells."""
    v = as_array(matrix)
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
            text=np.round(v, 2),
            texttemplate="%{text:.2f}",
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


def _short(text: str, n: int = 28) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


# ---- one head's large map ----


def head_map(weights, tokens: Sequence[str], *, title: str) -> go.Figure:
    """One head's (T, T) weights as the large map, no taller than MAP_MAX_HEIGHT."""
    fig = attention_heatmap(weights, tokens, title=title)
    fig.update_layout(height=min(fig.layout.height, MAP_MAX_HEIGHT))
    return fig


def pieces_map(weights, tokens: Sequence[str], spans: Sequence[tuple[int, int]], *, title: str) -> go.Figure:
    """One head's map with the blocks outlined where a split word's pieces meet each other.

    spans: (first, last) positions of each split word's pieces, both included (core's piece_spans)."""
    fig = attention_heatmap(weights, tokens, title=title)
    outlines = [
        {
            "type": "rect",
            "x0": first - 0.5,
            "x1": last + 0.5,
            "y0": first - 0.5,
            "y1": last + 0.5,
            "line": {"color": SELECTED_COLOUR, "width": 3},
        }
        for first, last in spans
    ]
    fig.update_layout(shapes=outlines, height=min(fig.layout.height, MAP_MAX_HEIGHT))
    return fig


# ---- one block's mechanics (HeadMechanics): figures, their text alternatives, tables ----


def shape_text(shape: Iterable[int]) -> str:
    return " × ".join(str(n) for n in shape)


def slice_figure(mech: HeadMechanics, name: str) -> go.Figure:
    """The chosen head's Q, K or V (name), tokens by the head's dimensions."""
    matrix = mech.slices()[name]
    title = f"{name} of head {mech.head} [{shape_text(matrix.shape)}]"
    return head_slices(matrix, mech.tokens, title=title, x_title=f"dimension of head {mech.head}")


def slice_alt(mech: HeadMechanics, name: str) -> str:
    matrix = mech.slices()[name]
    return (
        f"{name} slice of head {mech.head}, layer {mech.layer}: {shape_text(matrix.shape)}, "
        f"values from {float(matrix.min()):.2f} to {float(matrix.max()):.2f}."
    )


def own_weights_figure(mech: HeadMechanics) -> go.Figure:
    return attention_heatmap(
        mech.weights, mech.tokens, title=f"Head {mech.head}'s own weights [{shape_text(mech.weights.shape)}]"
    )


def own_weights_alt(mech: HeadMechanics) -> str:
    key, weight = mech.strongest_key(0)
    return (
        f"Attention weights of the small model's layer {mech.layer}, head {mech.head}; "
        f"row 0 ({mech.tokens[0]}) puts most weight ({weight:.2f}) on token {key}."
    )


def concatenation_figure(mech: HeadMechanics) -> go.Figure:
    title = f"Concatenated head outputs [{shape_text(mech.concat.shape)}]"
    return concat_figure(mech.concat, mech.tokens, mech.n_heads, title=title)


def concat_alt(mech: HeadMechanics) -> str:
    return f"The {mech.n_heads} head outputs side by side, {shape_text(mech.concat.shape)}, layer {mech.layer}."


def w_o_figure(mech: HeadMechanics) -> go.Figure:
    title = f"W_O [{shape_text(mech.w_o.shape)}], layer {mech.layer}"
    return output_projection_figure(mech.w_o, mech.n_heads, title=title)


def w_o_alt(mech: HeadMechanics) -> str:
    return (
        f"The output projection W_O of layer {mech.layer}, {shape_text(mech.w_o.shape)}, as nn.Linear stores it "
        "(output feature x input feature); column blocks belong to the heads."
    )


# ---- a model's heads on one sentence: text alternatives of the grid, the large map, the patterns ----


def grid_alt(label: HeadLabel, n_heads_total: int, model_name: str) -> str:
    return (
        f"Attention maps of all {n_heads_total} heads of {model_name}. The chosen head, layer {label.layer} "
        f"head {label.head}, is labelled {label.pattern} with mass {label.mass:.2f}."
    )


def head_map_alt(label: HeadLabel, n_tokens: int, model_name: str) -> str:
    return (
        f"Layer {label.layer}, head {label.head} of {model_name}: {label.pattern}, "
        f"mass {label.mass:.2f} ({n_tokens} tokens)."
    )


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


def weight_count_text(mech: HeadMechanics) -> str:
    """How many attention weights one layer computes (the weight-count prediction's answer), said as a product."""
    T = len(mech.tokens)
    return (
        f"{mech.n_heads} heads × {T} queries × {T} keys = **{mech.n_weights:,}** attention weights in one layer: "
        f"every head computes its own {T} × {T} grid, each row adding up to 1. The grid of head {mech.head}:"
    )


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
    second = max((k for k in range(len(w)) if k != best), key=lambda k: w[k])
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


def wait_note(section: str | None, what: str) -> str:
    """What a section says where it holds something back: the prediction to answer first (None: the ones above)."""
    where = "above" if section is None else f"in “{section}”"
    return f"Answer the predictions {where} first, or skip them: {what}."


def split_text(model_name: str, d_model: int, n_heads: int, d_head: int) -> str:
    return (
        f"{model_name[:1].upper() + model_name[1:]} has d = {d_model} and {n_heads} heads, so each head works in "
        f"d/h = {d_model} / {n_heads} = {d_head} dimensions. There is no separate matrix per head: "
        f"the block computes Q = xW_Q (all {d_model} columns at once) and head h simply takes columns "
        f"h·{d_head} to (h+1)·{d_head}. The same for K and V. Each head then runs its own "
        "softmax(QKᵀ/√d_head) over the tokens, so each gets its own attention map."
    )


def concat_text(n_tokens: int, n_heads: int, d_head: int, d_model: int) -> str:
    return (
        f"Each of the {n_heads} heads returns weights @ V, a [{n_tokens} × {d_head}] matrix. "
        f"Laid side by side they form a [{n_tokens} × {d_model}] concatenation, back to the model's "
        f"width. The output projection W_O [{d_model} × {d_model}] then mixes the heads: every output "
        "feature reads from every head's block of columns (dashed lines). This is the attention "
        "sublayer's output, before the residual and LayerNorm."
    )


def no_previous_note(model_name: str, trained: bool) -> str:
    """Why "All heads at once" asks nothing about the previous token."""
    if not trained:
        return (
            f"{model_name[:1].upper() + model_name[1:]} has random weights: which of its heads looks back is an "
            "accident of initialisation, so there is nothing to predict about it here."
        )
    return f"No head of {model_name} looks back clearly more than the others on this input: nothing to predict here."


def concat_check_text(mech: HeadMechanics) -> str:
    if not mech.agrees:
        return f"The recomputation differs from the block's output by {mech.max_abs_error:.1e}."
    return (
        "Recomputing every head from the weight matrices, concatenating and applying W_O gives the block's own "
        f"attention output: the largest difference is {mech.max_abs_error:.1e} (at most float32 rounding). "
        "The heads really are just slices of one computation."
    )


def grid_intro(n_heads_total: int, model_name: str) -> str:
    return (
        f"All {n_heads_total} heads of {model_name} on your sentence, one small map each: rows are layers, "
        "columns heads; inside each map, rows are queries and columns keys, as in the large map below. "
        "Above each map: the pattern that describes it best and how much weight goes there (next step; in "
        "lecture mode, point at a map to see them). The outlined map is the chosen layer and head. First, two "
        "predictions about a trained model's heads."
    )


def labels_intro(threshold: float) -> str:
    return (
        "Each head gets a name from its own weights: for every pattern we average, over the query rows, the weight "
        "it puts on the previous token, the next token, [CLS], [SEP], or itself. The largest of the five names the "
        f"head if it reaches {threshold:.2f}; otherwise the head is *broad*. The mass is that largest average."
    )


PIECES_INTRO = (
    "A WordPiece tokenizer has 30,522 entries. A word it does not hold whole is cut into known pieces; "
    "pieces after the first start with ##. Characters it has no piece for become [UNK]."
)
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


def bank_intro(word: str, river: str, money: str, river_again: str) -> str:
    return (
        f"**The “{word}” pair again, now with a trained model.** The vector of “{word}” in “{river}” against the "
        f"one in “{money}”, and against “{river_again}” (the same sense; all three sentences are word for word the "
        f"same up to and including “{word}”)."
    )


def averages_figure(averages: Sequence[dict[str, float]], model_name: str) -> go.Figure:
    return pattern_lines(averages, title=f"Each pattern's mass, averaged over the heads of a layer ({model_name})")


def averages_alt(averages: Sequence[dict[str, float]]) -> str:
    per_layer = (f"layer {i}: [CLS] {row['[CLS]']:.2f}, [SEP] {row['[SEP]']:.2f}" for i, row in enumerate(averages))
    return "Per layer mean mass of each pattern: " + "; ".join(per_layer) + "."


# ---- word pieces (SameWordMass) ----


def same_word_figure(same: SameWordMass) -> go.Figure:
    return layer_head_heatmap(
        same.mass, title="Weight on the other pieces of the same word, per head", colorbar="weight"
    )


def same_word_alt(same: SameWordMass) -> str:
    layer, head = same.best_head
    return (
        f"Same-word weight per head of all-MiniLM-L6-v2: highest in layer {layer}, head {head} "
        f"({same.at(layer, head):.2f}); uniform would be {same.uniform:.2f}."
    )


def same_word_text(same: SameWordMass, layer: int, head: int, best_pattern: str) -> str:
    """The chosen head's same-word weight against the best head's and a uniform head's (markdown).

    best_pattern: the label of the best head; a neighbour pattern explains its weight by itself."""
    best = same.best_head
    most = (
        "that is the most of any head"
        if best == (layer, head)
        else f"the most goes in layer {best[0]}, head {best[1]}: **{same.at(*best):.2f}**"
    )
    positional = (
        f" Layer {best[0]}, head {best[1]} is a {best_pattern} head: inside a split word the neighbouring token is "
        "a piece of the same word, so a head that looks at its neighbour joins the pieces without trying."
    )
    return (
        f"The pieces of the {same.n_split_words} split word(s) ({same.n_pieces} pieces) put on average "
        f"**{same.at(layer, head):.2f}** of their weight on the other pieces of the same word in layer {layer}, "
        f"head {head}; {most}. A head spreading its weight evenly would give {same.uniform:.2f}."
        + (positional if best_pattern in NEIGHBOUR_PATTERNS else "")
    )


def pieces_map_alt(same: SameWordMass, layer: int, head: int) -> str:
    return (
        f"Layer {layer}, head {head} of all-MiniLM-L6-v2 on the word pieces; outlined blocks are pieces of "
        f"one word; same-word weight {same.at(layer, head):.2f}."
    )


# ---- sentence vectors ----


def similarity_alt(matrix, pooling_name: str) -> str:
    return (
        f"Cosine similarity of {matrix.shape[0]} sentences by {pooling_name}; sentences 0 and 1: "
        f"{float(matrix[0, 1]):.2f}."
    )


def similarities_text(sims: Similarities) -> str:
    """Sentences 0 and 1 under both poolings, and the range each pooling spans over the pairs (markdown)."""
    (lo_mean, hi_mean), (lo_cls, hi_cls) = sims.pair_range("mean"), sims.pair_range("cls")
    return (
        f"Sentences 0 and 1: **{float(sims.mean[0, 1]):.2f}** with mean pooling, **{float(sims.cls[0, 1]):.2f}** "
        f"with [CLS]. Across the pairs of different sentences, mean pooling ranges from {lo_mean:.2f} to "
        f"{hi_mean:.2f}, [CLS] from {lo_cls:.2f} to {hi_cls:.2f}: the narrower the range, the less the vector "
        "tells related sentences from unrelated ones."
    )


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


# ---- tables: the numbers behind the figures ----


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


def shapes_table(mech: HeadMechanics) -> pd.DataFrame:
    return pd.DataFrame([{"tensor": name, "shape": shape_text(s)} for name, s in mech.shapes()])


def w_o_table(mech: HeadMechanics) -> pd.DataFrame:
    return matrix_table(mech.w_o, range(mech.w_o.shape[0]), "output feature", numbered=False)


def labels_table(labels: Sequence[HeadLabel]) -> pd.DataFrame:
    """One row per head: its label, the mass behind it, and every pattern's mass."""
    return pd.DataFrame(
        [
            {"layer": lab.layer, "head": lab.head, "pattern": lab.pattern, "mass": round(lab.mass, 3)}
            | {p: round(v, 3) for p, v in lab.masses.items()}
            for lab in labels
        ]
    )


def averages_table(averages: Sequence[dict[str, float]]) -> pd.DataFrame:
    return pd.DataFrame(averages).round(4).reset_index(names="layer")


def layer_head_table(values) -> pd.DataFrame:
    """An (L, H) table of one number per head: a row per layer, a column per head."""
    n_layers, n_heads = values.shape
    return matrix_table(values, range(n_layers), "layer", [f"head {h}" for h in range(n_heads)], numbered=False)


def fragmentation_table(splits: SentenceSplits) -> pd.DataFrame:
    """One row per typed word: which sentence, the word, its pieces and how many."""
    rows = [
        {"sentence": name, "word": split.word, "pieces": " ".join(split.pieces), "count": split.n_pieces}
        for name, split in splits.splits
    ]
    return pd.DataFrame(rows, columns=["sentence", "word", "pieces", "count"])


def similarity_table(matrix, texts: Sequence[str]) -> pd.DataFrame:
    """(N, N) cosines, rows and columns numbered from 0 as in the figure."""
    names = [f"{i}: {t}" for i, t in enumerate(texts)]
    return matrix_table(matrix, names, "sentence", [str(i) for i in range(len(texts))], numbered=False)


def bank_table(different: WordVectorCosines, same: WordVectorCosines) -> pd.DataFrame:
    """The two cosine curves of bank_figure, by depth."""
    return pd.DataFrame(
        {
            "stage": after_layer_names(len(different.per_layer)),
            "river vs money": different.per_layer,
            "river vs stream": same.per_layer,
        }
    ).round(4)


# ---- Charts: each figure with its text alternative and, where there is one, its table ----


def slice_charts(mech: HeadMechanics) -> dict[str, Chart]:
    """The chosen head's Q, K and V slices, by name."""
    slices = mech.slices()
    return {
        name: Chart(slice_figure(mech, name), slice_alt(mech, name), token_table(matrix, mech.tokens))
        for name, matrix in slices.items()
    }


def own_weights_chart(mech: HeadMechanics) -> Chart:
    return Chart(own_weights_figure(mech), own_weights_alt(mech), weights_table(mech.weights, mech.tokens))


def concatenation_chart(mech: HeadMechanics) -> Chart:
    return Chart(concatenation_figure(mech), concat_alt(mech), token_table(mech.concat, mech.tokens))


def w_o_chart(mech: HeadMechanics) -> Chart:
    return Chart(w_o_figure(mech), w_o_alt(mech), w_o_table(mech))


def grid_chart(attentions, labels: Sequence[HeadLabel], chosen: HeadLabel, model_name: str, *, captions: bool) -> Chart:
    """Every head's map (attentions (L, H, T, T), already cut to the tokens shown), the chosen one outlined."""
    n_layers, n_heads = attentions.shape[:2]
    title = f"{n_layers} layers × {n_heads} heads"
    fig = head_grid(attentions, labels, (chosen.layer, chosen.head), title=title, captions=captions)
    return Chart(fig, grid_alt(chosen, n_layers * n_heads, model_name))


def head_map_chart(weights, tokens: Sequence[str], chosen: HeadLabel, n_tokens: int, model_name: str) -> Chart:
    """The chosen head's large map (weights cut to the tokens shown; n_tokens: the whole input's length)."""
    fig = head_map(weights, tokens, title=f"Layer {chosen.layer}, head {chosen.head}")
    return Chart(fig, head_map_alt(chosen, n_tokens, model_name), weights_table(weights, tokens))


def averages_chart(averages: Sequence[dict[str, float]], model_name: str) -> Chart:
    return Chart(averages_figure(averages, model_name), averages_alt(averages), averages_table(averages))


def same_word_chart(same: SameWordMass) -> Chart:
    return Chart(same_word_figure(same), same_word_alt(same), layer_head_table(same.mass))


def pieces_map_chart(weights, tokens: Sequence[str], spans, same: SameWordMass, layer: int, head: int) -> Chart:
    """One head's map with each split word's block outlined (spans: core's piece_spans of tokens)."""
    fig = pieces_map(weights, tokens, spans, title=f"Layer {layer}, head {head}, with pieces")
    return Chart(fig, pieces_map_alt(same, layer, head))


POOLINGS = {"mean": "mean pooling", "cls": "[CLS] vector"}  # the order the page shows them in


def similarity_charts(sims: Similarities) -> dict[str, Chart]:
    """Each pooling's (N, N) cosines, by pooling ("mean", "cls")."""
    charts = {}
    for pooling, name in POOLINGS.items():
        matrix = getattr(sims, pooling)
        figure = similarity_figure(matrix, sims.texts, title=f"Cosine similarity, {name}")
        charts[pooling] = Chart(figure, similarity_alt(matrix, name), similarity_table(matrix, sims.texts))
    return charts


def bank_chart(different: WordVectorCosines, same: WordVectorCosines) -> Chart:
    return Chart(bank_figure(different, same), bank_alt(different, same), bank_table(different, same))


ALL_UNKNOWN_TEXT = (
    "Every word became [UNK]: the model sees no content, only the unknown-word token. "
    "The maps below show how it attends when it knows nothing about the words."
)
