"""Figures, tables and sentences for the outputs lesson. Pure: encoder_core results in, Figures out."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.finetune.tasks import (
    BAD_MOODS,
    ENCODER_LR,
    GOOD_MOODS,
    HEAD_LR,
    MAX_ANSWER_TOKENS,
    SITUATIONS,
    STARTS,
    TAG_OF,
    TAGS,
    FineTuneRun,
)
from encoder_core.lessons.outputs import (
    CLOSEST_MARGIN,
    CONFIDENT,
    PAIR_KINDS,
    SAME_MARGIN,
    ClassPrediction,
    ClosestSentence,
    HeadShapes,
    PoolingRanking,
    ShapeCheck,
    SpanPrediction,
    StartComparison,
    TagPrediction,
)
from encoder_core.objectives.mlm_masking import IGNORE_INDEX

from .figures import CATEGORICAL, PAIR, Chart, as_array, esc, grouped_bars, percent_metrics, token_labels

TASK_NAMES = {
    "sentence": "sentence classification",
    "pair": "sentence-pair classification",
    "tagging": "tagging",
    "qa": "extractive question answering",
}
START_NAMES = {
    "finetune": "pre-trained, fine-tuned end to end",
    "frozen": "pre-trained, encoder frozen (linear probe)",
    "scratch": "same architecture, random weights",
}
POOLING_NAMES = {"cls": "[CLS] vector", "mean": "mean of the real tokens"}
SHAPE_WHAT = {
    "ids": "token ids, padded to the longest row",
    "hidden": "one D-wide vector per token, from the encoder",
    "[CLS] vector": "position 0 of every row: the pooled input",
    "logits": "the head's scores: one per class (per token for tagging)",
    "start/end logits": "two scores per token: start of the answer, end of the answer",
    "start scores": "one of the two, softmaxed over the passage's tokens only",
}
EXERCISE_NAMES = {
    "hidden": "encoder output",
    "logits": "masked-LM logits",
    "chosen_logits": "logits at the masked positions",
}
TAG_COLOURS = dict(zip(TAGS, ("#d9d9d9",) + CATEGORICAL[:5]))


def metric_name(task: str) -> str:
    return "exact match" if task == "qa" else "accuracy"


def scored_items(task: str) -> str:
    return {"sentence": "sentences", "pair": "pairs", "tagging": "words", "qa": "questions"}[task]


# ---- shapes ---------------------------------------------------------------------------------------------


def shapes_table(shapes: HeadShapes) -> pd.DataFrame:
    rows = []
    for head, steps in shapes.steps.items():
        for name, shape in steps:
            rows.append({"head": TASK_NAMES[head], "tensor": name, "shape": str(shape), "what": SHAPE_WHAT[name]})
    return pd.DataFrame(rows)


def tag_labels_table(tokens: Sequence[str], labels: Sequence[int]) -> pd.DataFrame:
    """The tagging labels of one input, token by token: -100 where the loss must not look."""
    return pd.DataFrame(
        {
            "position": list(range(len(tokens))),
            "token": list(tokens),
            "label": [int(v) for v in labels],
            "tag": ["— (skipped by the loss)" if v == IGNORE_INDEX else TAGS[v] for v in labels],
        }
    )


SKIPPED_COLOUR = "#ffffff"  # -100: the loss does not look here; outlined by the gaps, labelled in the cell


def coloured_cells(
    words: Sequence[str],
    codes: Sequence[int],
    colours: Sequence[str],
    text: Sequence[str],
    *,
    row: str,
    title: str,
    x_title: str,
    hover: str = "%{text}",
    customdata=None,
) -> go.Figure:
    """One row of cells, one per word: cell i in colours[codes[i]] with text[i] written in it, so colour is
    never the only cue. hover: what follows "<word>: " when pointing at a cell."""
    n = len(colours)
    scale = [[edge, colour] for i, colour in enumerate(colours) for edge in (i / n, (i + 1) / n)]
    fig = go.Figure(
        go.Heatmap(
            z=[[code + 0.5 for code in codes]],
            x=token_labels(words),
            y=[row],
            text=[list(text)],
            texttemplate="%{text}",
            customdata=customdata,
            zmin=0,
            zmax=n,
            colorscale=scale,
            showscale=False,
            xgap=3,
            hovertemplate=f"%{{x}}: {hover}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": title},
        xaxis={"title": {"text": x_title}, "showticklabels": False},
        yaxis={"title": {"text": row}, "showticklabels": False},
        margin={"l": 52, "r": 10, "t": 60, "b": 52},  # room for the axis titles: plotly draws once
        height=190,
    )
    return fig


def tag_labels_chart(tokens: Sequence[str], labels: Sequence[int]) -> Chart:
    """The labels of one tagging input as a row of cells: -100 (skipped) in white, each tag in its colour."""
    names = ["-100" if v == IGNORE_INDEX else TAGS[v] for v in labels]
    fig = coloured_cells(
        tokens,
        [0 if v == IGNORE_INDEX else v + 1 for v in labels],
        [SKIPPED_COLOUR] + [TAG_COLOURS[t] for t in TAGS],
        [f"{esc(t)}<br><b>{name}</b>" for t, name in zip(tokens, names)],
        row="label",
        title="Tagging labels of your sentence: -100 where the loss does not look",
        x_title="token (position from 0)",
    )
    fig.update_layout(plot_bgcolor="#bbbbbb")
    skipped = [f"{i} {t}" for i, (t, v) in enumerate(zip(tokens, labels)) if v == IGNORE_INDEX]
    alt = f"{len(tokens)} tokens; -100 at {', '.join(skipped)}; every other token carries its word's tag."
    return Chart(fig, alt, tag_labels_table(tokens, labels))


def exercise_question(ex: dict[str, int]) -> str:
    return (
        f"A batch has {ex['batch']} sequences of length {ex['length']}, model width {ex['d_model']} and a "
        f"vocabulary of {ex['vocab_size']:,}; {ex['n_masked']} positions are masked in all. Type the shape of "
        "the encoder's output, of the masked-LM logits, and of the logits kept for the loss."
    )


def exercise_table(checks: Sequence[ShapeCheck]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "tensor": [EXERCISE_NAMES[c.step] for c in checks],
            "you typed": [c.typed or "—" for c in checks],
            "computed": [str(c.expected) for c in checks],
            "result": ["right" if c.correct else ("not a shape" if c.read is None else "not quite") for c in checks],
        }
    )


# ---- training curves and scores ------------------------------------------------------------------------


def loss_figure(series: dict[str, Sequence[float]], *, title: str, total: int | None = None) -> go.Figure:
    """Training loss per step, one line per run; the y axis starts at 0."""
    fig = go.Figure()
    top = max((max(v) for v in series.values() if len(v)), default=1.0)
    for (name, values), colour, dash in zip(series.items(), CATEGORICAL, ("solid", "dash", "dot", "dashdot")):
        fig.add_scatter(
            x=list(range(1, len(values) + 1)),
            y=as_array(values),
            name=esc(name),
            mode="lines",
            line={"color": colour, "dash": dash, "width": 2},
            hovertemplate="step %{x}: %{y:.3f}<extra>" + esc(name) + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "training step"}, **({"range": [1, total]} if total else {})},
        yaxis={"title": {"text": "training loss (cross-entropy, nats)"}, "range": [0, 1.05 * top]},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
        showlegend=len(series) > 1,
    )
    return fig


def live_loss_chart(key: tuple, losses: Sequence[float], step: int, total: int) -> Chart:
    """The loss of the run being trained (key: its cache key), redrawn as it falls; no table, it is not kept."""
    title = f"Training {TASK_NAMES[key[0]]}: step {len(losses)} of {total}"
    return Chart(loss_figure({"this run": losses}, title=title, total=total), live_alt(key, step, total, losses[-1]))


def curves_table(runs: dict[str, FineTuneRun]) -> pd.DataFrame:
    n = max(len(r.losses) for r in runs.values())
    return pd.DataFrame({"step": range(1, n + 1), **{name: r.losses for name, r in runs.items()}})


def run_chart(run: FineTuneRun) -> Chart:
    title = f"{TASK_NAMES[run.task].capitalize()}: training loss over {run.steps} steps"
    first, last = run.losses[0], sum(run.losses[-10:]) / len(run.losses[-10:])
    alt = (
        f"The training loss falls from {first:.3f} at step 1 to {last:.3f} (mean of the last ten steps); "
        f"held-out {metric_name(run.task)} {run.held_out:.1%} against {run.baseline:.1%} for the majority baseline."
    )
    return Chart(loss_figure({"training loss": run.losses}, title=title), alt, curves_table({"loss": run}))


def run_metrics(run: FineTuneRun) -> list[tuple[str, str]]:
    return [
        (f"held-out {metric_name(run.task)}", f"{run.held_out:.1%}"),
        ("majority baseline", f"{run.baseline:.1%}"),
        ("train / held-out examples", f"{run.n_train:,} / {run.n_held_out:,}"),
        ("time to train", f"{run.seconds:.1f} s"),
    ]


def run_text(run: FineTuneRun) -> str:
    baseline = (
        "always answer with the span position training answers used most"
        if run.task == "qa"
        else f"always answer the commonest {'tag' if run.task == 'tagging' else 'class'} in training"
    )
    return (
        f"Trained for {run.steps} steps of 32 examples on {run.n_train:,} generated examples, then scored on "
        f"{run.n_held_out:,} held-out ones it never saw ({run.n_scored:,} {scored_items(run.task)} scored). "
        f"The majority baseline is what you get by ignoring the input: {baseline}. "
        f"{run.trainable:,} parameters learned."
    )


def scores_figure(
    names: Sequence[str], scores: Sequence[float], baseline: float, *, title: str, task: str
) -> go.Figure:
    fig = go.Figure(
        go.Bar(
            x=[esc(n) for n in names],
            y=as_array(scores),
            marker_color=PAIR[0],
            text=[f"{s:.1%}" for s in scores],
            textposition="outside",
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.add_hline(y=baseline, line={"dash": "dash", "color": "#555555"})
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "starting point"}},
        yaxis={"title": {"text": f"held-out {metric_name(task)}"}, "range": [0, 1.12]},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


# ---- a trained head on the student's text ----------------------------------------------------------------


def class_chart(pred: ClassPrediction, task: str) -> Chart:
    labels = [esc(label) for label in pred.labels]
    fig = go.Figure(
        go.Bar(
            x=as_array(pred.probabilities),
            y=labels,
            orientation="h",
            marker_color=[PAIR[0] if label == pred.best else "#9fbfdc" for label in pred.labels],
            text=[f"{p:.1%}" for p in pred.probabilities],
            textposition="outside",
            hovertemplate="%{y}: %{x:.4f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": f"The trained {esc(TASK_NAMES[task])} head on your input"},
        xaxis={"title": {"text": "probability"}, "range": [0, 1.15]},
        yaxis={"title": {"text": "class"}, "type": "category"},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=240,
    )
    shown = ", ".join(f"{label} {p:.1%}" for label, p in zip(pred.labels, pred.probabilities))
    table = pd.DataFrame({"class": list(pred.labels), "probability": pred.probabilities})
    return Chart(fig, f"The head says {pred.best}: {shown}.", table)


def tag_row_chart(pred: TagPrediction) -> Chart:
    """One coloured cell per word, its tag written in it; colour is never the only cue."""
    guessed = pred.guessed
    fig = coloured_cells(
        pred.words,
        [TAGS.index(t) for t in pred.tags],
        [TAG_COLOURS[t] for t in TAGS],
        [f"{esc(w)}<br><b>{t}</b>{'<br><i>guess</i>' if g else ''}" for w, t, g in zip(pred.words, pred.tags, guessed)],
        row="tag",
        title="A tag for every word, read at its first word piece (guess: a word outside the head's training)",
        x_title="word (position in the sentence)",
        hover="%{text} (%{customdata})",
        customdata=[[f"{c:.1%}" for c in pred.confidence]],
    )
    shown = "; ".join(f"{w} = {t}{' (a guess)' if g else ''}" for w, t, g in zip(pred.words[:20], pred.tags, guessed))
    table = pd.DataFrame(
        {
            "word": pred.words,
            "word pieces": [" ".join(p) for p in pred.pieces],
            "tag": pred.tags,
            "probability": pred.confidence,
            "in the task's training data": pred.seen,
            "a guess": guessed,
        }  # fmt: skip
    )
    return Chart(fig, f"Tags: {shown}{' …' if len(pred.words) > 20 else ''}.", table)


def span_chart(pred: SpanPrediction) -> Chart:
    """Start and end probabilities over the passage's tokens; the chosen span's tokens are named in the title."""
    labels = token_labels(pred.passage_tokens)
    fig = grouped_bars(
        pred.passage_tokens,
        {"start of the answer": pred.start_probs, "end of the answer": pred.end_probs},
        title=f"Where the answer starts and ends: “{pred.answer}”",
        x_title="passage token",
        y_title="probability (over the passage only)",
    )
    fig.add_vrect(
        x0=pred.start - 0.5, x1=pred.end + 0.5, fillcolor="#ffd54f", opacity=0.35, line_width=0, layer="below"
    )
    fig.update_layout(yaxis={"range": [0, 1.05]}, height=380)
    fig.update_xaxes(tickangle=-45, categoryorder="array", categoryarray=labels)
    table = pd.DataFrame(
        {
            "position in passage": list(range(len(labels))),
            "token": pred.passage_tokens,
            "p(start)": pred.start_probs,
            "p(end)": pred.end_probs,
            "in the answer": [pred.start <= i <= pred.end for i in range(len(labels))],
        }
    )
    p_s, p_e = pred.start_probs[pred.start], pred.end_probs[pred.end]
    alt = (
        f"The answer is tokens {pred.start} to {pred.end} of the passage, “{pred.answer}”: p(start) {p_s:.1%}, "
        f"p(end) {p_e:.1%}."
    )
    return Chart(fig, alt, table)


def span_markdown(pred: SpanPrediction, escape) -> str:
    """The passage with the answer in bold, every token escaped by the page's markdown escaper."""
    words = [escape(t) for t in pred.passage_tokens]
    words[pred.start] = "**" + words[pred.start]
    words[pred.end] = words[pred.end] + "**"
    return " ".join(words)


