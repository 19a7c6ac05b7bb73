"""Figures, tables and sentences of the "Looking inside" lesson: encoder_core.lessons.inside's results in,
a Chart (figure, text alternative, table) or a sentence out. No model runs here."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.inside import (
    EXPLANATION_MARGIN,
    KNOCKOUT_MARGIN,
    METHODS,
    Attributions,
    Cloze,
    Explanations,
    HeadChoice,
    Knockouts,
    LogitLens,
    Sweep,
    TokenChoice,
    best_method,
    best_methods,
    scored_positions,
)

from .figures import PAIR, Chart, after_layer_names, as_array, axes_layout, esc, matrix_heatmap, token_labels


def md(text: object) -> str:
    """Text safe inside Markdown: typed markup and Markdown's own characters shown as they are."""
    return re.sub(r"([\\`*_\[\]<>#|~$])", r"\\\1", esc(text))


def reading_text(cloze: Cloze, knock: Knockouts) -> str:
    """What the model reads and answers, in one sentence."""
    return (
        f"The model reads **{md(' '.join(cloze.tokens))}** and answers **“{md(knock.answer)}”** at the [MASK] "
        f"(token {cloze.position}) with probability {knock.probability:.3f} (log-probability f = {knock.log_prob:.3f})."
    )


def _rho_text(rho: float) -> str:
    return "undefined" if math.isnan(rho) else f"{rho:+.2f}"


def quoted(word: str) -> str:
    return f"“{esc(word)}”"


# ---- knockouts ----


def token_knockout_chart(knock: Knockouts, cloze: Cloze) -> Chart:
    """The change in log p(answer) when each token is hidden as a key; the [MASK] itself is not hidden."""
    change = as_array(knock.tokens)
    labels = token_labels(cloze.tokens)
    colours = [PAIR[1] if i == cloze.position else PAIR[0] for i in range(len(labels))]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=change,
            marker_color=colours,
            text=["asked" if i == cloze.position else f"{v:+.2f}" for i, v in enumerate(change)],
            textposition="outside",
            hovertemplate="hide %{x}: %{y:+.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        **axes_layout(
            f"Hide one token: change in log p({quoted(knock.answer)}) at the [MASK]",
            "token hidden from every query (the [MASK] itself is the question, not hidden)",
            "change in log-probability",
        )
    )
    keep = scored_positions(cloze)
    worst = min(keep, key=lambda i: change[i])
    alt = (
        f"Hiding {cloze.tokens[worst]} (token {worst}) lowers the log-probability of “{knock.answer}” most, "
        f"by {-change[worst]:.2f}; the answer's log-probability with nothing hidden is {knock.log_prob:.2f} "
        f"(probability {knock.probability:.3f})."
    )
    table = pd.DataFrame({"token": labels, "change in log p": np.round(change, 4)})
    return Chart(fig, alt, table)


def head_knockout_chart(knock: Knockouts) -> Chart:
    """Layer x head: the change in log p(answer) with that one head's output zeroed before W_O."""
    L, H = knock.heads.shape
    values = as_array(knock.heads)
    fig = matrix_heatmap(
        values,
        None,
        title=f"Knock out one head: change in log p({quoted(knock.answer)})",
        x_title="head",
        y_title="layer",
        col_labels=[str(h) for h in range(H)],
        height=max(300, 44 * L + 140),
    )
    fig.data[0].update(
        y=list(range(L)),
        text=np.round(values, 2),
        texttemplate="%{text:.2f}",
        hovertemplate="layer %{y}, head %{x}: %{z:+.3f}<extra></extra>",
        colorbar={"title": {"text": "Δ log p"}},
    )
    fig.update_yaxes(dtick=1)
    fig.update_xaxes(dtick=1)  # every head labelled, not every other one
    layer, head = knock.most_important_head()
    alt = (
        f"Knocking out layer {layer}, head {head} lowers the log-probability of “{knock.answer}” most, by "
        f"{-values[layer, head]:.2f}; {int((values < 0).sum())} of {L * H} heads lower it, "
        f"{int((values > 0).sum())} raise it."
    )
    table = pd.DataFrame(values.round(4), columns=[f"head {h}" for h in range(H)])
    return Chart(fig, alt, table.reset_index(names="layer"))


