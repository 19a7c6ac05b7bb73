"""Figures and tables for the masked-language-modelling lesson. Pure: core results in, plotly Figure or
pandas DataFrame out; every word shown for a core code is written here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from functools import partial

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.masking import (
    COUNT_EXAMPLE_TEXT,
    FATES,
    LEAKAGE_RUNS,
    CountExample,
    DrawPosition,
    FillMaskView,
    FillPlan,
    GuessRank,
    LeakageSummary,
    MaskingDraw,
    MaskPrediction,
    MLMForward,
    NSPExample,
)
from encoder_core.model.config import EncoderConfig
from encoder_core.objectives.loss import LossBreakdown
from encoder_core.objectives.mlm_masking import MaskCounts

from .figures import PAIR, Chart, as_array, esc, label_room, percent_metrics, token_labels

# ---- one draw: choose, corrupt, label ----
SPLIT_COLOURS = {"[MASK]": PAIR[0], "random token": PAIR[1], "kept": "#6b4c9a", "not chosen": "#d9d9d9"}
FATE_WORDS = {
    "never_eligible": "never eligible",
    "not_chosen": "not chosen",
    "masked": "[MASK]",
    "random": "random token",
    "kept": "kept",
}
FATE_COLOURS = {
    "never_eligible": "#ffffff",
    "not_chosen": SPLIT_COLOURS["not chosen"],
    "masked": PAIR[0],
    "random": PAIR[1],
    "kept": SPLIT_COLOURS["kept"],
}
REASON_WORDS = {"unknown": "[UNK]", "typed_mask": "[MASK]"}  # a "special" position is named by its own token


def what_happened(p: DrawPosition) -> str:
    """A position's fate in words; a never-eligible one also names what sits there ("never eligible: [CLS]")."""
    if p.fate != "never_eligible":
        return FATE_WORDS[p.fate]
    return f"never eligible: {p.token if p.reason == 'special' else REASON_WORDS[p.reason]}"


def draw_table(positions: Sequence[DrawPosition], labels: bool = True) -> pd.DataFrame:
    """The draw token by token, the numbers behind draw_figure (labels: with each position's label)."""
    return pd.DataFrame(
        [
            {
                "position": p.position,
                "original token": p.token,
                "original id": p.original_id,
                "chosen": p.chosen,
                "what happened": what_happened(p),
                "model receives": p.input_token,
                "input id": p.input_id,
                **({"label": p.label} if labels else {}),
            }
            for p in positions
        ]
    )


def draw_figure(positions: Sequence[DrawPosition], *, title: str = "", labels: bool = True) -> go.Figure:
    """One draw, token by token: the original sentence over what the model receives, coloured by fate.

    With labels, each cell also carries its label (-100 where the loss ignores it).
    """
    codes = [FATES.index(p.fate) for p in positions]
    n = len(FATES) - 1
    scale = []
    for i, fate in enumerate(FATES):  # a step per fate: code i covers [i/n - 1/2n, i/n + 1/2n]
        lo, hi = max(0.0, (i - 0.5) / n), min(1.0, (i + 0.5) / n)
        scale += [[lo, FATE_COLOURS[fate]], [hi, FATE_COLOURS[fate]]]
    fig = go.Figure(
        go.Heatmap(
            z=[codes, codes],
            x=[str(p.position) for p in positions],
            y=["original", "model receives"],
            text=[[esc(p.token) for p in positions], [esc(p.input_token) for p in positions]],
            customdata=[[[FATE_WORDS[p.fate], f", label {p.label}" if labels else ""] for p in positions]] * 2,
            texttemplate="%{text}",
            zmin=0,
            zmax=n,
            colorscale=scale,
            showscale=False,
            xgap=2,
            ygap=2,
            hovertemplate="position %{x}: %{text} (%{customdata[0]}%{customdata[1]})<extra></extra>",
        )
    )
    for fate in FATES:  # a legend: heatmaps have none of their own
        fig.add_scatter(
            x=[None],
            y=[None],
            mode="markers",
            name=FATE_WORDS[fate],
            marker={
                "symbol": "square",
                "size": 14,
                "color": FATE_COLOURS[fate],
                "line": {"color": "#777777", "width": 1},
            },
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "position"}, "side": "top"},
        yaxis={"title": {"text": "row"}, "autorange": "reversed"},
        legend={"orientation": "h", "y": -0.15},
        margin={"l": label_room(["model receives"]), "r": 10, "t": 90, "b": 62},  # b: the legend
        height=300,
    )
    return fig