# ---- three starting points ---------------------------------------------------------------------------------


def starts_loss_chart(runs: dict[str, FineTuneRun]) -> Chart:
    task, steps = next(iter(runs.values())).task, next(iter(runs.values())).steps
    named = {START_NAMES[s]: runs[s] for s in STARTS}
    fig = loss_figure(
        {name: r.losses for name, r in named.items()}, title=f"Three starting points, {TASK_NAMES[task]}, {steps} steps"
    )
    alt = "; ".join(
        f"{name}: loss {r.losses[0]:.2f} at step 1, {r.losses[-1]:.2f} at the end" for name, r in named.items()
    )
    return Chart(fig, alt + ".", curves_table(named))


def starts_scores_chart(cmp: StartComparison) -> Chart:
    names = [START_NAMES[s] for s in STARTS]
    scores = [cmp.held_out[s] for s in STARTS]
    title = f"Held-out score of each starting point (dashed: majority baseline, {cmp.baseline:.1%})"
    fig = scores_figure(names, scores, cmp.baseline, title=title, task=cmp.task)
    shown = "; ".join(f"{n}: {s:.1%}" for n, s in zip(names, scores))
    table = pd.DataFrame(
        {
            "starting point": names,
            f"held-out {metric_name(cmp.task)}": scores,
            "loss, first tenth of the steps": [cmp.early_loss[s] for s in STARTS],
            "loss, last tenth": [cmp.final_loss[s] for s in STARTS],
        }
    )
    return Chart(fig, f"{shown}; the majority baseline is {cmp.baseline:.1%}.", table)


