"""Section 4, fill in the blank: which model answers, how the typed text was read, and each blank's top-k."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.masking import FillMaskView, FillPlan, GuessRank, MaskPrediction
from encoder_core.model.config import EncoderConfig

from ..figures import PAIR, Chart, as_array, esc

OTHER_WORDS = "all other words"
OTHER_COLOUR = "#9a9a9a"
PIECE_COLOUR = "#8fb3d9"  # a lighter bar: the end of a word, not a word
PIECE_MARK = " (word piece)"

TRY_WORD = "Try any word: where does the model rank it at the first blank?"

FILL_MODEL_NAMES = {"minilm": "all-MiniLM-L6-v2 with the lab's MLM head", "mlm": "the lab's small trained MLM"}


def fill_position_notice(asked: str, n_words: int, using: int) -> str:
    """What the page says when the hidden word's position (asked: as the link gave it, made safe for a code
    span by ui.frame.params.snippet) is not one of this sentence's words."""
    return f"`fill_position={asked}` is outside this sentence's 0–{n_words}; using {using}."


def fill_model_text(asked: str, used: str, parameters: int) -> str:
    """Which model answers the fill-in-the-blank, how big it is, and where the other one is."""
    name = FILL_MODEL_NAMES[used]
    if used == "minilm":
        why = "the best guesser the lab has, a real pretrained encoder"
    else:
        why = "the small model the rest of this lesson is built around: fast enough to train live, and weak at English"
    text = f"Answered by **{name}** ({parameters / 1e6:.1f} M parameters), {why}."
    if asked != used:
        text += f" ({FILL_MODEL_NAMES[asked]} could not be loaded.)"
    return text


def fill_model_name(choice: str) -> str:
    return FILL_MODEL_NAMES[choice]


def other_fill_model(used: str) -> str:
    return "mlm" if used == "minilm" else "minilm"


def other_fill_model_label(used: str) -> str:
    return f"Ask {FILL_MODEL_NAMES[other_fill_model(used)]} instead"


# What the page says about a typed text, as (level, text): "warning" when what runs is not what was typed.
def fill_plan_notes(plan: FillPlan) -> list[tuple[str, str]]:
    """Everything the page must say about how the typed fill-mask text was read (plan from plan_fill)."""
    notes: list[tuple[str, str]] = []
    max_positions = plan.max_positions
    if plan.fallback == "last_word":
        notes.append(
            (
                "info",
                f"There is no [MASK] in your sentence, so its last word, “{plan.hidden}”, is hidden. Type "
                "[MASK] where a word should go, or choose another word to hide above.",
            )
        )
    elif plan.fallback == "example":
        why = (
            f"every [MASK] in it lies past the model's {max_positions} positions and was cut"
            if plan.blanks_cut
            else "there is no [MASK] in it and no word the model could be asked for"
        )
        notes.append(
            ("warning", f"Your sentence cannot be filled in ({why}), so the example runs instead: “{plan.text}”.")
        )
    if plan.glued:
        shown = ", ".join(f"“{g}”" for g in plan.glued[:5])
        notes.append(
            (
                "info",
                f"[MASK] was typed against a word in {shown}: it is read as a blank of its own next to that word, "
                "as if there were a space. One [MASK] stands for one whole token.",
            )
        )
    if plan.only_masks:
        notes.append(
            (
                "info",
                "Every position is a blank: with no word to read on either side, the model can only fall back on "
                "what is common anywhere, so its guesses here say little about the sentence.",
            )
        )
    if plan.n_skipped:
        notes.append(
            (
                "info",
                f"{plan.n_blanks:,} blanks: the first {plan.n_computed} are ranked and shown, the other "
                f"{plan.n_skipped:,} are read as [MASK] but not ranked (each ranked blank is a softmax over the whole "
                "vocabulary and a chart of its own).",
            )
        )
    if plan.blanks_cut and plan.fallback != "example":
        notes.append(
            ("info", f"{plan.blanks_cut:,} [MASK]s past the model's {max_positions} positions were cut with the text.")
        )
    return notes