def split_bar(counts, *, title: str = "") -> go.Figure:
    """One horizontal bar of all eligible tokens, split into [MASK] / random / kept / not chosen."""
    parts = {
        "[MASK]": counts.masked,
        "random token": counts.random,
        "kept": counts.kept,
        "not chosen": counts.eligible - counts.chosen,
    }
    fig = go.Figure()
    for name, n in parts.items():
        fig.add_bar(
            x=[n],
            y=["eligible tokens"],
            orientation="h",
            name=f"{name}: {n}",
            marker_color=SPLIT_COLOURS[name],
            text=[str(n)] if n else None,
            textposition="inside",
            hovertemplate=f"{esc(name)}: {n}<extra></extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        barmode="stack",
        xaxis={"title": {"text": "tokens"}},
        yaxis={"showticklabels": False},
        legend={"orientation": "h", "y": -0.6, "traceorder": "normal"},
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        height=220,
    )
    return fig


def split_table(counts: MaskCounts) -> pd.DataFrame:
    """The worked count in one row: eligible, chosen, masked, random, kept."""
    return pd.DataFrame([asdict(counts)])


def count_metrics(counts: MaskCounts) -> list[tuple[str, int]]:
    """The draw's counts under the names the page's metrics show."""
    return [
        ("eligible", counts.eligible),
        ("chosen", counts.chosen),
        ("[MASK]", counts.masked),
        ("random token", counts.random),
        ("kept", counts.kept),
    ]


def every_fate_text(draw: MaskingDraw, rate_for_all: float | None) -> str | None:
    """When a draw shows only some of the three fates, say so, and which rate shows all three."""
    c = draw.counts
    missing = [name for name, n in (("[MASK]", c.masked), ("random token", c.random), ("kept", c.kept)) if n == 0]
    if c.chosen == 0 or not missing:
        return None
    where = (
        f" With this sentence's {c.eligible} eligible tokens, the exact count shows all three from a rate of "
        f"{rate_for_all:.2f}."
        if rate_for_all is not None
        else f" This sentence's {c.eligible} eligible tokens are too few for all three at any rate."
    )
    return (
        f"This draw has no {' and no '.join(missing)}: of {c.chosen} chosen, {c.masked} became [MASK], "
        f"{c.random} a random token and {c.kept} were kept.{where}"
    )


HEAD = "masked-language-model head (the layer that turns each vector into a score for every word)"


def mlm_choice_text(asked: str, used: str, name: str, metadata: dict) -> str:
    """Which model fills in [MASK] on this page, and why that one (asked: the sidebar's choice)."""
    why = f"The seeded small model has random weights and no {HEAD}, so it has nothing to guess with. "
    why = why if asked == "small" else ""
    if used == "minilm":
        frozen = int(metadata.get("frozen_layers", metadata.get("settings", {}).get("frozen_layers", 0)))
        return (
            f"{why}This lesson runs on {name}, the best guesser here. MiniLM was published without "
            f"{'such a head' if why else 'a ' + HEAD}: it was tuned to make sentence vectors. The lab trained "
            f"one for it on real English, together with its layers {frozen} and up; its word embeddings and "
            f"layers 0 to {frozen - 1} are exactly as published."
        )
    fill = "" if asked == "minilm" else " Fill in the blank, below, has its own choice of model."
    return f"{why}This lesson runs on {name}" + (", as the sidebar says." if asked == used else ".") + fill


def nothing_chosen_text(draw: MaskingDraw, labels: bool = True) -> str:
    """Why nothing carries a loss: no ordinary token to choose, or none chosen at this rate (labels: saying
    what every label is, once the loss question is answered)."""
    if draw.counts.eligible == 0:
        return (
            "This sentence has no ordinary token to choose: [CLS], [SEP], [PAD] (and here [UNK] and a typed "
            "[MASK]) are never eligible, so nothing is masked and there is nothing to learn from it."
        )
    return (
        f"Nothing was chosen (rate {draw.rate:g} of {draw.counts.eligible} eligible tokens)"
        + (", so every label is -100" if labels else "")
        + ": this sentence would add no loss and teach the model nothing."
    )


