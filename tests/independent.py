"""Independent implementations and data that tests in several folders share: each computes what the
code under test must equal, without the code under test."""

from __future__ import annotations

import copy

import torch

from encoder_core.objectives.mlm_masking import MaskingResult, mask_tokens

# A student's everyday sentence of thirty words: none of them may become [UNK].
THIRTY_WORDS = (
    "Yesterday my neighbour borrowed twelve eggs, some flour and a bottle of milk because the "
    "supermarket near the station had closed very early for the long holiday weekend once again."
)


def reference_draw(tokenizer, text: str, rate: float, exact: bool, seed: int) -> tuple[torch.Tensor, MaskingResult]:
    """(ids, mask_tokens' result) for one sentence, seeded as the lesson seeds it: what a draw must equal."""
    ids = torch.tensor([tokenizer.encode(text).ids])
    return ids, mask_tokens(
        ids,
        mask_id=tokenizer.mask_id,
        special_ids=tokenizer.special_ids,
        vocab_size=tokenizer.vocab_size,
        rate=rate,
        exact=exact,
        generator=torch.Generator().manual_seed(seed),
    )


def gap_with_pads_by_hand(model, tok, text, n_pads) -> float:
    """Float64: the sentence alone, then with n_pads [PAD]s appended and no mask; the largest change of a real value."""
    m64 = copy.deepcopy(model).double()
    ids = torch.tensor([tok.encode(text).ids])
    padded = torch.cat([ids, torch.full((1, n_pads), tok.pad_id)], dim=1)
    with torch.inference_mode():
        alone = m64(ids, need_weights=False).hidden[0]
        moved = m64(padded, need_weights=False).hidden[0, : ids.shape[1]]
    return float((moved - alone).abs().max())
