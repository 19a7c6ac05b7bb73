"""1. No reuse of earlier work: appending a token changes every earlier vector, unless the mask is causal."""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from ...model.costs import (
    CausalCache,
    FlopCounter,
    append_flops_closed_form,
)
from ...model.model import Encoder
from ..attention import shift_fields
from .common import _ids


@dataclass
class AppendReuse:
    n_earlier: int  # positions that were there before the append
    shift_causal: list[float]  # per earlier position: L2 change of its final vector when one token is appended
    shift_bidirectional: list[float]
    max_causal: float
    max_bidirectional: float
    layer_input_shift_causal: float  # largest change of any earlier layer input: keys and values are made from these
    layer_input_shift_bidirectional: float
    cached_vs_full: float  # the new token's vector from the cached step vs a full causal run


def append_one_token(model: Encoder, ids, new_id: int) -> AppendReuse:
    """Run ids, then ids + [new_id], both ways; measure how far every earlier vector moved."""
    ids = _ids(ids)
    longer = torch.cat([ids, torch.tensor([[int(new_id)]])], dim=1)
    n = ids.shape[1]
    shifts, inputs = {}, {}
    with torch.inference_mode():
        for causal in (True, False):
            a = model(ids, causal=causal, need_weights=False)
            b = model(longer, causal=causal, need_weights=False)
            shifts[causal] = (b.hidden[0, :n] - a.hidden[0]).norm(dim=-1)
            inputs[causal] = max(
                float((hb[0, :n] - ha[0]).abs().max()) for ha, hb in zip(a.hidden_states, b.hidden_states)
            )
            if causal:
                full_last = b.hidden[0, -1]
        cache = CausalCache(model)
        for token in longer[0].tolist():
            last = cache.step(token)
    return AppendReuse(
        n_earlier=n,
        **shift_fields(shifts),
        layer_input_shift_causal=inputs[True],
        layer_input_shift_bidirectional=inputs[False],
        cached_vs_full=float((last - full_last).abs().max()),
    )


@dataclass
class AppendCosts:
    prefix: int  # tokens before the first append
    n: int  # tokens appended, one at a time
    flops_bidirectional: list[int]  # cumulative after 0..n appends: every step reruns the whole sequence
    flops_cached: list[int]  # cumulative: every step runs the one new row against the cached keys and values
    closed_form: tuple[int, int]  # (bidirectional, cached) after n appends, from append_flops_closed_form
    seconds_bidirectional: list[float]  # cumulative wall time (this machine, this run)
    seconds_cached: list[float]

    @property
    def ratio(self) -> float:
        """How many times more the bidirectional appends cost (nan for n = 0)."""
        return self.flops_bidirectional[-1] / self.flops_cached[-1] if self.n else float("nan")


def appended_ids(ids, n: int) -> list[int]:
    """The n tokens to append: the sentence's own tokens between [CLS] and [SEP], over and over."""
    ids = _ids(ids)[0].tolist()
    body = ids[1:-1] or ids
    return [body[i % len(body)] for i in range(n)]


def append_costs(model: Encoder, ids, n: int) -> AppendCosts:
    """Append n tokens one at a time, both ways, counting FLOPs from the shapes and timing each step."""
    ids = _ids(ids)
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    prefix = ids.shape[1]
    if prefix + n > model.config.max_positions:
        raise ValueError(f"{prefix} + {n} tokens exceed max_positions={model.config.max_positions}")
    extra = appended_ids(ids, n)
    full = torch.cat([ids, torch.tensor([extra], dtype=torch.long)], dim=1)
    bi, cached = FlopCounter(), FlopCounter()
    flops_bi, flops_c, sec_bi, sec_c = [0], [0], [0.0], [0.0]
    with torch.inference_mode():
        cache = CausalCache(model, cached)
        for token in ids[0].tolist():
            cache.step(token)  # the prefix is read once either way: not part of the comparison
        cached.flops = 0
        for k in range(1, n + 1):
            t0 = time.perf_counter()
            with bi.counting(model):
                model(full[:, : prefix + k], need_weights=False)
            t1 = time.perf_counter()
            cache.step(extra[k - 1])
            t2 = time.perf_counter()
            flops_bi.append(bi.flops)
            flops_c.append(cached.flops)
            sec_bi.append(sec_bi[-1] + t1 - t0)
            sec_c.append(sec_c[-1] + t2 - t1)
    return AppendCosts(prefix, n, flops_bi, flops_c, append_flops_closed_form(model.config, prefix, n), sec_bi, sec_c)


def cache_traps(prefix: int, n: int) -> dict[str, float]:
    """What a student holding each named wrong idea answers to "how many times the cached FLOPs does the encoder
    spend on n appends to a prefix of `prefix` tokens": the number of appends; the prefix's length T (every
    step as long as the first); the final length T + N (every step as long as the last); T squared (the whole
    cost taken to be attention's)."""
    return {"appends": float(n), "length": float(prefix), "final": float(prefix + n), "square": float(prefix**2)}
