"""The heads lesson's shared run: one sentence through the encoder, every layer's attention kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from ...model.model import Encoder
from ...model.tokenizer import Encoding

SPECIALS = ("[CLS]", "[SEP]", "[PAD]", "[MASK]")
# The tokens an encoding puts around the text. A [MASK] typed by hand is part of the text.
FRAMING = ("[CLS]", "[SEP]", "[PAD]")


@dataclass
class AttentionRun:
    """One sequence through an encoder, with every layer's attention kept."""

    tokens: list[str]
    segments: list[int]
    attentions: torch.Tensor  # (L, H, T, T), one sequence
    hidden_states: torch.Tensor  # (L + 1, T, D): the embeddings, then each layer's output
    truncated: int  # tokens cut to fit the model
    unknown: list[str]  # typed words the tokenizer turned into [UNK]
    split_words: list[tuple[str, list[str]]] = field(default_factory=list)  # as Encoding.split_words


@torch.inference_mode()
def run_encoder(model: Encoder, enc: Encoding) -> AttentionRun:
    """Run one encoded sentence (or pair) and keep all attention maps and hidden states."""
    ids = torch.tensor([enc.ids], dtype=torch.long)
    segments = torch.tensor([enc.segments], dtype=torch.long)
    out = model(ids, segments, need_weights=True)
    attentions = torch.stack([w[0] for w in out.attentions])  # (L, H, T, T)
    hidden = torch.stack([h[0] for h in out.hidden_states])  # (L + 1, T, D)
    return AttentionRun(
        list(enc.tokens), list(enc.segments), attentions, hidden, enc.truncated, list(enc.unknown), enc.split_words
    )


def all_unknown(tokens: Sequence[str]) -> bool:
    """True when the text became nothing but [UNK]: the model sees no word it knows."""
    content = [t for t in tokens if t not in FRAMING]
    return bool(content) and all(t == "[UNK]" for t in content)
