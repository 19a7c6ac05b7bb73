"""The padding lesson: what the key padding mask does, and what forgetting it costs.

Functions take a model and a padded Batch (tokenizer.pad), run under torch.inference_mode,
and return small dataclasses. Nothing here changes the model: where a different precision
or a PyTorch reference module is needed, a private copy or a fresh module is built.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import torch
from torch import nn

from ..model.model import Encoder
from ..model.self_attention import attention
from ..model.tokenizer import Batch, Encoding


def _check_row(batch: Batch, row: int) -> None:
    if not 0 <= row < batch.ids.shape[0]:
        raise ValueError(f"row must be in [0, {batch.ids.shape[0] - 1}], got {row}")


@dataclass
class PaddedAttention:
    row: int
    layer: int
    head: int
    n_real: int  # the row's real tokens come first, then its pads
    masked: torch.Tensor  # (T, T) with the key padding mask
    unmasked: torch.Tensor  # (T, T) the same batch, no mask
    pad_mass_masked: list[float]  # per real query: total weight on pad keys (0 with the mask)
    pad_mass_unmasked: list[float]
    masked_pad_column_max: float  # the largest weight any query puts on a pad key, masked


def padded_attention(model: Encoder, batch: Batch, row: int, layer: int, head: int) -> PaddedAttention:
    """One row's attention at (layer, head) in the padded batch, with and without the mask."""
    _check_row(batch, row)
    cfg = model.config
    if not 0 <= layer < cfg.n_layers or not 0 <= head < cfg.n_heads:
        raise ValueError(f"layer/head out of range: ({layer}, {head})")
    with torch.inference_mode():
        w_m = model(batch.ids, batch.segments, batch.key_padding_mask).attentions[layer][row, head]
        w_u = model(batch.ids, batch.segments).attentions[layer][row, head]
    n = batch.lengths[row]
    return PaddedAttention(
        row=row,
        layer=layer,
        head=head,
        n_real=n,
        masked=w_m,
        unmasked=w_u,
        pad_mass_masked=w_m[:n, n:].sum(-1).tolist(),
        pad_mass_unmasked=w_u[:n, n:].sum(-1).tolist(),
        masked_pad_column_max=float(w_m[:, n:].max()) if w_m.shape[1] > n else 0.0,
    )


@dataclass
class PadLeak:
    row: int
    n_pads: int  # pads on this row in the batch
    gap_masked: float  # max |change| of any real token's final output, batch vs alone
    gap_unmasked: float
    per_token_masked: list[float]  # per real token: max |change| over its features
    per_token_unmasked: list[float]
    pad_counts: list[int]  # the curve's x: pads appended to the sequence run alone
    curve_masked: list[float]
    curve_unmasked: list[float]


def _max_change(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a - b).abs().amax(dim=-1)  # (T,) per token


def pad_leak(model: Encoder, batch: Batch, row: int, *, max_points: int = 21, min_pads: int = 0) -> PadLeak:
    """How much a sequence's real outputs change because it sits in a padded batch.

    The curve runs the sequence alone with 0 up to max(its pads in the batch, min_pads) pads appended,
    at about max_points pad counts, always including the batch's own count and min_pads.

    Computed in float64 on a private copy of the model: in float32 even a correctly masked
    batch differs from the lone run by a few rounding units (~1e-6), which would blur a
    comparison whose whole point is "exactly the same" versus "different".
    """
    _check_row(batch, row)
    m64 = copy.deepcopy(model).double()
    n = batch.lengths[row]
    ids, segs = batch.ids[row : row + 1, :n], batch.segments[row : row + 1, :n]
    n_pads = batch.ids.shape[1] - n
    with torch.inference_mode():
        alone = m64(ids, segs, need_weights=False).hidden[0]
        in_masked = m64(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False).hidden[row, :n]
        in_unmasked = m64(batch.ids, batch.segments, need_weights=False).hidden[row, :n]
        tok_m, tok_u = _max_change(in_masked, alone), _max_change(in_unmasked, alone)
        top = max(n_pads, min_pads)
        counts = sorted({round(i * top / (max_points - 1)) for i in range(max_points)} | {n_pads, top})
        curve_m, curve_u = [], []
        for p in counts:
            pad_ids = torch.cat([ids, torch.full((1, p), model.config.pad_id, dtype=torch.long)], dim=1)
            pad_segs = torch.cat([segs, torch.zeros((1, p), dtype=torch.long)], dim=1)
            mask = torch.zeros(pad_ids.shape, dtype=torch.bool)
            mask[:, n:] = True
            out_m = m64(pad_ids, pad_segs, mask, need_weights=False).hidden[0, :n]
            out_u = m64(pad_ids, pad_segs, need_weights=False).hidden[0, :n]
            curve_m.append(float(_max_change(out_m, alone).max()))
            curve_u.append(float(_max_change(out_u, alone).max()))
    return PadLeak(
        row=row,
        n_pads=n_pads,
        gap_masked=float(tok_m.max()),
        gap_unmasked=float(tok_u.max()),
        per_token_masked=tok_m.tolist(),
        per_token_unmasked=tok_u.tolist(),
        pad_counts=counts,
        curve_masked=curve_m,
        curve_unmasked=curve_u,
    )