def rule_text(draw: MaskingDraw) -> str:
    """The draw against the rule: the exact counts it must match, or the coin flip's average and spread."""
    counts, rule, rate = draw.counts, draw.rule, f"{draw.rate:g}"
    if draw.exact:
        verdict = "matches" if draw.follows_rule else "does NOT match"
        return (
            f"The rule for **{rule.eligible}** eligible tokens at rate **{rate}**: "
            f"round({rate} x {rule.eligible}) = **{rule.chosen}** chosen, then 80/10/10 gives "
            f"**{rule.masked}** [MASK], **{rule.random}** random, **{rule.kept}** kept. This draw {verdict} it."
        )
    return (
        f"Coin flip: each of the {counts.eligible} eligible tokens is chosen with probability {rate}, "
        f"so on average {draw.expected_chosen:.2f} are chosen (give or take {draw.chosen_spread:.2f}); this "
        f"draw chose **{counts.chosen}**. The exact rule would choose {rule.chosen}."
    )


def draw_alt(counts: MaskCounts, labels: bool = True) -> str:
    return (
        f"Of {counts.eligible} eligible tokens in the sentence, {counts.chosen} were chosen: {counts.masked} "
        f"became [MASK], {counts.random} a random token and {counts.kept} were kept"
        + ("; every other position is labelled -100." if labels else ".")
    )


WHY_NOT_ALWAYS_MASK = (
    "Why not always [MASK]? [MASK] never occurs when the model is later used on real text: a model that met "
    "nothing else in training would be reading inputs unlike any it learnt from."
)
LABELS_HELD = (
    "Which positions get a label, and which get -100, is the prediction in “The loss”: answer it there first, "
    "and the labels appear here too."
)


def worked_count_text(worked: MaskCounts, rate: float) -> str:
    n = worked.eligible
    return (
        f"**Worked count.** {n} eligible tokens at rate {rate:g}: round({rate:g} x {n}) = "
        f"**{worked.chosen}** chosen, of which round(0.8 x {worked.chosen}) = **{worked.masked}** [MASK], "
        f"**{worked.random}** random and **{worked.kept}** kept."
    )


def draw_chart(draw: MaskingDraw, labels: bool = True) -> Chart:
    """The draw; without labels (before the loss prediction is answered) nothing says which positions are scored."""
    counts = draw.counts
    title = f"This draw: {counts.chosen} of {counts.eligible} eligible tokens chosen"
    figure = draw_figure(draw.positions, title=title, labels=labels)
    return Chart(figure, draw_alt(counts, labels), partial(draw_table, draw.positions, labels))


def split_chart(worked: MaskCounts, rate: float) -> Chart:
    title = f"{worked.eligible} eligible tokens at rate {rate:g}"
    return Chart(split_bar(worked, title=title), split_alt(worked), partial(split_table, worked))


def split_alt(worked: MaskCounts) -> str:
    return (
        f"Of {worked.eligible} eligible tokens, {worked.chosen} are chosen: {worked.masked} become [MASK], "
        f"{worked.random} a random token, {worked.kept} stay as they are."
    )


# ---- shapes ----


SHAPE_ROWS = {  # a SHAPE_STEPS code -> (the tensor's name, what it holds)
    "ids": ("token ids", "B sequences, T positions: the corrupted input"),
    "hidden": ("hidden states", "D numbers per position, built from both sides"),
    "logits": ("logits", "a score for each of V vocabulary words at every position"),
    "chosen_logits": ("logits at labelled positions", "only the rows the loss reads: one per label that is not -100"),
}


def shape_table(steps: Sequence[tuple[str, tuple[int, ...]]]) -> pd.DataFrame:
    """MLMForward.shape_steps() as a table: the tensor, its shape, what it holds."""
    return pd.DataFrame(
        [
            {"tensor": SHAPE_ROWS[code][0], "shape": str(shape), "what it holds": SHAPE_ROWS[code][1]}
            for code, shape in steps
        ]
    )


SHAPES_HELD = (
    "The last step, the logits the loss reads, waits for your prediction in “The loss”: which positions "
    "it reads is the question there."
)