def blanks_narrative(n_blanks: int) -> str:
    return (
        f"{n_blanks} blanks are filled in one pass: each guess sees the other blanks only as "
        "[MASK], never the other guesses. That is why an encoder cannot simply write a sentence."
    )


def shown_blanks_text(view: FillMaskView) -> str | None:
    """Said when only the first blanks were ranked."""
    shown = len(view.predictions)
    if view.n_blanks <= shown:
        return None
    return f"Showing the first {shown} of {view.n_blanks} blanks: only those are ranked."


def token_name(token: str, piece: bool) -> str:
    """How a top-k entry is named on the page: a piece that continues a word says so."""
    return token + PIECE_MARK if piece else token


def top_k_bars(
    tokens: Sequence[str],
    probabilities,
    *,
    rest: float | None = None,
    title: str = "",
    pieces: Sequence[bool] | None = None,
) -> go.Figure:
    """A fill-mask answer: the top-k tokens for one masked position, most likely at the top, and under
    them (with rest) one bar for every other word together, so the bars add up to the whole 100%.
    A word piece ("##ing": the end of a word) is named so and drawn lighter."""
    p = list(as_array(probabilities))
    pieces = list(pieces) if pieces is not None else [False] * len(p)
    names = [esc(token_name(t, piece)) for t, piece in zip(tokens, pieces)]
    colours = [PIECE_COLOUR if piece else PAIR[0] for piece in pieces]
    if rest is not None:
        p, names, colours = p + [rest], names + [OTHER_WORDS], colours + [OTHER_COLOUR]
    fig = go.Figure(
        go.Bar(
            x=p[::-1],
            y=names[::-1],
            orientation="h",
            marker_color=colours[::-1],
            text=[f"{v:.1%}" for v in p[::-1]],
            textposition="outside",
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": esc(title)},
        # The whole 0..100%: a probability is a share of 1; space past 1 for the labels.
        xaxis={
            "title": {"text": "probability"},
            "range": [0, 1.2],
            "tickvals": [0, 0.25, 0.5, 0.75, 1],
            "tickformat": ".0%",
        },
        yaxis={"title": {"text": "word"}, "type": "category"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=280,
    )
    return fig


def context(tokens: Sequence[str], position: int, width: int = 3) -> str:
    """A few words either side of a position, for a chart title: 'the [MASK] sat on'."""
    lo, hi = max(1, position - width), min(len(tokens) - 1, position + width + 1)  # never [CLS] / the last [SEP]
    left = "... " if lo > 1 else ""
    right = " ..." if hi < len(tokens) - 1 else ""
    return left + " ".join(tokens[lo:hi]) + right


def fill_figure(view: FillMaskView, pred: MaskPrediction) -> go.Figure:
    """One blank's top-k, titled by the words around it."""
    title = f"{context(view.tokens, pred.position, width=2)}: top {len(pred.words)} and all other words"
    return top_k_bars(pred.words, pred.probabilities, rest=pred.rest, title=title, pieces=pred.pieces)


def fill_alt(pred: MaskPrediction) -> str:
    words = [token_name(w, piece) for w, piece in zip(pred.words, pred.pieces)]
    probs = pred.probabilities
    rest = ", ".join(f"'{w}' {p:.1%}" for w, p in zip(words[1:], probs[1:]))
    first = f"At position {pred.position} the model's first choice is '{words[0]}' with probability {probs[0]:.1%}"
    return f"{first}, then {rest}; all other words together: {pred.rest:.1%}."


def top_k_table(pred: MaskPrediction) -> pd.DataFrame:
    return pd.DataFrame({"token": pred.words, "probability": pred.probabilities, "word piece": pred.pieces})


def fill_chart(view: FillMaskView, pred: MaskPrediction) -> Chart:
    return Chart(fill_figure(view, pred), fill_alt(pred), top_k_table(pred))


def pieces_text(view: FillMaskView) -> str | None:
    """What a "##" entry in the top-k is, when one is shown; None otherwise."""
    shown = sorted({w for pred in view.predictions for w, piece in zip(pred.words, pred.pieces) if piece})
    if not shown:
        return None
    names = ", ".join(f"“{w}”" for w in shown)
    return (
        f"{names}: a word piece, not a word. “##” marks the end of a word that is glued to the piece before "
        "it (“walk” + “##ing”), so here the model bets that the blank finishes a longer word; on its own it "
        "would not make a word in the sentence."
    )


def ranking_text(view: FillMaskView, vocab_size: int) -> str:
    """How the bars were computed, and what a "##" entry among them is."""
    k = len(view.predictions[0].top)
    text = (
        f"Each blank's probabilities are a softmax over all {vocab_size:,} vocabulary entries; torch.topk picks "
        f"the {k} shown, and one bar holds all the others together."
    )
    pieces = pieces_text(view)
    return f"{pieces} {text}" if pieces else text


def hidden_word_text(pred: MaskPrediction, word: str, vocab_size: int) -> str:
    """Where the hidden word ranks; word is pred.hidden_word as the page writes it (escaped for markdown)."""
    if pred.hidden_rank is None:
        return f"The hidden word '{word}' is not in the vocabulary: it can never be guessed."
    return (
        f"The hidden word '{word}' is choice {pred.hidden_rank} of {vocab_size}, "
        f"probability {pred.hidden_probability:.1%}."
    )


def guess_rank_text(g: GuessRank) -> str:
    """A word's place in the model's ranking at the first blank (or why it has none), in one sentence."""
    if g.rank is None:
        if g.problem == "several":
            return f"“{g.guess}” is not one token: the model reads it as {' '.join(g.pieces)}, so no blank can hold it."
        if g.problem == "special":
            return f"“{g.guess}” is a special token, not a word."
        if g.problem == "unknown":
            return f"“{g.guess}” is not in the vocabulary (it reads as [UNK])."
        return "Type one word."
    p = f"{g.probability:.1%}" if g.probability >= 0.001 else f"{g.probability:.1e}"
    piece = " It is a word piece: the end of a longer word." if g.token and g.token.startswith("##") else ""
    return f"“{g.guess}” is choice {g.rank:,} of {g.vocab_size:,} at the first blank, probability {p}.{piece}"


def model_quality_text(
    metadata: dict, config: EncoderConfig, vocab_size: int, name: str = "The lab's model"
) -> str | None:
    """The trained model's held-out fill-mask scores from its metadata, or None when they were not recorded.

    Real English (WordNet's held-out example sentences) first, then the lab's own grammar if measured."""
    real, grammar = metadata.get("real_metrics", {}), metadata.get("metrics", {})
    if "top1" not in grammar and "top1" not in real:
        return None

    def scores(m: dict) -> str:
        return (
            f"{m['top1']:.1%} at its first guess and {m['top5']:.1%} within five (always guessing the most "
            f"frequent training words: {m.get('baseline_top1', float('nan')):.1%} and "
            f"{m.get('baseline_top5', float('nan')):.1%})"
        )

    size = f"d={config.d_model}, {config.n_layers} layers, {vocab_size:,} word pieces"
    name = name[0].upper() + name[1:] if name.startswith("the ") else name  # a model's own name keeps its case
    text = f"{name} ({size}), one content "
    if "top1" in real:
        text += (
            f"word hidden in each of {real['n_examples']:,} real English sentences left out of the lab's "
            f"training text: {scores(real)}."
        )
        if "top1" in grammar:
            text += f" On {grammar['n_examples']:,} unseen sentences of the lab's grammar: {scores(grammar)}."
    else:
        text += f"word hidden in each of {grammar['n_examples']:,} unseen sentences: {scores(grammar)}."
    return text