def probe_answer_text(cmp: StartComparison) -> str:
    """The prediction's answer, in numbers: the frozen probe's held-out score against random weights'."""
    frozen, scratch, m = cmp.held_out["frozen"], cmp.held_out["scratch"], metric_name(cmp.task)
    gap = (frozen - scratch) * 100
    return (
        f"Held-out {m}: frozen probe **{frozen:.1%}**, random weights **{scratch:.1%}**, a gap of "
        f"{abs(gap):.1f} points (within {SAME_MARGIN * 100:.0f} points counts as about the same; scores move a "
        "little from one processor to another, so the answer is read from these runs)."
    )


def starts_verdict(cmp: StartComparison) -> str:
    gain, m = cmp.pretraining_gain, metric_name(cmp.task)
    probe = cmp.held_out["frozen"]
    if cmp.buys_little:
        head = (
            "**Here pre-training buys little**: fine-tuned end to end, the pre-trained model scores "
            f"{cmp.held_out['finetune']:.1%} held-out {m}, and the same architecture from random weights "
            f"{cmp.held_out['scratch']:.1%} "
            f"({gain:+.1%}). The grammar's tasks are small and regular, with {cmp.n_train:,} labelled examples: a "
            "2-layer model learns them from nothing in a few hundred steps. Pre-training pays when labels are few "
            "and the language is open, not on a toy grammar."
        )
    else:
        head = (
            f"Pre-training helps here: {cmp.held_out['finetune']:.1%} held-out {m} fine-tuned end to end, against "
            f"{cmp.held_out['scratch']:.1%} from random weights ({gain:+.1%}) after the same steps. Over the "
            f"first tenth of the steps its loss averages {cmp.early_loss['finetune']:.2f}, against "
            f"{cmp.early_loss['scratch']:.2f} from random weights."
        )
    return (
        head + f" The frozen encoder with only a linear head on top reaches {probe:.1%}: what this small MLM's vectors "
        "already hold in a form one linear layer can read, before any of its weights move."
    )


