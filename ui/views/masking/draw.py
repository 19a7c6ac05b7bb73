"""Section 1, choose, corrupt, label: one masking draw token by token, and the worked count."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from functools import partial

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.masking import FATES, DrawPosition, MaskingDraw
from encoder_core.objectives.mlm_masking import MaskCounts

from ..figures import CELLS_ARE_WORDS, PAIR, Chart, esc, label_margin

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

EXACT_COUNT_HELP = (
    "On: exactly round(rate x eligible) positions, split 80/10/10 exactly. "
    "Off: BERT's original coin flip for every token, so the count varies."
)

WHY_NOT_ALWAYS_MASK = (
    "Why not always [MASK]? [MASK] never occurs when the model is later used on real text: a model that met "
    "nothing else in training would be reading inputs unlike any it learnt from."
)
LABELS_HELD = (
    "Which positions get a label, and which get -100, is the prediction in “The loss”: answer it there first, "
    "and the labels appear here too."
)


def what_happened(p: DrawPosition) -> str:
    """A position's fate in words; a never-eligible one also names what sits there ("never eligible: [CLS]")."""
    if p.fate != "never_eligible":
        return FATE_WORDS[p.fate]
    return f"never eligible: {p.token if p.reason == 'special' else REASON_WORDS[p.reason]}"


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
    # Every trace and the layout go to one constructor: add_scatter and update_layout afterwards cost plotly
    # several milliseconds each.
    cells = go.Heatmap(
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
        meta=CELLS_ARE_WORDS,  # the words are the chart: lecture mode shrinks them, never drops them
    )
    key = [  # a legend: heatmaps have none of their own
        go.Scatter(
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
        for fate in FATES
    ]
    layout = {
        "title": {"text": esc(title)},
        "xaxis": {"title": {"text": "position"}, "side": "top"},
        "yaxis": {"title": {"text": "row"}, "autorange": "reversed"},
        "legend": {"orientation": "h", "y": -0.15},
        "margin": {"l": label_margin(["model receives"]), "r": 10, "t": 90, "b": 62},  # b: the legend
        "height": 300,
    }
    return go.Figure([cells, *key], layout=layout)


def draw_alt(counts: MaskCounts, labels: bool = True) -> str:
    return (
        f"Of {counts.eligible} eligible tokens in the sentence, {counts.chosen} were chosen: {counts.masked} "
        f"became [MASK], {counts.random} a random token and {counts.kept} were kept"
        + ("; every other position is labelled -100." if labels else ".")
    )


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


def draw_chart(draw: MaskingDraw, labels: bool = True) -> Chart:
    """The draw; without labels (before the loss prediction is answered) nothing says which positions are scored."""
    counts = draw.counts
    title = f"This draw: {counts.chosen} of {counts.eligible} eligible tokens chosen"
    figure = draw_figure(draw.positions, title=title, labels=labels)
    return Chart(figure, draw_alt(counts, labels), partial(draw_table, draw.positions, labels))


def worked_count_text(worked: MaskCounts, rate: float) -> str:
    n = worked.eligible
    return (
        f"**Worked count.** {n} eligible tokens at rate {rate:g}: round({rate:g} x {n}) = "
        f"**{worked.chosen}** chosen, of which round(0.8 x {worked.chosen}) = **{worked.masked}** [MASK], "
        f"**{worked.random}** random and **{worked.kept}** kept."
    )


def split_bar(counts, *, title: str = "") -> go.Figure:
    """One horizontal bar of all eligible tokens, split into [MASK] / random / kept / not chosen."""
    parts = {
        "[MASK]": counts.masked,
        "random token": counts.random,
        "kept": counts.kept,
        "not chosen": counts.eligible - counts.chosen,
    }
    bars = [
        go.Bar(
            x=[n],
            y=["eligible tokens"],
            orientation="h",
            name=f"{name}: {n}",
            marker_color=SPLIT_COLOURS[name],
            text=[str(n)] if n else None,
            textposition="inside",
            hovertemplate=f"{esc(name)}: {n}<extra></extra>",
        )
        for name, n in parts.items()
    ]
    layout = {
        "title": {"text": esc(title)},
        "barmode": "stack",
        "xaxis": {"title": {"text": "tokens"}},
        "yaxis": {"showticklabels": False},
        "legend": {"orientation": "h", "y": -0.6, "traceorder": "normal"},
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "height": 220,
    }
    return go.Figure(bars, layout=layout)  # in one constructor: update_layout afterwards costs milliseconds


def split_alt(worked: MaskCounts) -> str:
    return (
        f"Of {worked.eligible} eligible tokens, {worked.chosen} are chosen: {worked.masked} become [MASK], "
        f"{worked.random} a random token, {worked.kept} stay as they are."
    )


def split_table(counts: MaskCounts) -> pd.DataFrame:
    """The worked count in one row: eligible, chosen, masked, random, kept."""
    return pd.DataFrame([asdict(counts)])


def split_chart(worked: MaskCounts, rate: float) -> Chart:
    title = f"{worked.eligible} eligible tokens at rate {rate:g}"
    return Chart(split_bar(worked, title=title), split_alt(worked), partial(split_table, worked))
