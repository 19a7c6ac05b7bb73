"""Section 7, pooling: [CLS] or the mean, fine-tuned here and in all-MiniLM-L6-v2, and which sentence is closest to
the student's."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.finetune.tasks import FineTuneRun
from encoder_core.lessons.outputs import CLOSEST_MARGIN, PAIR_KINDS, ClosestSentence, PoolingRanking

from ..figures import Chart, esc, grouped_bars, percent_metrics
from .common import TASK_NAMES
from .training import curves_table, loss_figure

POOLING_NAMES = {"cls": "[CLS] vector", "mean": "mean of the real tokens"}

POOLING_TEXT = (
    "The sentence classifier can read the [CLS] vector or the **mean of the real tokens' vectors** (pads "
    "left out of the mean). Both are one linear layer on a D-wide vector; below, both are fine-tuned on the "
    "sentence task with the same steps and seed."
)
MINILM_TEXT = (
    "all-MiniLM-L6-v2 was trained to make *mean-pooled* vectors of paraphrases close; its [CLS] vector was never "
    "trained for that. Reading the raw [CLS] vector of such a model as a sentence embedding is a common mistake. "
    "Here both are measured on pairs written for this lesson."
)


def pooling_runs_chart(runs: dict[str, FineTuneRun]) -> Chart:
    named = {POOLING_NAMES[p]: r for p, r in runs.items()}
    task, steps = next(iter(runs.values())).task, next(iter(runs.values())).steps
    fig = loss_figure(
        {f"{n} ({r.held_out:.1%} held-out)": r.losses for n, r in named.items()},
        title=f"The classifier reads [CLS] or the mean: {TASK_NAMES[task]}, {steps} steps",
    )
    alt = "; ".join(f"{n}: held-out accuracy {r.held_out:.1%}, final loss {r.losses[-1]:.3f}" for n, r in named.items())
    return Chart(fig, alt + ".", curves_table(named))


def pooling_runs_text(runs: dict[str, FineTuneRun]) -> str:
    cls, mean = runs["cls"].held_out, runs["mean"].held_out
    same = abs(cls - mean) < 0.02
    return f"Held-out accuracy: {cls:.1%} reading [CLS], {mean:.1%} reading the mean. " + (
        "Here it makes no difference: trained end to end, the encoder learns to put what the head needs "
        "wherever the head reads. The choice matters when the encoder is *not* trained with the head, below."
        if same
        else "The difference comes from where the head reads: the encoder, trained with it, adapts to either."
    )


def closest_source_text(c: ClosestSentence, asked: str, escape) -> str:
    """When the question is not about the sentence the student typed first: which of their texts it uses."""
    if c.sentence == asked:
        return ""
    return (
        f"None of the lesson's sentences is clearly closest to “{escape(asked)}”, so this asks about your text "
        f"“{escape(c.sentence)}”."
    )


def closest_answer_text(c: ClosestSentence, escape) -> str:
    """The prediction's answer: the closest sentence, by how much, and what was left out as too close to call."""
    cls_best = max(range(len(c.options)), key=lambda i: c.cosine["cls"][i])
    text = (
        f"Closest to “{escape(c.sentence)}” by mean pooling: **“{c.options[c.answer]}”**, cosine "
        f"{c.cosine['mean'][c.answer]:.2f}, {c.gap:.2f} ahead of the next. "
    )
    if c.left_out:
        text += (
            f"Left out of the options as too close to call (within {CLOSEST_MARGIN:.1f} of it): "
            + ", ".join(f"“{s}”" for s in c.left_out)
            + ". "
        )
    spread = max(c.cosine["cls"]) - min(c.cosine["cls"])
    return text + (
        f"The raw [CLS] vectors crowd together (cosines within {spread:.2f} of each other)"
        + (f" and would pick “{c.options[cls_best]}”." if cls_best != c.answer else ".")
    )


def closest_figure(c: ClosestSentence) -> go.Figure:
    fig = grouped_bars(
        list(c.options),
        {"mean pooling (the question)": c.cosine["mean"], "raw [CLS] vector": c.cosine["cls"]},
        title="Cosine with your sentence's vector, all-MiniLM-L6-v2",
        x_title="sentence",
        y_title="cosine similarity",
        numbered=False,
        text_format=".2f",
    )
    fig.update_layout(yaxis={"range": [min(0.0, *c.cosine["mean"], *c.cosine["cls"]) - 0.05, 1.05]})
    return fig