# ---- pooling ---------------------------------------------------------------------------------------------


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


def ranking_text(pr: PoolingRanking) -> str:
    n = sum(k == PAIR_KINDS[0] for _, _, k in pr.pairs)
    return (
        f"{n} sentences, each with a paraphrase, a sentence that shares most of its words but means something "
        f"else, and an unrelated one. **Rank accuracy** is the share of (paraphrase pair, other pair) combinations "
        "in which the paraphrase pair has the higher cosine; **found first**: each sentence's own paraphrase is "
        f"the closest of the {n} paraphrases."
    )


# ---- words for the page ------------------------------------------------------------------------------------

TASK_TEXT = {
    "sentence": (
        "**The task.** Is the sentence's mood positive or negative? The grammar writes sentences like “the sad "
        "cat was happy” (positive: the predicate decides) and “the dog was not warm” (negative: *not* flips it), "
        "so no single word gives the answer away. The head is one linear layer on the [CLS] vector, (B, D) -> "
        "(B, 2), and the whole model is trained end to end at a small learning rate."
    ),
    "pair": (
        "**The task.** Two sentences in one input, `[CLS] A [SEP] B [SEP]`, segment 0 for A and 1 for B: does B "
        "follow from A? “the girl was hungry” -> “she ate the bread” follows; “she sang in the garden” does not. "
        "Every B is a sentence that does follow from *some* A, so the head has to read both segments."
    ),
    "tagging": (
        "**The task.** A tag for every word: person, animal, object, place, verb or other, taken from the grammar's "
        "word lists, so every answer is known. The head is a linear layer on *every* token, {shape}. "
        "Labels are −100 at [CLS], [SEP], pads and at the pieces after a word's first, so the loss reads each word "
        "once; a word cut into pieces is tagged at its first piece. On this grammar the task is nearly a word "
        "lookup, so even a frozen encoder does well."
    ),
    "qa": (
        "**The task.** Extractive question answering: the question is segment A, a two-clause passage segment B, "
        "and the answer is a span of the passage (“where did the cat sleep ?” -> “the mat”). The head gives every "
        "token a start score and an end score, {shape}; outside the passage they are −∞, so each "
        "softmax is a distribution over the passage. The answer is the span with the best start + end score, "
        f"end ≥ start, at most {MAX_ANSWER_TOKENS} tokens. **Exact match** counts an answer right only if both "
        "ends are."
    ),
}
TASK_SHAPES = {"tagging": "(B, T, D) -> (B, T, 6)", "qa": "(B, T, D) -> (B, T, 2)"}
SHAPE_HELD = "its output's shape held back until you answer the prediction in “The shapes”"


