"""Print both probe tables, the twenty fixed probes and the everyday ones, for MiniLM under the lab's
committed MLM head (encoder_core.training.probes, encoder_core.training.everyday_probes).

    python -m scripts.everyday_probes
"""

from __future__ import annotations

import torch

from encoder_core.pretrained.minilm_mlm import load_minilm_mlm
from encoder_core.training.everyday_probes import EVERYDAY_PROBES
from encoder_core.training.probes import PROBES, probes_table, run_probes


def main() -> None:
    """Both probe tables for MiniLM under the lab's committed head."""
    torch.set_num_threads(1)
    model, tokenizer, _ = load_minilm_mlm()
    for name, probes in (("the twenty fixed probes", PROBES), ("everyday probes", EVERYDAY_PROBES)):
        results = run_probes(model, tokenizer, probes)
        print(f"\n{name}: {sum(r.rank <= 5 for r in results)} of {len(results)} in the top 5\n")
        print(probes_table(results))


if __name__ == "__main__":
    main()
