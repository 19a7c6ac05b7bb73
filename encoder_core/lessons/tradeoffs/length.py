"""2. Length: the cap, truncation, windows, and what attention's T x T costs."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model.config import EncoderConfig
from ...model.costs import (
    Windows,
    fastest_seconds,
    fitted_exponent,
    layer_flops,
    split_windows,
)
from ...model.hooks import run_with_cache
from ...model.model import Encoder
from ...model.self_attention import attention
from ...model.tokenizer import WordPieceTokenizer
from .common import _ids

TIMING_LENGTHS = (16, 32, 64, 128, 256, 512)
WINDOW_OVERLAP = 128  # tokens two neighbouring windows share (Hugging Face's usual stride for QA)
BYTES_PER_WEIGHT = 4  # float32


@dataclass
class LengthCap:
    n_tokens: int  # the whole document's tokens, [CLS] and [SEP] included
    cap: int  # the position table's size
    cut: int  # tokens truncation drops
    before_cut: list[str]  # the last tokens kept
    after_cut: list[str]  # the first tokens dropped
    windows: Windows  # over the content tokens (the cap minus [CLS] and [SEP])


def length_cap(tokenizer: WordPieceTokenizer, text: str, cap: int, *, overlap: int = WINDOW_OVERLAP) -> LengthCap:
    """What a cap of `cap` positions does to the text: how much truncation cuts, and the windows that would fit it."""
    whole = tokenizer.encode(text, max_length=None)
    cut_enc = tokenizer.encode(text, max_length=cap, truncate=True)
    content = whole.tokens[1:-1]
    kept = cap - 2
    return LengthCap(
        n_tokens=len(whole),
        cap=cap,
        cut=cut_enc.truncated,
        before_cut=content[max(0, kept - 6) : kept],
        after_cut=content[kept : kept + 6],
        windows=split_windows(len(content), kept, min(overlap, kept - 1)),
    )


@dataclass(frozen=True)
class FirstCut:
    """The sentence repeated into a document longer than the cap: which of its pieces is the first one cut."""

    pieces: list[str]  # one copy of the sentence as word pieces ([CLS] and [SEP] left out)
    cap: int
    kept: int  # the document's pieces truncation keeps: the cap less [CLS] and [SEP]
    index: int  # into pieces: the first piece the model never sees
    misread: dict[str, int]  # a wrong idea -> the index it leads to (only those that differ from `index`)

    @property
    def options(self) -> list[int]:
        """The pieces to offer: the right one, then each wrong idea's, each once, in the sentence's order."""
        return sorted({self.index, *self.misread.values()})


def first_cut(tokenizer: WordPieceTokenizer, text: str, copies: int, cap: int) -> FirstCut | None:
    """Truncate `copies` copies of text (joined by spaces) to `cap` positions; None when nothing is cut or the
    sentence is a single piece (every wrong idea would then land on the right piece)."""
    pieces = tokenizer.encode(text, max_length=None).tokens[1:-1]
    enc = tokenizer.encode(" ".join([text] * copies), max_length=cap, truncate=True)
    if not enc.truncated or len(pieces) < 2:
        return None
    k, kept = len(pieces), len(enc) - 2
    words = [p for _, p in tokenizer.split_words(text)]
    by_words = sum(len(p) for p in words[: kept % len(words)])  # counting words: that word's first piece
    wrong = {"specials": (kept + 2) % k, "sep": (kept + 1) % k, "last": (kept - 1) % k, "words": by_words}
    misread: dict[str, int] = {}
    for name, i in wrong.items():  # each wrong piece once, under the first idea that leads to it
        if i != kept % k and i not in misread.values():
            misread[name] = i
    return FirstCut(pieces, cap, kept, kept % k, misread)


@dataclass
class AttentionScaling:
    lengths: list[int]
    weights_bytes: list[int]  # every layer's (1, H, T, T) float32 weights, from the shapes
    flops_linear: list[int]  # projections and FFN, all layers: grows like T
    flops_attention: list[int]  # scores and mixing, all layers: grows like T^2
    crossover: int  # the length at which the two are equal: 2 D + d_ff


def attention_scaling(config: EncoderConfig, lengths=TIMING_LENGTHS) -> AttentionScaling:
    layers, h = config.n_layers, config.n_heads
    lin = [layers * layer_flops(config, t, 0) for t in lengths]
    full = [layers * layer_flops(config, t, t) for t in lengths]
    return AttentionScaling(
        list(lengths),
        [layers * h * t * t * BYTES_PER_WEIGHT for t in lengths],
        lin,
        [f - g for f, g in zip(full, lin)],
        2 * config.d_model + config.d_ff,
    )


@dataclass
class LengthTimings:
    lengths: list[int]
    attention_seconds: list[float]  # softmax(q k^T / sqrt(d)) v of every layer, the fastest of a few runs
    forward_seconds: list[float]  # the whole forward pass
    weights_bytes: list[int]  # the (1, H, T, T) tensors a real run returned, summed over the layers
    exponent_attention: float  # fitted slope of log time against log T
    exponent_forward: float


def length_ids(ids, length: int) -> torch.Tensor:
    """[CLS], then the sentence's tokens over and over, to exactly `length` tokens: (1, length)."""
    ids = _ids(ids)[0].tolist()
    body = ids[1:-1] or ids
    return torch.tensor([[ids[0]] + [body[i % len(body)] for i in range(length - 1)]])


def time_lengths(model: Encoder, ids, lengths=TIMING_LENGTHS, repeats: int = 5) -> LengthTimings:
    """Time the attention of every layer, and the whole forward pass, at each length (slow: on demand only)."""
    att_s, fwd_s, sizes = [], [], []
    with torch.inference_mode():
        for t in lengths:
            x_ids = length_ids(ids, t)
            reads = [f"blocks.{i}.attn.in" for i in range(model.config.n_layers)]  # what each attention reads
            run, cache = run_with_cache(model, x_ids, names=reads)
            sizes.append(sum(w.numel() * w.element_size() for w in run.attentions))
            qkv = []
            for block, name in zip(model.encoder.layer, reads):
                sa = block.attention.self
                qkv.append(tuple(sa.split_heads(p(cache[name])) for p in (sa.query, sa.key, sa.value)))
            att_s.append(fastest_seconds(lambda qkv=qkv: [attention(q, k, v) for q, k, v in qkv], repeats))
            fwd_s.append(fastest_seconds(lambda x_ids=x_ids: model(x_ids, need_weights=False), repeats))
    return LengthTimings(
        list(lengths),
        att_s,
        fwd_s,
        sizes,
        fitted_exponent(lengths, att_s),
        fitted_exponent(lengths, fwd_s),
    )
