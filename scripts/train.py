"""Pre-train the lab's small masked-language model and save its checkpoint (encoder_core.training.train).

python -m scripts.train  (or: make train; needs Debian's wordnet-base)
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import torch

from encoder_core.training.checkpoint import DEFAULT_DIR
from encoder_core.training.train import TrainSettings, run


def parse_run_arguments(parser: argparse.ArgumentParser, argv: list[str] | None, out: Path) -> argparse.Namespace:
    """Add what every training command takes (--out, default out; --threads), parse argv, set torch's threads."""
    parser.add_argument("--out", type=Path, default=out, help="checkpoint folder")
    # Measured: on a machine already busy with other jobs, 2 threads can be ~10x slower than 1 (threads
    # wait on each other); on a quiet 2-core machine 2 threads take ~150 s for the default 5000 steps.
    parser.add_argument("--threads", type=int, default=2, help="torch threads; use 1 on a busy machine")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    return args


def add_setting_options(parser: argparse.ArgumentParser, settings: type, names: Sequence[str]) -> None:
    """One option per named field of a settings dataclass, --the-field-name, with the field's default and its type."""
    for name in names:
        default = getattr(settings, name)
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)


def settings_from(args: argparse.Namespace, settings: type, names: Sequence[str]):
    """The settings dataclass with the named fields as parsed."""
    return settings(**{name: getattr(args, name) for name in names})


def print_quality(meta: dict, held_out: dict[str, str]) -> None:
    """A trained checkpoint's held-out scores (name -> its metrics' key in meta) and its probe ranks."""
    for name, key in held_out.items():
        m = meta[key]
        print(
            f"held-out {name}, one word hidden: top-1 {m['top1']:.3f}  top-5 {m['top5']:.3f}  "
            f"(unigram baseline top-1 {m['baseline_top1']:.3f}  top-5 {m['baseline_top5']:.3f})"
        )
    for p in meta["probes"]:
        print(f"  rank {p['rank']:>5}  {p['best']:<10} {p['text']}")


OPTIONS = ("steps", "seed", "lr", "dropout")  # the TrainSettings a command line may change


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Pre-train the lab's small masked-language model.")
    add_setting_options(parser, TrainSettings, OPTIONS)
    args = parse_run_arguments(parser, argv, DEFAULT_DIR)
    settings = settings_from(args, TrainSettings, OPTIONS)
    meta = run(settings, args.out)
    print(f"trained {settings.steps} steps in {meta['train_seconds']:.0f}s, final loss {meta['final_loss']:.3f}")
    print_quality(meta, {"grammar": "metrics", "WordNet examples": "real_metrics"})
    print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