def task_text(task: str, shapes_shown: bool) -> str:
    """The task in words; the tagging and span heads' shapes only once the shape prediction is answered (they
    would answer it)."""
    return TASK_TEXT[task].replace("{shape}", TASK_SHAPES.get(task, "") if shapes_shown else SHAPE_HELD)


STARTS_TEXT = (
    "The same task, the same steps, the same seed (the same head and batches), from three starting points: "
    "**(1)** the lab's pre-trained MLM with its encoder **frozen**, so only the head learns (a linear probe of "
    "what the vectors already hold); **(2)** the same model **fine-tuned end to end**, the encoder at a small "
    f"learning rate ({ENCODER_LR:g}, the head {HEAD_LR:g}); **(3)** the **same architecture from random weights**, "
    "trained the same way. Choose the task above."
)
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
MODEL_TEXT = (
    "Every head here is fine-tuned on a copy of the lab's trained MLM, whatever the sidebar's encoder; the pooling "
    "section also reads all-MiniLM-L6-v2."
)
EXERCISE_SIZES = {
    "batch": "B (sequences)",
    "length": "T (tokens each)",
    "d_model": "D (width)",
    "vocab_size": "V (vocabulary)",
    "n_masked": "masked positions",
}


def request_text(keys: Sequence[tuple]) -> str:
    task, _, steps, seed, _ = keys[0]
    what = "a copy of the lab's MLM" if len(keys) == 1 else f"{len(keys)} models, one after the other,"
    return (
        f"Trains {what} on {TASK_NAMES[task]} for {steps} steps (seed {seed}), on this server's CPU. A run is "
        "kept for everyone once it has finished, so the same settings never train twice."
    )