def head_choice_text(choice: HeadChoice, knock: Knockouts) -> str:
    """The reveal's sentence: the head that matters most of those offered, and any left out as too close."""
    layer, head = choice.candidates[choice.answer]
    offered = [f"layer {c[0]}, head {c[1]}: {e:+.2f}" for c, e in zip(choice.candidates, choice.effects, strict=True)]
    close = [f"layer {c[0]}, head {c[1]} ({float(knock.heads[c]):+.2f})" for c in choice.close]
    return reveal_text(f"Knocking out **layer {layer}, head {head}**", offered, "The heatmap has all of them.", close)


def reveal_text(done: str, offered: Sequence[str], chart: str, close: Sequence[str]) -> str:
    """A knockout reveal: what was done lowers the answer most of those offered (each with its change), then any
    left out as too close."""
    text = (
        f"{done} lowers the answer's log-probability most of the {len(offered)} offered "
        f"(changes: {', '.join(offered)}). {chart}"
    )
    return text + close_text(close)


def close_text(parts: Sequence[str]) -> str:
    """The parts a question left out because they came within the margin of the right one."""
    if not parts:
        return ""
    return f" Left out of the options as too close to call (within {KNOCKOUT_MARGIN:g} of it): {', '.join(parts)}."


def token_choice_text(choice: TokenChoice, knock: Knockouts, cloze: Cloze) -> str:
    """The reveal's sentence: the token whose hiding lowers the answer most of those offered."""
    best = choice.candidates[choice.answer]
    offered = [f"“{md(cloze.tokens[i])}” {c:+.2f}" for i, c in zip(choice.candidates, choice.changes, strict=True)]
    close = [f"“{md(cloze.tokens[i])}” ({float(knock.tokens[i]):+.2f})" for i in choice.close]
    return reveal_text(
        f"Hiding **“{md(cloze.tokens[best])}”** (token {best})", offered, "The chart has every token.", close
    )


def not_asked_text(part: str) -> str:
    """Said instead of a knockout question when no other part stands apart from the right one by the margin."""
    return (
        f"No question on this sentence: every other {part} comes within {KNOCKOUT_MARGIN:g} of the one that "
        "matters most, too close to call. The chart shows them all."
    )


TRUTH_HELD = (
    "The knockouts' own row, the truth these are scored against, joins the chart once you answer the prediction "
    "in “Knock it out”."
)
SWEEP_HELD = "The same scores over the fixed sentences come after your prediction on this sentence, above."


# ---- explanations ----

ROW_NAMES = {"knockout": "knockout drop (truth)", **METHODS}


def explanation_rows(expl: Explanations, knock: Knockouts) -> dict[str, np.ndarray]:
    """Each row's raw scores over the tokens: the knockout's drop in log p first, then the five explanations."""
    return {"knockout": -as_array(knock.tokens), **{m: as_array(v) for m, v in expl.by_method().items()}}


def explanations_chart(expl: Explanations, knock: Knockouts, cloze: Cloze, truth: bool = True) -> Chart:
    """Every explanation as a row over the tokens, each row divided by its own largest absolute value. truth:
    with the knockouts' own row first (held back while the token question is open: it answers it)."""
    rows = explanation_rows(expl, knock)
    if not truth:
        rows.pop("knockout")
    keep = scored_positions(cloze)
    scaled = []
    for values in rows.values():
        v = values.copy()
        v[cloze.position] = np.nan  # the question itself is not scored
        top = np.nanmax(np.abs(v)) if np.isfinite(v).any() else 0.0
        scaled.append(v / top if top else v)
    fig = matrix_heatmap(
        np.array(scaled),
        None,
        title="Which token matters? Each row divided by its own largest |value| ([MASK] left blank)",
        x_title="token",
        y_title="explanation",
        col_labels=token_labels(cloze.tokens),
        zrange=(-1.0, 1.0),
        height=380,
    )
    fig.data[0].update(
        y=[ROW_NAMES[m] for m in rows],
        hovertemplate="%{y}, %{x}: %{z:+.2f} of the row's largest<extra></extra>",
        colorbar={"title": {"text": "share of row max"}},
    )
    fig.update_layout(margin={"l": 250})
    tops = {m: f"“{cloze.tokens[max(keep, key=lambda i: values[i])]}”" for m, values in rows.items()}
    alt = (
        (f"Hiding {tops['knockout']} costs the answer most. " if truth else "")
        + f"Raw attention points at {tops['raw']}, rollout at {tops['rollout']}, norm-based at {tops['norm']}, "
        f"gradient × input at {tops['grad_input']} and integrated gradients at {tops['integrated']}."
    )
    table = pd.DataFrame({"token": token_labels(cloze.tokens), **{ROW_NAMES[m]: v.round(4) for m, v in rows.items()}})
    return Chart(fig, alt, table)


