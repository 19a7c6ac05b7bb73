"""Fine-tuning speed for the outputs lesson: every task and starting point at its default steps, wall clock.

    python -m benchmarks.outputs_fine_tune [--threads N]

Prints one row per run: seconds, held-out score and its majority baseline. The page trains one
run at a time with one thread (ui.models sets it), so one thread is the default here too.
"""

from __future__ import annotations

import argparse

import torch

from encoder_core.finetune.tasks import DEFAULT_STEPS, STARTS, TASKS, fine_tune
from encoder_core.training.checkpoint import load_small_mlm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer, _ = load_small_mlm()
    print("| task | start | steps | seconds | held-out | majority baseline |")
    print("|---|---|---|---|---|---|")
    for task in TASKS:
        for start in STARTS:
            run = fine_tune(model.bert, tokenizer, task, start)
            print(
                f"| {task} | {start} | {DEFAULT_STEPS[task]} | {run.seconds:.1f} | {run.held_out:.3f} "
                f"| {run.baseline:.3f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
