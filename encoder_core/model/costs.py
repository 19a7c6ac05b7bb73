"""What an encoder's forward pass costs: FLOPs counted from the shapes of a real run, a causal
run that reuses its keys and values (a KV cache), and the closed forms both counts must equal.

A FLOP here is one multiplication or one addition: a (rows, n) @ (n, m) product costs
2 * rows * n * m. Only the matrix products are counted (the projections, the FFN, the scores
q k^T and the mixing weights @ v); softmax, LayerNorm, GELU and biases are a few operations per
number and are left out, which is what makes the closed form short.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

import torch
from torch import nn

from .config import EncoderConfig
from .model import Encoder, EncoderBlock
from .self_attention import SelfAttention, attention


def layer_flops(config: EncoderConfig, n_queries: int, n_keys: int) -> int:
    """One block, n_queries new rows attending over n_keys keys: the closed form.

    Q, K, V and W_O: 4 products of (T_q, D) @ (D, D); the FFN: (T_q, D) @ (D, F) and back;
    scores and mixing: 2 products of T_q x T_k x D (summed over the heads, H * d_head = D).
    """
    d, f = config.d_model, config.d_ff
    return n_queries * (8 * d * d + 4 * d * f) + 4 * n_queries * n_keys * d


def append_flops_closed_form(config: EncoderConfig, prefix: int, n: int) -> tuple[int, int]:
    """(bidirectional, cached causal) FLOPs of appending n tokens one at a time to a prefix of `prefix` tokens.

    Bidirectional: step k reruns all T = prefix + k rows. Cached causal: step k runs the one new row
    against T keys. With S1 = sum T and S2 = sum T^2 over the n steps (both in closed form):
    bidirectional = L [(8D^2 + 4DF) S1 + 4D S2], cached = L [(8D^2 + 4DF) n + 4D S1].
    """
    d, f, layers = config.d_model, config.d_ff, config.n_layers
    s1 = n * prefix + n * (n + 1) // 2
    s2 = n * prefix * prefix + prefix * n * (n + 1) + n * (n + 1) * (2 * n + 1) // 6
    per_row = 8 * d * d + 4 * d * f
    return layers * (per_row * s1 + 4 * d * s2), layers * (per_row * n + 4 * d * s1)


class FlopCounter:
    """Counts the matrix products of the encoder blocks run inside `counting(model)` from their tensors' shapes."""

    def __init__(self) -> None:
        self.flops = 0

    def add_attention(self, q: torch.Tensor, k: torch.Tensor) -> None:
        """q (B, H, T_q, d_head), k (B, H, T_k, d_head): scores and mixing, 2 products each of T_q x T_k x d_head."""
        B, H, tq, dh = q.shape
        self.flops += 4 * B * H * tq * k.shape[-2] * dh

    @contextmanager
    def counting(self, model: Encoder, *, full_attention: bool = True):
        """full_attention: also count each SelfAttention call as T queries over T keys (a whole-sequence pass).
        A cached step calls attention itself and adds its products with add_attention."""

        def linear_hook(module: nn.Linear, inputs, _output) -> None:
            rows = inputs[0].numel() // module.in_features
            self.flops += 2 * rows * module.in_features * module.out_features

        def attention_hook(module: SelfAttention, inputs, _output) -> None:
            x = inputs[0]  # (B, T, D): a full pass attends T queries over the same T keys
            B, T, _ = x.shape
            self.flops += 4 * B * T * T * module.config.d_model

        handles = []
        for block in model.encoder.layer:
            for module in block.modules():
                if isinstance(module, nn.Linear):
                    handles.append(module.register_forward_hook(linear_hook))
            if full_attention:
                handles.append(block.attention.self.register_forward_hook(attention_hook))
        try:
            yield self
        finally:
            for h in handles:
                h.remove()


# ---- a causal run that keeps its keys and values --------------------------------------------


