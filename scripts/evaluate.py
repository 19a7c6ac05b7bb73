"""Evaluate the small MLM's checkpoint on held-out sentences (encoder_core.training.evaluate).

python -m scripts.evaluate [--path CHECKPOINT_FOLDER]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from encoder_core.training.checkpoint import DEFAULT_DIR
from encoder_core.training.evaluate import evaluate_checkpoint, format_table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Evaluate the small MLM on held-out sentences.")
    parser.add_argument("--path", type=Path, default=DEFAULT_DIR, help="checkpoint folder")
    args = parser.parse_args(argv)
    torch.set_num_threads(2)
    print(format_table(evaluate_checkpoint(args.path)))


if __name__ == "__main__":
    main()