def closest_alt(c: ClosestSentence) -> str:
    shown = "; ".join(f"“{o}”: {m:.2f} (mean), {k:.2f} ([CLS])" for o, m, k in zip(c.options, *c.cosine.values()))
    return f"Cosine with “{esc(c.sentence)}”, mean pooling and raw [CLS]: {shown}."


def closest_table(c: ClosestSentence) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sentence": list(c.options),
            "cosine, mean pooling": list(c.cosine["mean"]),
            "cosine, [CLS]": list(c.cosine["cls"]),
            "words shared with yours": [", ".join(w) for w in c.shared],
        }
    )


def closest_chart(c: ClosestSentence) -> Chart:
    return Chart(closest_figure(c), closest_alt(c), closest_table(c))


def ranking_text(pr: PoolingRanking) -> str:
    n = sum(k == PAIR_KINDS[0] for _, _, k in pr.pairs)
    return (
        f"{n} sentences, each with a paraphrase, a sentence that shares most of its words but means something "
        f"else, and an unrelated one. **Rank accuracy** is the share of (paraphrase pair, other pair) combinations "
        "in which the paraphrase pair has the higher cosine; **found first**: each sentence's own paraphrase is "
        f"the closest of the {n} paraphrases."
    )


def ranking_metrics(pr: PoolingRanking) -> list[tuple[str, str]]:
    rank, first = pr.rank_accuracy, pr.retrieval_top1
    return percent_metrics(
        {
            "rank accuracy, [CLS]": rank["cls"],
            "rank accuracy, mean pooling": rank["mean"],
            "paraphrase found first, [CLS]": first["cls"],
            "paraphrase found first, mean": first["mean"],
        }
    )


def ranking_chart(pr: PoolingRanking) -> Chart:
    kinds = [k for _, _, k in pr.pairs]
    series = {}
    for pooling, values in pr.cosine.items():
        series[POOLING_NAMES[pooling]] = [
            sum(c for c, k in zip(values, kinds) if k == kind) / kinds.count(kind) for kind in PAIR_KINDS
        ]
    fig = grouped_bars(
        PAIR_KINDS,
        series,
        title="all-MiniLM-L6-v2: mean cosine similarity of each kind of pair",
        x_title="kind of pair",
        y_title="mean cosine similarity",
        numbered=False,
        text_format=".2f",
    )
    fig.update_layout(yaxis={"range": [min(0.0, min(min(v) for v in series.values()) * 1.2), 1.1]})
    table = pd.DataFrame(
        {
            "sentence": [a for a, _, _ in pr.pairs],
            "other sentence": [b for _, b, _ in pr.pairs],
            "kind": kinds,
            "cosine, [CLS]": pr.cosine["cls"],
            "cosine, mean pooling": pr.cosine["mean"],
        }
    )
    alt = "; ".join(
        f"{name}: " + ", ".join(f"{kind} {v:.2f}" for kind, v in zip(PAIR_KINDS, vals)) for name, vals in series.items()
    )
    return Chart(fig, f"Mean cosine by kind of pair. {alt}.", table)


def ranking_verdict(pr: PoolingRanking) -> str:
    kinds = [k for _, _, k in pr.pairs]
    unrelated = {p: min(v for v, k in zip(pr.cosine[p], kinds) if k == PAIR_KINDS[2]) for p in pr.cosine}
    return (
        f"Rank accuracy: **{pr.rank_accuracy['cls']:.1%}** with the raw [CLS] vector, "
        f"**{pr.rank_accuracy['mean']:.1%}** with mean pooling. The [CLS] cosines crowd near the top: unrelated "
        f"pairs score at least {unrelated['cls']:.2f} with [CLS] and {unrelated['mean']:.2f} with mean pooling. "
        f"A paraphrase beats the same-words, other-meaning sentence for {pr.beats_same_words['cls']:.0%} of the "
        f"sentences with [CLS] and {pr.beats_same_words['mean']:.0%} with mean pooling: shared words pull "
        "either vector close, whatever they mean."
    )
