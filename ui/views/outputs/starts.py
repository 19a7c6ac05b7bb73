"""Section 6, three starting points: a frozen probe, fine-tuned end to end, and random weights."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.finetune.tasks import ENCODER_LR, HEAD_LR, STARTS, FineTuneRun
from encoder_core.lessons.outputs import SAME_MARGIN, StartComparison

from ..figures import PAIR, Chart, as_array, esc
from .common import START_NAMES, TASK_NAMES, metric_name
from .training import curves_table, loss_figure

STARTS_TEXT = (
    "The same task, the same steps, the same seed (the same head and batches), from three starting points: "
    "**(1)** the lab's pre-trained MLM with its encoder **frozen**, so only the head learns (a linear probe of "
    "what the vectors already hold); **(2)** the same model **fine-tuned end to end**, the encoder at a small "
    f"learning rate ({ENCODER_LR:g}, the head {HEAD_LR:g}); **(3)** the **same architecture from random weights**, "
    "trained the same way. Choose the task above."
)


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