def seed001_tensors() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """X (4, 3), Wq, Wk (3, 3), Wv (3, 2) of the seed-7 worked example (encoder_core.data.examples)."""
    g = torch.Generator().manual_seed(7)
    X = torch.randn(4, 3, generator=g)
    return X, torch.randn(3, 3, generator=g), torch.randn(3, 3, generator=g), torch.randn(3, 2, generator=g)


@dataclass
class ZeroKeyPadCheck:
    weights_unmasked: torch.Tensor  # (4, 4): three real rows and the pad row, pad key last
    weights_masked: torch.Tensor  # (4, 4)
    pad_weight_unmasked: list[float]  # weight each real row puts on the pad key, no mask
    gap_unmasked: float  # max |change| of the real outputs vs the three tokens alone
    gap_masked: float
    outputs_alone: torch.Tensor  # (3, 2)
    outputs_unmasked: torch.Tensor  # (4, 2)
    outputs_masked: torch.Tensor  # (4, 2); row 3 is the pad's own output
    mean_real_value: torch.Tensor  # (2,) the average of the three real value vectors


def zero_key_pad_check() -> ZeroKeyPadCheck:
    """The seed example's first three tokens plus a pad whose input, hence query, key and value, is zero."""
    X, Wq, Wk, Wv = seed001_tensors()
    x3 = X[:3]
    xp = torch.cat([x3, torch.zeros(1, 3)])  # (4, 3)
    out_alone, _ = attention(x3 @ Wq, x3 @ Wk, x3 @ Wv)
    out_u, w_u = attention(xp @ Wq, xp @ Wk, xp @ Wv)
    pad_mask = torch.tensor([[False, False, False, True]])
    out_m, w_m = attention((xp @ Wq)[None], (xp @ Wk)[None], (xp @ Wv)[None], key_padding_mask=pad_mask)
    out_m, w_m = out_m[0], w_m[0]
    return ZeroKeyPadCheck(
        weights_unmasked=w_u,
        weights_masked=w_m,
        pad_weight_unmasked=w_u[:3, 3].tolist(),
        gap_unmasked=float((out_u[:3] - out_alone).abs().max()),
        gap_masked=float((out_m[:3] - out_alone).abs().max()),
        outputs_alone=out_alone,
        outputs_unmasked=out_u,
        outputs_masked=out_m,
        mean_real_value=(x3 @ Wv).mean(0),
    )


@dataclass
class FastPathPads:
    row: int
    pad_positions: list[int]
    norms_train: list[float]  # the row's pad outputs, train mode (dropout 0): computed like any token
    norms_eval: list[float]  # eval mode: the nested-tensor fast path fills pads with zeros
    real_max_diff: float  # real tokens agree between the two modes (up to rounding)