def shape_chain(steps: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    """The shapes in order, one line: (1, 15) -> (1, 15, 64) -> ..."""
    return " -> ".join(str(shape) for _, shape in steps)


def exercise_question(ex: dict[str, int]) -> str:
    """The shapes exercise (core's EXERCISE_SHAPE) as a question."""
    return (
        f"Try it: {ex['batch']} sequences of length {ex['length']}, width {ex['d_model']}, "
        f"{ex['vocab_size']:,} words, {ex['n_masked']} masked positions. What are the shapes?"
    )


# ---- the loss ----
IGNORED_GREY = "#b0b0b0"


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


def mean_text(value: float) -> str:
    return "undefined" if value != value else f"{value:.4f}"  # nan: nothing was chosen, no positions to average


def fill_position_notice(asked: str, n_words: int, using: int) -> str:
    """What the page says when the hidden word's position (asked: as the link gave it, made safe for a code
    span by ui.frame.params.snippet) is not one of this sentence's words."""
    return f"`fill_position={asked}` is outside this sentence's 0–{n_words}; using {using}."


LOSS_NARRATIVE = (
    "Only chosen positions get a label (their original id); every other position is labelled **-100**, "
    "the value PyTorch's cross-entropy skips. A chosen position that got a random word, or kept its own, "
    "is scored like a [MASK]: any position might be scored, so every position's vector has to stay honest."
)
NO_LOSS_TEXT = (
    "No position carries a loss in this draw, so the mean is undefined: there are no positions to "
    "average (PyTorch returns nan here). Raise the rate or draw again."
)


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


def count_example_text(ex: CountExample, text: str = COUNT_EXAMPLE_TEXT) -> str:
    b = ex.forward.breakdown
    return (
        f"**Count before you average.** *{text}* is {ex.n_positions} positions with "
        f"[CLS] and [SEP]. Hide two of them: the model receives `{' '.join(ex.input_tokens)}`. The loss is the "
        f"mean of **{ex.n_counted}** terms, {mean_text(b.mean)}; dividing by all {ex.n_positions} positions "
        f"gives {mean_text(b.wrong_mean_all_positions)}, a loss {ex.n_positions / ex.n_counted:.0f} times too "
        "small that also shifts with how long the sentence is."
    )


def loss_chart(fwd: MLMForward, tokens: Sequence[str], input_tokens: Sequence[str]) -> Chart:
    """The draw's loss, position by position."""
    title = "Cross-entropy at each position (grey: label -100, contributes nothing)"
    figure = loss_figure(fwd, tokens, input_tokens, title=title)
    return Chart(figure, loss_alt(fwd.breakdown), loss_table(fwd, tokens, input_tokens))


def count_example_chart(ex: CountExample) -> Chart:
    title = f"{ex.n_positions} positions, {ex.n_counted} hidden: the mean is over {ex.n_counted}"
    figure = loss_figure(ex.forward, ex.tokens, ex.input_tokens, title=title)
    return Chart(figure, count_example_alt(ex), loss_table(ex.forward, ex.tokens, ex.input_tokens))


def count_example_alt(ex: CountExample) -> str:
    b = ex.forward.breakdown
    return (
        f"Of {ex.n_positions} positions, {ex.n_counted} carry a loss: right mean {mean_text(b.mean)}, "
        f"wrong mean over all positions {mean_text(b.wrong_mean_all_positions)}."
    )


# ---- fill-mask ----


OTHER_WORDS = "all other words"
OTHER_COLOUR = "#9a9a9a"
PIECE_COLOUR = "#8fb3d9"  # a lighter bar: the end of a word, not a word
PIECE_MARK = " (word piece)"


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
        # The whole 0..100%: a probability is a share of 1; room past 1 for the labels.
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


def fill_chart(view: FillMaskView, pred: MaskPrediction) -> Chart:
    return Chart(fill_figure(view, pred), fill_alt(pred), top_k_table(pred))


def top_k_table(pred: MaskPrediction) -> pd.DataFrame:
    return pd.DataFrame({"token": pred.words, "probability": pred.probabilities, "word piece": pred.pieces})


def fill_alt(pred: MaskPrediction) -> str:
    words = [token_name(w, piece) for w, piece in zip(pred.words, pred.pieces)]
    probs = pred.probabilities
    rest = ", ".join(f"'{w}' {p:.1%}" for w, p in zip(words[1:], probs[1:]))
    first = f"At position {pred.position} the model's first choice is '{words[0]}' with probability {probs[0]:.1%}"
    return f"{first}, then {rest}; all other words together: {pred.rest:.1%}."


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


def ranking_text(view: FillMaskView, vocab_size: int) -> str:
    """How the bars were computed, and what a "##" entry among them is."""
    k = len(view.predictions[0].top)
    text = (
        f"Each blank's probabilities are a softmax over all {vocab_size:,} vocabulary entries; torch.topk picks "
        f"the {k} shown, and one bar holds all the others together."
    )
    pieces = pieces_text(view)
    return f"{pieces} {text}" if pieces else text


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


TRY_WORD = "Try any word: where does the model rank it at the first blank?"


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


FILL_MODEL_NAMES = {"minilm": "all-MiniLM-L6-v2 with the lab's MLM head", "mlm": "the lab's small trained MLM"}


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


def hidden_word_text(pred: MaskPrediction, word: str, vocab_size: int) -> str:
    """Where the hidden word ranks; word is pred.hidden_word as the page writes it (escaped for markdown)."""
    if pred.hidden_rank is None:
        return f"The hidden word '{word}' is not in the vocabulary: it can never be guessed."
    return (
        f"The hidden word '{word}' is choice {pred.hidden_rank} of {vocab_size}, "
        f"probability {pred.hidden_probability:.1%}."
    )


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


# ---- leakage ----


RUN_NAMES = {"correct": "correct masking", "leaky": "leaky: answer left in the input"}


def training_curves(
    steps, series: dict[str, object], *, title: str, y_title: str, y_range: tuple[float, float] | None = None
) -> go.Figure:
    """Correct vs leaky training, one line each over the same steps (solid vs dashed, blue vs orange)."""
    fig = go.Figure()
    for (name, values), colour, dash in zip(series.items(), PAIR, ("solid", "dash")):
        fig.add_scatter(
            x=as_array(steps),
            y=as_array(values),
            name=esc(name),
            mode="lines",
            line={"color": colour, "dash": dash, "width": 3},
            hovertemplate="step %{x}: %{y:.3f}<extra>" + esc(name) + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "training step"}},
        yaxis={"title": {"text": y_title}, **({"range": list(y_range)} if y_range else {})},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=380,
    )
    return fig