def progress_text(key: tuple, step: int, total: int, loss: float) -> str:
    task, start = key[0], key[1]
    return f"{TASK_NAMES[task]}, {START_NAMES[start]}: step {step} of {total}, loss {loss:.3f}"


def live_alt(key: tuple, step: int, total: int, loss: float) -> str:
    return f"Training in progress: step {step} of {total}, the latest batch's loss is {loss:.3f}."


def shape_answer_text(shapes: HeadShapes, form: str) -> str:
    """The prediction's answer: the tagging head's logits as measured, and the form they have."""
    return f"The tagging head's logits on your batch: **{shapes.shape('tagging', 'logits')}**, that is {form}."


def shapes_text(shapes: HeadShapes) -> str:
    B, T = shapes.steps["sentence"][0][1]
    return (
        f"Your sentence and your pair as one batch: B = {B} rows, T = {T} positions (the shorter row padded). "
        "Every shape below was read from the tensors of a real pass through the lab's MLM and three fresh heads."
    )


def tag_labels_text(tokens: Sequence[str]) -> str:
    return (
        f"The tagging labels of your sentence to tag ({len(tokens)} tokens): −100 means “skip this position in "
        "the loss”."
    )


def exercise_verdict(checks: Sequence[ShapeCheck]) -> str:
    right = sum(c.correct for c in checks)
    if right == len(checks):
        return "All three right: computed by running a throwaway model of exactly that size."
    return f"{right} of {len(checks)} right. The computed shapes are in the table, read from a model of that size."