def _step_block(
    block: EncoderBlock, x: torch.Tensor, cache: list[torch.Tensor], counter: FlopCounter | None
) -> torch.Tensor:
    """One block for the new rows x (B, 1, D): their keys and values join the cache, their queries read it all.

    The same arithmetic as EncoderBlock.forward with the causal mask, for the last row only: the
    earlier rows' keys and values cannot change, because under the causal mask they never saw it.
    """
    sa, out = block.attention.self, block.attention.output
    ln1, ln2 = out.LayerNorm, block.output.LayerNorm
    post = block.config.norm == "post"
    h = x if post else ln1(x)
    q, k, v = (sa.split_heads(proj(h)) for proj in (sa.query, sa.key, sa.value))  # (B, H, 1, d_head)
    if cache:
        k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)  # (B, H, T, d_head)
    cache[:] = [k, v]
    if counter is not None:
        counter.add_attention(q, k)
    a, _ = attention(q, k, v)  # every cached key is in the past: no mask needed
    B, _, _, _ = q.shape
    a = out.dense(a.transpose(1, 2).reshape(B, 1, -1))
    if post:
        h = ln1(x + a)
        return ln2(h + block.output.dense(block.act(block.intermediate.dense(h))))
    r = x + a
    return r + block.output.dense(block.act(block.intermediate.dense(ln2(r))))


class CausalCache:
    """Feed a causal encoder one token at a time; each step computes only the new token's row."""

    def __init__(self, model: Encoder, counter: FlopCounter | None = None):
        self.model, self.counter = model, counter
        self.caches: list[list[torch.Tensor]] = [[] for _ in model.encoder.layer]
        self.length = 0

    def step(self, token_id: int, segment: int = 0) -> torch.Tensor:
        """The new token's final vector (D,), equal to a full causal run's last row."""
        model = self.model
        if self.length >= model.config.max_positions:
            raise ValueError(f"the cache is full: max_positions={model.config.max_positions}")
        emb = model.embeddings
        ids = torch.tensor([[token_id]])
        x = (
            emb.word_embeddings(ids)
            + emb.position_vectors(self.length + 1)[:, -1:]
            + emb.token_type_embeddings(torch.tensor([[segment]]))
        )
        x = emb.LayerNorm(x)
        counting = self.counter.counting(model, full_attention=False) if self.counter else nullcontext()
        with counting:
            for block, cache in zip(model.encoder.layer, self.caches):
                x = _step_block(block, x, cache, self.counter)
        if model.config.norm == "pre":
            x = model.encoder.final_norm(x)
        self.length += 1
        return x[0, 0]


# ---- timing and fitting ------------------------------------------------------------------------


def fastest_seconds(fn: Callable[[], object], repeats: int = 5) -> float:
    """The fastest wall time of fn() over `repeats` calls, after one warm-up call.

    Other work on a shared machine only ever adds time to a run, so the fastest is the least disturbed.
    """
    fn()
    best = math.inf
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def fitted_exponent(xs, ys) -> float:
    """The slope of log y against log x by least squares: y ~ c * x^slope."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        raise ValueError("need at least two positive points to fit an exponent")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        raise ValueError("the x values must not all be equal")
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx


@dataclass(frozen=True)
class Windows:
    size: int  # content tokens per window (the cap minus [CLS] and [SEP])
    overlap: int
    spans: list[tuple[int, int]]  # [start, end) of each window over the content tokens


def split_windows(n_tokens: int, size: int, overlap: int) -> Windows:
    """Cover n_tokens content tokens with windows of `size`, each sharing `overlap` tokens with the one before."""
    if size < 1 or not 0 <= overlap < size:
        raise ValueError(f"need size >= 1 and 0 <= overlap < size, got {size}, {overlap}")
    spans, start = [], 0
    while True:
        end = min(start + size, n_tokens)
        spans.append((start, end))
        if end >= n_tokens:
            break
        start += size - overlap
    return Windows(size, overlap, spans)


def windows_closed_form(n_tokens: int, size: int, overlap: int) -> int:
    """How many windows split_windows makes: 1 if it fits, else 1 + ceil((n - size) / (size - overlap))."""
    return 1 if n_tokens <= size else 1 + math.ceil((n_tokens - size) / (size - overlap))