def run_series(curves: dict[str, list[float]]) -> dict[str, list[float]]:
    """A per-run curve under each run's name, correct first."""
    return {RUN_NAMES[run]: curves[run] for run in LEAKAGE_RUNS}


def leakage_accuracy_chart(summary: LeakageSummary) -> Chart:
    figure = training_curves(
        summary.steps,
        run_series(summary.accuracy),
        title=f"Training accuracy at the scored positions (mean of the last {summary.window} steps)",
        y_title="accuracy",
        y_range=(0.0, 1.05),
    )
    return Chart(figure, leakage_accuracy_alt(summary), curves_table(summary.steps, summary.accuracy))


def leakage_loss_chart(summary: LeakageSummary) -> Chart:
    title, y_title = "Training loss at the scored positions", "cross-entropy (nats)"
    figure = training_curves(summary.steps, run_series(summary.loss), title=title, y_title=y_title)
    return Chart(figure, leakage_loss_alt(summary), curves_table(summary.steps, summary.loss))


def curves_table(steps: Sequence[int], curves: dict[str, list[float]]) -> pd.DataFrame:
    """Both runs' curves by step, the numbers behind a training_curves figure."""
    return pd.DataFrame({"step": list(steps), **run_series(curves)})


def leakage_table(summary: LeakageSummary) -> pd.DataFrame:
    """One row per run: final training accuracy, when it reached the threshold, held-out fill-mask, time."""
    return pd.DataFrame(
        [
            {
                "run": RUN_NAMES[run],
                f"training accuracy (last {summary.window} steps)": summary.final_train_accuracy[run],
                f"first step at {summary.threshold:.0%}": str(summary.first_step_at[run] or "not reached"),
                "held-out fill-mask top-1": summary.held_out_top1[run],
                "held-out fill-mask top-5": summary.held_out_top5[run],
                "seconds": summary.seconds[run],
            }
            for run in LEAKAGE_RUNS
        ]
    )