def completeness_text(ig: Attributions) -> str:
    return (
        f"Completeness: the integrated-gradients attributions sum to **{ig.total:.4f}**; f(x) − f(baseline) is "
        f"**{ig.gap:.4f}** (from the {esc(ig.baseline)} baseline in {ig.steps} steps): they differ by "
        f"{ig.completeness_error:.2%} of the gap."
    )


# ---- scores ----


def agreement_chart(scores: dict[str, float], title: str, y_title: str, alt_scope: str) -> Chart:
    """One bar per method: its rank correlation with the knockouts, on the fixed -1..1 scale."""
    names = list(METHODS)
    values = np.array([scores[m] for m in names], dtype=np.float64)
    fig = go.Figure(
        go.Bar(
            x=[METHODS[m] for m in names],
            y=np.nan_to_num(values),
            marker_color=[PAIR[1] if v >= 0 else PAIR[0] for v in np.nan_to_num(values)],
            text=[_rho_text(v) for v in values],
            textposition="outside",
            hovertemplate="%{x}: ρ = %{y:+.3f}<extra></extra>",
        )
    )
    fig.update_layout(**axes_layout(title, "explanation", y_title, range=[-1.1, 1.1]))
    best = best_method(scores)
    alt = (
        f"{alt_scope}, {METHODS[best]} agrees best with the knockouts (ρ = {_rho_text(scores[best])}); "
        + ", ".join(f"{METHODS[m]} {_rho_text(scores[m])}" for m in names)
        + "."
    )
    table = pd.DataFrame({"explanation": [METHODS[m] for m in names], "Spearman ρ": values.round(4)})
    return Chart(fig, alt, table)


def agreement_text(scores: dict[str, float]) -> str:
    """The reveal's sentence: the best agreement, and the methods within the margin that count as right too."""
    best = best_method(scores)
    close = [m for m in best_methods(scores) if m != best]
    text = f"On your sentence **{METHODS[best]}** agrees best with the knockouts (ρ = {_rho_text(scores[best])})."
    if close:
        near = ", ".join(f"{METHODS[m]} ({_rho_text(scores[m])})" for m in close)
        text += f" Within {EXPLANATION_MARGIN:g} of it, so counted right too: {near}."
    return text


def sentence_agreement_chart(scores: dict[str, float]) -> Chart:
    return agreement_chart(
        scores,
        "Rank agreement with the knockouts on your sentence",
        "Spearman ρ",
        "On your sentence",
    )


def sweep_chart(result: Sweep) -> Chart:
    chart = agreement_chart(
        result.mean,
        f"Mean rank agreement over {len(result.sentences)} fixed sentences",
        "mean Spearman ρ",
        f"Over {len(result.sentences)} sentences",
    )
    wins = result.wins
    table = chart.table.assign(
        **{"sentences where it agrees best": [wins[m] for m in METHODS]},
        **{"lowest ρ": np.nanmin(result.rho, axis=0).round(4), "highest ρ": np.nanmax(result.rho, axis=0).round(4)},
    )
    return Chart(chart.figure, chart.alt, table)


def sweep_table(result: Sweep) -> pd.DataFrame:
    """Every sentence's correlations, one row each."""
    return pd.DataFrame(
        {"sentence": result.sentences, **{METHODS[m]: result.rho[:, i].round(3) for i, m in enumerate(METHODS)}}
    )


# ---- logit lens ----


LENS_X = "where the MLM head reads the stream"