def fast_path_pad_outputs(model: Encoder, batch: Batch, row: int, *, seed: int = 0) -> FastPathPads:
    """Run the batch's embeddings through a fresh torch.nn.TransformerEncoder of the same shape,
    with the padding mask, once in train mode (dropout 0) and once in eval mode."""
    _check_row(batch, row)
    cfg = model.config
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = nn.TransformerEncoderLayer(
            cfg.d_model, cfg.n_heads, cfg.d_ff, dropout=0.0, activation=cfg.activation, batch_first=True
        )
        reference = nn.TransformerEncoder(layer, cfg.n_layers, enable_nested_tensor=True)
    n = batch.lengths[row]
    with torch.inference_mode(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nested tensors are a prototype": expected, not for the page
        x = model.embeddings(batch.ids, batch.segments)
        reference.train()
        out_train = reference(x, src_key_padding_mask=batch.key_padding_mask)
        reference.eval()
        out_eval = reference(x, src_key_padding_mask=batch.key_padding_mask)
    real = ~batch.key_padding_mask
    return FastPathPads(
        row=row,
        pad_positions=list(range(n, batch.ids.shape[1])),
        norms_train=out_train[row, n:].norm(dim=-1).tolist(),
        norms_eval=out_eval[row, n:].norm(dim=-1).tolist(),
        real_max_diff=float((out_train[real] - out_eval[real]).abs().max()),
    )


# ---- what a student is asked to predict (ui.frame.predict asks; these compute the model's answer) ----

# The leak curve reaches at least this many pads, so how the gap changes with the pads can be read.
LEAK_MIN_PADS = 16
# In float64 a masked run matches the lone run to ~1e-15; an unmasked one moves by far more than this.
LEAK_ROUNDING = 1e-6


def mean_pad_share(attn: PaddedAttention) -> float:
    """Without the mask: the share of its attention a real token gives the pads, averaged over the real tokens."""
    shares = attn.pad_mass_unmasked
    return sum(shares) / len(shares) if shares else 0.0


# The pad-share question is asked only where the pads take at least this much of a real token's attention without
# the mask: below it, "the pads get nothing" is nearly right, and the head is shown instead of asked about.
PAD_SHARE_MIN = 0.05
# A guess within this share of the model's value is right. Fixed, never narrowed by a nearby misconception (the
# even share is named only when it lies at least twice as far), so the tolerance the prompt states gives nothing away.
PAD_SHARE_TOLERANCE = 0.25


def even_share(attn: PaddedAttention) -> float:
    """The share the pads would get from a head that spread every row evenly over all the keys."""
    width = attn.unmasked.shape[-1]
    return (width - attn.n_real) / width


def even_is_far(share: float, even: float, tolerance: float = PAD_SHARE_TOLERANCE) -> bool:
    """Is the even share at least twice the tolerance away from the model's share (so it can be named a trap)?"""
    return share > 0 and abs(even / share - 1) >= 2 * tolerance


@dataclass(frozen=True)
class PadCount:
    """How many [PAD]s the padded row gets, and the count each of a few miscountings gives instead."""

    answer: int
    miscounts: dict[str, int]  # misconception -> its count, where it differs from the answer (two may agree)
    split: tuple[str, list[str]] | None  # a word cut into pieces (for "counted words, not pieces"), if any


def _words(enc: Encoding) -> int:
    """Words typed, each counted once however many pieces it became (added specials are not words)."""
    return sum(1 for w in enc.words if w) - sum(len(pieces) - 1 for _, pieces in enc.split_words)


def pad_count(pair: Encoding, single: Encoding, extra: int) -> PadCount:
    """The single sentence's [PAD]s in the batch [pair, single] with `extra` pads on every row, and what a
    student who forgets a [SEP], adds a [CLS], counts words instead of pieces, or leaves out the extra pads gets."""

    def pads(n_pair: int, n_single: int, more: int) -> int:
        return max(n_pair, n_single) + more - n_single

    answer = pads(len(pair), len(single), extra)
    candidates = {
        "one_sep": pads(len(pair) - 1, len(single), extra),  # [CLS] A B [SEP]: one [SEP] for the pair
        "cls_each": pads(len(pair) + 1, len(single), extra),  # [CLS] A [SEP] [CLS] B [SEP]
        "words": pads(_words(pair) + 3, _words(single) + 2, extra),  # words, not word pieces
        "no_extra": pads(len(pair), len(single), 0),  # the extra pads left out
    }
    miscounts = {name: count for name, count in candidates.items() if count != answer}
    splits = pair.split_words + single.split_words
    return PadCount(answer, miscounts, splits[0] if splits else None)


# Without the mask, as pads are appended: the real outputs move further, by the same, not at all, or less.
LEAK_TRENDS = ("grows", "same", "still", "shrinks")


# How far a trend's ratio may lie from a band's edge and still be called clearly inside it: where the gap's ratio
# (most pads against fewest) lies within this share of an edge, the trends on both sides of it count as right.
LEAK_TREND_MARGIN = 0.05


def leak_ends(leak: PadLeak) -> tuple[tuple[int, float], tuple[int, float]]:
    """(pads, unmasked gap) at the fewest pads on the curve above 0, and at the most."""
    points = [(pads, gap) for pads, gap in zip(leak.pad_counts, leak.curve_unmasked) if pads > 0]
    if len(points) < 2:
        raise ValueError(f"the curve needs at least two pad counts above 0 to show a trend, has {len(points)}")
    return points[0], points[-1]


def accepted_trends(leak: PadLeak, margin: float = LEAK_TREND_MARGIN) -> set[str]:
    """The trends that count as right: leak_trend's, and a neighbour's where the ratio lies within `margin` of
    the edge between them (no coin toss decides the verdict)."""
    (few, first), (most, last) = leak_ends(leak)
    trends = {leak_trend(leak)}
    for scale in (1 + margin, 1 / (1 + margin)):
        nudged = PadLeak(**{**vars(leak), "pad_counts": [few, most], "curve_unmasked": [first, last * scale]})
        trends.add(leak_trend(nudged))
    return trends


def leak_trend(leak: PadLeak, rounding: float = LEAK_ROUNDING, tolerance: float = 0.1) -> str:
    """How the unmasked gap changes from the fewest pads on the curve to the most: one of LEAK_TRENDS.

    "still": no point of the curve moves by more than rounding. Otherwise the gap at the most pads is
    compared with the gap at the fewest (above 0): more than 1 + tolerance times larger is "grows",
    less than 1 / (1 + tolerance) is "shrinks", anything between is "same".
    """
    points = [gap for pads, gap in zip(leak.pad_counts, leak.curve_unmasked) if pads > 0]
    if len(points) < 2:
        raise ValueError(f"the curve needs at least two pad counts above 0 to show a trend, has {len(points)}")
    if max(points) <= rounding:
        return "still"
    first, last = max(points[0], rounding), points[-1]
    if last > first * (1 + tolerance):
        return "grows"
    if last < first / (1 + tolerance):
        return "shrinks"
    return "same"
