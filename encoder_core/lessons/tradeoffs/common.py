"""What every section of the trade-offs lesson shares: how much of the sentence it reads, ids as a batch."""

from __future__ import annotations

import torch

MAX_SENTENCE_TOKENS = 64  # the lesson reads at most this many tokens of the sentence


def _ids(ids) -> torch.Tensor:
    ids = torch.as_tensor(ids, dtype=torch.long)
    return ids[None] if ids.dim() == 1 else ids