def _stage_line(stages: Sequence[str], y, labels: list[str], line: dict, hovertemplate: str, layout: dict) -> go.Figure:
    """One labelled line over the stages the logit lens reads."""
    fig = go.Figure(
        go.Scatter(
            x=stages,
            y=y,
            mode="lines+markers+text",
            text=labels,
            textposition="top center",
            line=line,
            hovertemplate=hovertemplate,
        )
    )
    return fig.update_layout(**layout)


def logit_lens_chart(lens: LogitLens) -> Chart:
    stages = after_layer_names(len(lens.rank))
    title = f"Logit lens: p({quoted(lens.answer)}) read at the [MASK] after each layer"
    layout = axes_layout(title, LENS_X, f"probability of {quoted(lens.answer)}", rangemode="tozero")
    labels = [f"{p:.3f}" for p in lens.probability]
    fig = _stage_line(stages, lens.probability, labels, {"color": PAIR[0]}, "%{x}: p = %{y:.4f}<extra></extra>", layout)
    first = next(i for i in range(len(lens.rank)) if all(r == 1 for r in lens.rank[i:]))
    alt = (
        f"The final answer “{lens.answer}” has probability {lens.probability[0]:.4f} (rank {lens.rank[0]:,}) read "
        f"from the embeddings and {lens.probability[-1]:.3f} after the last layer; it is the top guess from "
        f"{stages[first]} on."
    )
    table = pd.DataFrame(
        {
            "stage": stages,
            "rank of the answer": lens.rank,
            "probability": np.round(lens.probability, 5),
            "top guess": lens.top,
        }
    )
    return Chart(fig, alt, table)


def logit_rank_chart(lens: LogitLens) -> Chart:
    stages = after_layer_names(len(lens.rank))
    title = f"Rank of {quoted(lens.answer)} among all words (1 = top guess, at the top; log scale)"
    layout = axes_layout(title, LENS_X, "rank (1 = top)", type="log", autorange="reversed", dtick=1)
    line = {"color": PAIR[1], "dash": "dash"}
    fig = _stage_line(
        stages, lens.rank, [f"{r:,}" for r in lens.rank], line, "%{x}: rank %{y:,}<extra></extra>", layout
    )
    alt = f"The answer's rank goes {', '.join(f'{r:,}' for r in lens.rank)} from the embeddings to the last layer."
    table = pd.DataFrame({"stage": stages, "rank of the answer": lens.rank, "top guess": lens.top})
    return Chart(fig, alt, table)


def methods_in_order(scores: dict[str, float]) -> Sequence[str]:
    """The methods from the best agreement to the worst (an undefined one last)."""
    return sorted(scores, key=lambda m: -math.inf if math.isnan(scores[m]) else scores[m], reverse=True)


ORDINALS = ("first", "second", "third", "fourth", "fifth")


def sweep_reading(result: Sweep, model_name: str) -> str:
    """Which method agrees best over the fixed set, where raw attention stands, and why it falls short."""
    mean, wins = result.mean, result.wins
    order = list(methods_in_order(mean))
    best, n = order[0], len(result.sentences)
    raw_place = ORDINALS[order.index("raw")]
    lead = (
        f"On {esc(model_name)}, **{METHODS[best]}** agrees best with the knockouts over the {n} sentences "
        f"(mean ρ = {mean[best]:+.2f}; the best of the five on {wins[best]} of them). Raw attention comes "
        f"{raw_place} (mean ρ = {mean['raw']:+.2f})."
    )
    if best == "raw":
        why = (
            " It does well here partly because the knockout is itself an intervention on attention: hiding a token "
            "from every query removes exactly what the weights were fetching. Even so it falls short of an "
            f"explanation: a mean ρ of {mean['raw']:.2f} leaves much of the order wrong, it looks at one layer "
            "only, and it says nothing about which heads matter (the first section's question)."
        )
    else:
        why = (
            " Raw attention falls short because a weight says where a head looks, not how much the fetched value "
            "changes the answer: it is one layer, averaged over heads that may not matter, and a weight parked on "
            "[CLS] or [SEP] can be large while removing that token costs little."
        )
    return lead + why