# What each toy task covers: the head has learned these and nothing else.
TASK_SCOPE = {
    "sentence": (
        "What this head knows: the grammar's mood sentences only, like “the old dog was not happy”: a person or "
        f"an animal, *was*, perhaps *not*, and one of {len(GOOD_MOODS + BAD_MOODS)} mood words "
        f"({', '.join(GOOD_MOODS + BAD_MOODS)})."
    ),
    "pair": (
        f"What this head knows: pairs built from {len(SITUATIONS)} situations only, like “the girl was hungry” → "
        "“she ate the bread” or “the boy went to the bank” → “he counted the money”."
    ),
    "tagging": (
        "What this head knows: the grammar's sentences only, tagged from its word lists (people, animals, objects, "
        f"places and verbs: {len(TAG_OF)} words); any other word is “other” to the grammar."
    ),
    "qa": (
        "What this head knows: two-clause passages like “the cat slept on the mat and the dog sat on the sofa”, "
        "with *where*, *who* and *what* questions about them only; it always picks a span, even when there is none."
    ),
}


def guess_text(pred: ClassPrediction | TagPrediction | SpanPrediction, escape) -> str | None:
    """When the head's answer is a guess outside its training: why, in one sentence; None when it is not."""
    if not pred.guess:
        return None
    if isinstance(pred, TagPrediction):
        why = [
            f"{escape(w)} ({'never seen in training' if not s else f'only {c:.0%} sure'})"
            for w, s, c, g in zip(pred.words, pred.seen, pred.confidence, pred.guessed)
            if g
        ]
        return (
            f"**The tags of {len(why)} word{'s' if len(why) > 1 else ''} are guesses**, outside what the head was "
            f"trained on: {', '.join(why[:12])}{' …' if len(why) > 12 else ''}. It must pick one of its six tags "
            "for every word; it has no way to say “I don't know”."
        )
    why = []
    if pred.unseen:
        shown = ", ".join(escape(w) for w in pred.unseen[:12]) + (" …" if len(pred.unseen) > 12 else "")
        why.append(f"words it never saw in training: {shown}")
    if pred.confidence < CONFIDENT:
        why.append(f"its probability for this answer is only {pred.confidence:.0%}")
    elif pred.unseen:
        why.append(f"its {pred.confidence:.0%} means little on input unlike its training")
    if isinstance(pred, SpanPrediction) and pred.missing_words and not why:
        why.append("the question asks about something the passage never mentions")
    return (
        "**Treat this answer as a guess**, outside what the head was trained on: "
        + "; ".join(why)
        + ". It must answer with one of its labels or spans; it has no way to say “I don't know”."
    )


def no_answer_text(pred: SpanPrediction, escape) -> str:
    words = ", ".join(escape(w) for w in pred.missing_words)
    return (
        f"The passage never mentions {words}, so the question may have no answer here. This head was trained "
        "only on questions answered in the passage, so it always picks a span; it cannot say “no answer” (models "
        "trained for that, as on SQuAD 2.0, learn to point at [CLS] instead)."
    )


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


# ---- which sentence is closest to yours ---------------------------------------------------------------------


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


def closest_table(c: ClosestSentence) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sentence": list(c.options),
            "cosine, mean pooling": list(c.cosine["mean"]),
            "cosine, [CLS]": list(c.cosine["cls"]),
            "words shared with yours": [", ".join(w) for w in c.shared],
        }
    )


def closest_alt(c: ClosestSentence) -> str:
    shown = "; ".join(f"“{o}”: {m:.2f} (mean), {k:.2f} ([CLS])" for o, m, k in zip(c.options, *c.cosine.values()))
    return f"Cosine with “{esc(c.sentence)}”, mean pooling and raw [CLS]: {shown}."


def closest_chart(c: ClosestSentence) -> Chart:
    return Chart(closest_figure(c), closest_alt(c), closest_table(c))


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


def closest_source_text(c: ClosestSentence, asked: str, escape) -> str:
    """When the question is not about the sentence the student typed first: which of their texts it uses."""
    if c.sentence == asked:
        return ""
    return (
        f"None of the lesson's sentences is clearly closest to “{escape(asked)}”, so this asks about your text "
        f"“{escape(c.sentence)}”."
    )
