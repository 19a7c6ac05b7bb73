"""Section 5, when the answer leaks: correct and leaky masking trained side by side."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.masking import LEAKAGE_RUNS, LeakageSummary

from ..figures import PAIR, Chart, as_array, percent_metrics
from ..step_curves import step_curves

RUN_NAMES = {"correct": "correct masking", "leaky": "leaky: answer left in the input"}

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


def training_curves(
    steps, series: dict[str, object], *, title: str, y_title: str, y_range: tuple[float, float] | None = None
) -> go.Figure:
    """Correct vs leaky training, one line each over the same steps (solid vs dashed, blue vs orange)."""
    lines = [(name, as_array(steps), values) for name, values in series.items()]
    return step_curves(
        lines,
        colours=PAIR,
        dashes=("solid", "dash"),
        width=3,
        title=title,
        y_title=y_title,
        height=380,
        y_range=y_range,
    )


def run_series(curves: dict[str, list[float]]) -> dict[str, list[float]]:
    """A per-run curve under each run's name, correct first."""
    return {RUN_NAMES[run]: curves[run] for run in LEAKAGE_RUNS}


def curves_table(steps: Sequence[int], curves: dict[str, list[float]]) -> pd.DataFrame:
    """Both runs' curves by step, the numbers behind a training_curves figure."""
    return pd.DataFrame({"step": list(steps), **run_series(curves)})


def leakage_accuracy_alt(summary: LeakageSummary) -> str:
    acc = summary.final_train_accuracy
    return f"Training accuracy: the leaky run ends at {acc['leaky']:.1%}, the correct run at {acc['correct']:.1%}."


def leakage_accuracy_chart(summary: LeakageSummary) -> Chart:
    figure = training_curves(
        summary.steps,
        run_series(summary.accuracy),
        title=f"Training accuracy at the scored positions (mean of the last {summary.window} steps)",
        y_title="accuracy",
        y_range=(0.0, 1.05),
    )
    return Chart(figure, leakage_accuracy_alt(summary), curves_table(summary.steps, summary.accuracy))


def leakage_loss_alt(summary: LeakageSummary) -> str:
    return (
        f"Training loss: the leaky run falls to {summary.loss['leaky'][-1]:.3f}, "
        f"the correct run to {summary.loss['correct'][-1]:.3f}."
    )


def leakage_loss_chart(summary: LeakageSummary) -> Chart:
    title, y_title = "Training loss at the scored positions", "cross-entropy (nats)"
    figure = training_curves(summary.steps, run_series(summary.loss), title=title, y_title=y_title)
    return Chart(figure, leakage_loss_alt(summary), curves_table(summary.steps, summary.loss))


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
