"""Independent implementations and data that tests in several folders share: each computes what the
code under test must equal, without the code under test; and damaged copies of what it must refuse."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

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


def hf_config(transformers, c, attn_implementation: str = "eager"):
    """transformers' BertConfig for one of our EncoderConfigs (eager attention by default, so weights can be read)."""
    return transformers.BertConfig(
        vocab_size=c.vocab_size,
        hidden_size=c.d_model,
        num_attention_heads=c.n_heads,
        num_hidden_layers=c.n_layers,
        intermediate_size=c.d_ff,
        max_position_embeddings=c.max_positions,
        type_vocab_size=c.type_vocab_size,
        layer_norm_eps=c.layer_norm_eps,
        hidden_act="gelu",
        attn_implementation=attn_implementation,
    )


def hf_masked_lm(model):
    """transformers' BertForMaskedLM holding the same weights as our MaskedLanguageModel: (model, missing keys)."""
    import transformers

    hf = transformers.BertForMaskedLM(hf_config(transformers, model.config)).eval()
    state = {k: v for k, v in model.state_dict().items() if not k.startswith("bert.pooler")}
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected, unexpected
    return hf, missing


def damaged_copy(checkpoint: Path, into: Path, weights_file: str) -> Path:
    """A copy of a checkpoint folder with the last byte of its weights flipped: a load must refuse it."""
    bad = into / checkpoint.name
    shutil.copytree(checkpoint, bad)
    data = bytearray((bad / weights_file).read_bytes())
    data[-1] ^= 1
    (bad / weights_file).write_bytes(bytes(data))
    return bad
