"""When the answer leaks: the leaky run against the correct one, summarised."""

from __future__ import annotations

from dataclasses import dataclass

# The two runs of encoder_core.objectives.leakage, in the order they are trained.
LEAKAGE_RUNS = ("correct", "leaky")


def leakage_run_at(step: int, total: int) -> str:
    """Which run a progress step belongs to: leakage_experiment trains correct then leaky, counting over both."""
    return "correct" if step <= total // 2 else "leaky"


def leakage_estimate(seconds_per_step: float | None, steps: int) -> int | None:
    """Whole seconds the two runs should take at the measured speed (at least 1), or None before any run."""
    return max(1, round(seconds_per_step * steps)) if seconds_per_step else None


def running_mean(values: list[float], window: int) -> list[float]:
    """Trailing mean over the last `window` values (fewer at the start): a readable training curve."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    csum = [0.0]
    for v in values:
        csum.append(csum[-1] + float(v))
    return [(csum[i + 1] - csum[max(0, i + 1 - window)]) / min(i + 1, window) for i in range(len(values))]


@dataclass
class LeakageSummary:
    """encoder_core.objectives.leakage's two runs, boiled down to what the page plots and states."""

    steps: list[int]  # 1..n
    window: int
    accuracy: dict[str, list[float]]  # run name -> running mean of training accuracy
    loss: dict[str, list[float]]  # run name -> running mean of training loss
    final_train_accuracy: dict[str, float]  # mean over the last `window` steps
    first_step_at: dict[str, int | None]  # first step whose running accuracy reaches `threshold`
    threshold: float
    held_out_top1: dict[str, float]
    held_out_top5: dict[str, float]
    n_held_out: int
    seconds: dict[str, float]


def summarise_leakage(result, window: int = 20, threshold: float = 0.9) -> LeakageSummary:
    """result: encoder_core.objectives.leakage.LeakageResult (both runs from the same start and the same batches)."""
    runs = {"correct": result.correct, "leaky": result.leaky}
    n = len(result.correct.accuracy)
    window = max(1, min(window, n))
    acc = {name: running_mean(run.accuracy, window) for name, run in runs.items()}
    first = {name: next((i + 1 for i, a in enumerate(curve) if a >= threshold), None) for name, curve in acc.items()}
    return LeakageSummary(
        steps=list(range(1, n + 1)),
        window=window,
        accuracy=acc,
        loss={name: running_mean(run.loss, window) for name, run in runs.items()},
        final_train_accuracy={name: sum(run.accuracy[-window:]) / window for name, run in runs.items()},
        first_step_at=first,
        threshold=threshold,
        held_out_top1={name: run.held_out_top1 for name, run in runs.items()},
        held_out_top5={name: run.held_out_top5 for name, run in runs.items()},
        n_held_out=result.n_held_out,
        seconds={name: run.seconds for name, run in runs.items()},
    )
