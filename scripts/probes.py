"""Print the twenty fixed probes' table for the committed small MLM (encoder_core.training.probes).

python -m scripts.probes
"""

from __future__ import annotations

import torch

from encoder_core.training.checkpoint import load_small_mlm
from encoder_core.training.probes import probes_table, run_probes


def main() -> None:
    """Print the probes table for the committed checkpoint."""
    torch.set_num_threads(1)
    model, tokenizer, _ = load_small_mlm()
    print(probes_table(run_probes(model, tokenizer)))


if __name__ == "__main__":
    main()