LEAKAGE_INTRO = (
    "A classic bug: the positions are chosen and labelled correctly, but the input still shows the "
    "original token there. The model can then score perfectly by copying what it sees, and never has "
    "to use the context. Below, two tiny models (d=32, one layer) start from the **same weights** and "
    "see the **same batches**; the only difference is whether the chosen positions are really hidden."
)


def leakage_request_text(steps: int, seed: int, estimate: int | None) -> str:
    expect = f" Expect about {estimate} s on this server." if estimate else ""
    return (
        f"{steps} training steps for each model, seed {seed}.{expect} A finished run is kept, so the next "
        "person asking for the same steps and seed sees it at once."
    )


def leakage_progress_text(run: str, step: int, total: int) -> str:
    return f"training the {run} model: step {step} of {total}"


def leakage_metrics(summary: LeakageSummary) -> list[tuple[str, str]]:
    """Each run's final training accuracy, then each run's held-out top-5: correct run first."""
    measures = {"training accuracy": summary.final_train_accuracy, "fill-mask top-5": summary.held_out_top5}
    return percent_metrics({f"{name}, {run}": values[run] for name, values in measures.items() for run in LEAKAGE_RUNS})


def leakage_text(summary: LeakageSummary) -> str:
    acc, top5 = summary.final_train_accuracy, summary.held_out_top5
    reached = summary.first_step_at["leaky"]
    when = f"by step {reached}" if reached else "never within these steps"
    return (
        f"The leaky model's training accuracy reaches {summary.threshold:.0%} {when} and ends at "
        f"{acc['leaky']:.1%}; the correct one ends at {acc['correct']:.1%}. On {summary.n_held_out} unseen "
        f"sentences with a content word really hidden, the leaky model has it in its top five "
        f"{top5['leaky']:.1%} of the time, the correct one {top5['correct']:.1%}. Near-perfect training "
        "accuracy almost at once is the symptom: check what the model actually receives at every scored position."
    )


def leakage_accuracy_alt(summary: LeakageSummary) -> str:
    acc = summary.final_train_accuracy
    return f"Training accuracy: the leaky run ends at {acc['leaky']:.1%}, the correct run at {acc['correct']:.1%}."


def leakage_loss_alt(summary: LeakageSummary) -> str:
    return (
        f"Training loss: the leaky run falls to {summary.loss['leaky'][-1]:.3f}, "
        f"the correct run to {summary.loss['correct'][-1]:.3f}."
    )


# ---- next-sentence prediction ----


NSP_NARRATIVE = (
    "BERT's second pre-training task, **next-sentence prediction**, packs two sentences into one input, "
    "`[CLS] A [SEP] B [SEP]`, with segment 0 for `[CLS]`, A and its `[SEP]` and segment 1 for B and the "
    "last `[SEP]`. In half of the pairs B really followed A; in the other half B is a random sentence. "
    "The final vector at **[CLS]** goes through a two-way classifier, IsNext or NotNext, and that is "
    "what [CLS] was put there for: one position whose vector stands for the whole input. Later work "
    "found the task adds little. **RoBERTa dropped it**, trained on masked tokens alone over longer "
    "stretches of text, and **masked dynamically**: a fresh masking pattern every time a sentence comes "
    "round, instead of one pattern fixed when the data was prepared. The *Draw again* button above is "
    "dynamic masking; the lab's own model was trained that way, without NSP."
)


def nsp_table(examples: Sequence[NSPExample]) -> pd.DataFrame:
    """The pairs as BERT reads them: both sentences, the label, the packed input and its segment ids."""
    return pd.DataFrame(
        [
            {
                "sentence A": ex.sentence_a,
                "sentence B": ex.sentence_b,
                "label": "IsNext" if ex.is_next else "NotNext (random)",
                "model input": " ".join(ex.tokens),
                "segments": "".join(map(str, ex.segments)),
            }
            for ex in examples
        ]
    )


def nsp_text(examples: Sequence[NSPExample], seed: int) -> str:
    n_next = sum(ex.is_next for ex in examples)
    return (
        f"Pairs drawn from the lab's corpus with masking seed {seed}: "
        f"**{n_next} of {len(examples)}** are real continuations, the rest pair A with a random sentence."
    )


EXACT_COUNT_HELP = (
    "On: exactly round(rate x eligible) positions, split 80/10/10 exactly. "
    "Off: BERT's original coin flip for every token, so the count varies."
)
