"""Section 5, words in pieces: how the sentence was split, and the heads that join a word's pieces."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.heads import SameWordMass, SentenceSplits
from encoder_core.model.head_patterns import NEIGHBOUR_PATTERNS

from ..figures import CELL_VALUES, COLORBAR_X, SEQUENTIAL, Chart, attention_heatmap, esc, wire_array
from .common import MAP_MAX_HEIGHT, SELECTED_COLOUR, matrix_table

PIECES_INTRO = (
    "A WordPiece tokenizer has 30,522 entries. A word it does not hold whole is cut into known pieces; "
    "pieces after the first start with ##. Characters it has no piece for become [UNK]."
)


def fragmentation_table(splits: SentenceSplits) -> pd.DataFrame:
    """One row per typed word: which sentence, the word, its pieces and how many."""
    rows = [
        {"sentence": name, "word": split.word, "pieces": " ".join(split.pieces), "count": split.n_pieces}
        for name, split in splits.splits
    ]
    return pd.DataFrame(rows, columns=["sentence", "word", "pieces", "count"])


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


def layer_head_heatmap(values, *, title: str, colorbar: str, zmax: float = 1.0) -> go.Figure:
    """An (L, H) table of one number per head."""
    v = wire_array(values)
    L, H = v.shape
    fig = go.Figure(
        go.Heatmap(
            z=v,
            x=[f"head {h}" for h in range(H)],
            y=[f"layer {layer}" for layer in range(L)],
            zmin=0.0,
            zmax=zmax,
            colorscale=SEQUENTIAL,
            texttemplate=CELL_VALUES,
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


def layer_head_table(values) -> pd.DataFrame:
    """An (L, H) table of one number per head: a row per layer, a column per head."""
    n_layers, n_heads = values.shape
    return matrix_table(values, range(n_layers), "layer", [f"head {h}" for h in range(n_heads)], numbered=False)


def same_word_chart(same: SameWordMass) -> Chart:
    return Chart(same_word_figure(same), same_word_alt(same), layer_head_table(same.mass))


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


def pieces_map_alt(same: SameWordMass, layer: int, head: int) -> str:
    return (
        f"Layer {layer}, head {head} of all-MiniLM-L6-v2 on the word pieces; outlined blocks are pieces of "
        f"one word; same-word weight {same.at(layer, head):.2f}."
    )


def pieces_map_chart(weights, tokens: Sequence[str], spans, same: SameWordMass, layer: int, head: int) -> Chart:
    """One head's map with each split word's block outlined (spans: core's piece_spans of tokens)."""
    fig = pieces_map(weights, tokens, spans, title=f"Layer {layer}, head {head}, with pieces")
    return Chart(fig, pieces_map_alt(same, layer, head))
