"""Train the lab's MLM head on all-MiniLM-L6-v2 and save its trained part (encoder_core.pretrained.minilm_mlm).

python -m scripts.train_minilm_mlm  (or: make train-minilm; needs Debian's wordnet-base and trans-de-en)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from encoder_core.pretrained.minilm_mlm import DEFAULT_DIR, HeadSettings, run
from scripts.train import parse_run_arguments, print_quality


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the lab's MLM head on all-MiniLM-L6-v2.")
    parser.add_argument("--sentences", type=int, default=HeadSettings.sentences)
    parser.add_argument("--epochs", type=int, default=HeadSettings.epochs)
    parser.add_argument("--frozen-layers", type=int, default=HeadSettings.frozen_layers)
    parser.add_argument("--everyday-copies", type=int, default=HeadSettings.everyday_copies)
    parser.add_argument("--refresh", type=int, default=HeadSettings.refresh)
    parser.add_argument("--everyday-frozen-layers", type=int, default=HeadSettings.everyday_frozen_layers)
    parser.add_argument("--everyday-lr", type=float, default=HeadSettings.everyday_lr)
    parser.add_argument("--everyday-head-lr", type=float, default=HeadSettings.everyday_head_lr)
    parser.add_argument("--whole-word", action="store_true", help="stage 1 masks whole words")
    parser.add_argument("--everyday-whole-word", action="store_true", help="stage 2 masks whole words")
    parser.add_argument("--start-from", type=Path, help="a checkpoint folder holding stage 1 (skips it)")
    args = parse_run_arguments(parser, argv, DEFAULT_DIR)
    settings = HeadSettings(
        sentences=args.sentences,
        epochs=args.epochs,
        frozen_layers=args.frozen_layers,
        everyday_copies=args.everyday_copies,
        refresh=args.refresh,
        everyday_frozen_layers=args.everyday_frozen_layers,
        everyday_lr=args.everyday_lr,
        everyday_head_lr=args.everyday_head_lr,
        whole_word=args.whole_word,
        everyday_whole_word=args.everyday_whole_word,
    )
    meta = run(settings, args.out, start_from=args.start_from)
    print(f"trained in {meta['train_seconds']:.0f}s (caching {meta['cache_seconds']:.0f}s)")
    print_quality(meta, {"WordNet examples": "real_metrics"})
    print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
