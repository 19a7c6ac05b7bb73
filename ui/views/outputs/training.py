"""Fine-tuning a head on request, as every training section shows it: the request, the live loss, and a finished
run's curve and numbers."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.finetune.tasks import FineTuneRun

from ..figures import CATEGORICAL, Chart
from ..step_curves import step_curves
from .common import START_NAMES, TASK_NAMES, metric_name


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


def loss_figure(series: dict[str, Sequence[float]], *, title: str, total: int | None = None) -> go.Figure:
    """Training loss per step, one line per run; the y axis starts at 0."""
    top = max((max(v) for v in series.values() if len(v)), default=1.0)
    return step_curves(
        [(name, list(range(1, len(values) + 1)), values) for name, values in series.items()],
        colours=CATEGORICAL,
        dashes=("solid", "dash", "dot", "dashdot"),
        width=2,
        title=title,
        y_title="training loss (cross-entropy, nats)",
        height=360,
        x_range=(1, total) if total else None,
        y_range=(0, 1.05 * top),
        showlegend=len(series) > 1,
    )


def live_alt(key: tuple, step: int, total: int, loss: float) -> str:
    return f"Training in progress: step {step} of {total}, the latest batch's loss is {loss:.3f}."


def live_loss_chart(key: tuple, losses: Sequence[float], step: int, total: int) -> Chart:
    """The loss of the run being trained (key: its cache key), redrawn as it falls; no table, it is not kept."""
    title = f"Training {TASK_NAMES[key[0]]}: step {len(losses)} of {total}"
    return Chart(loss_figure({"this run": losses}, title=title, total=total), live_alt(key, step, total, losses[-1]))


def scored_items(task: str) -> str:
    return {"sentence": "sentences", "pair": "pairs", "tagging": "words", "qa": "questions"}[task]


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
