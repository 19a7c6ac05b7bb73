"""Train the lab's MLM head on all-MiniLM-L6-v2 and save its trained part (encoder_core.pretrained.minilm_mlm).

python -m scripts.train_minilm_mlm  (or: make train-minilm; needs Debian's wordnet-base and trans-de-en)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from encoder_core.pretrained.minilm_mlm import DEFAULT_DIR, HeadSettings, run
from scripts.train import add_setting_options, parse_run_arguments, print_quality, settings_from

OPTIONS = (  # the HeadSettings a command line may change, besides the two whole-word flags
    "sentences",
    "epochs",
    "frozen_layers",
    "everyday_copies",
    "refresh",
    "everyday_frozen_layers",
    "everyday_lr",
    "everyday_head_lr",
)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train the lab's MLM head on all-MiniLM-L6-v2.")
    add_setting_options(parser, HeadSettings, OPTIONS)
    parser.add_argument("--whole-word", action="store_true", help="stage 1 masks whole words")
    parser.add_argument("--everyday-whole-word", action="store_true", help="stage 2 masks whole words")
    parser.add_argument("--start-from", type=Path, help="a checkpoint folder holding stage 1 (skips it)")
    args = parse_run_arguments(parser, argv, DEFAULT_DIR)
    settings = settings_from(args, HeadSettings, (*OPTIONS, "whole_word", "everyday_whole_word"))
    meta = run(settings, args.out, start_from=args.start_from)
    print(f"trained in {meta['train_seconds']:.0f}s (caching {meta['cache_seconds']:.0f}s)")
    print_quality(meta, {"WordNet examples": "real_metrics"})
    print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
