"""The five explanations: raw attention, attention rollout, norm-based attention, gradient x input and
integrated gradients, each a score per token for the answer at the [MASK]."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ...model.hooks import run_with_cache
from ...model.output_heads import MaskedLanguageModel
from .cloze import Cloze
from .forward import answer_log_probs, stream, word_vectors

BASELINES = ("[PAD]", "[MASK]", "zeros")  # what integrated gradients starts from
DEFAULT_STEPS = 64
METHODS = {
    "raw": "raw attention",
    "rollout": "attention rollout",
    "norm": "norm-based ‖α·f(x)‖",
    "grad_input": "gradient × input",
    "integrated": "integrated gradients",
}


def attention_rollout(attentions: torch.Tensor) -> torch.Tensor:
    """Abnar & Zuidema (2020): per layer the heads' mean A, with the residual as 0.5·A + 0.5·I, each row
    renormalised, multiplied from the first layer up. attentions (L, H, T, T) -> (T, T)."""
    T = attentions.shape[-1]
    rollout = torch.eye(T, dtype=torch.float64)
    for layer in attentions.double():
        a = 0.5 * layer.mean(0) + 0.5 * torch.eye(T, dtype=torch.float64)
        rollout = (a / a.sum(-1, keepdim=True)) @ rollout
    return rollout


def norm_based(model: MaskedLanguageModel, x: torch.Tensor, weights: torch.Tensor, query: int) -> torch.Tensor:
    """Kobayashi et al. (2020): ‖Σ_h α_h(q, j) f_h(x_j)‖ for every key j of the last layer, where
    f_h(x) = (x W_V^h + b_V^h) W_O^h is what head h would add from x_j at weight 1.
    x (T, D): what the layer's attention reads (hook point attn.in); weights (H, T, T): its attention.  -> (T,)."""
    block = model.bert.encoder.layer[-1]
    cfg = block.config
    H, dh = cfg.n_heads, cfg.d_head
    v = block.attention.self.value(x).view(-1, H, dh).transpose(0, 1)  # (H, T, dh)
    w_o = block.attention.output.dense.weight.view(cfg.d_model, H, dh).permute(1, 2, 0)  # (H, dh, D)
    f = v @ w_o  # (H, T, D)
    weighted = (weights[:, query, :, None] * f).sum(0)  # (T, D)
    return weighted.norm(dim=-1).double()


@dataclass
class Attributions:
    scores: torch.Tensor  # (T,): each position's attribution to f
    total: float  # their sum over the positions that moved
    gap: float  # f(x) − f(baseline): what completeness says the sum should be
    baseline: str
    steps: int

    @property
    def completeness_error(self) -> float:
        """|sum − gap| relative to |gap| (a sum of 0 for a gap of 0 is exact)."""
        return abs(self.total - self.gap) / abs(self.gap) if self.gap else abs(self.total)


def baseline_vectors(model: MaskedLanguageModel, tokenizer, baseline: str, like: torch.Tensor) -> torch.Tensor:
    """The word vector integrated gradients starts from at every moving position, shaped like `like` (T, D)."""
    table = model.bert.embeddings.word_embeddings.weight
    if baseline == "zeros":
        return torch.zeros_like(like)
    if baseline == "[PAD]":
        return table[tokenizer.pad_id].detach().expand_as(like)
    if baseline == "[MASK]":
        return table[tokenizer.mask_id].detach().expand_as(like)
    raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")


def _answer_and_grad(model, ids, words, position, answer) -> tuple[torch.Tensor, torch.Tensor]:
    """f for each row, and df/dwords, with gradients for the input only."""
    with torch.enable_grad():
        words = words.detach().requires_grad_(True)
        states, _ = stream(model, ids, words=words)
        f = answer_log_probs(model, states[-1], position)[:, answer]
        (grad,) = torch.autograd.grad(f.sum(), words)
    return f.detach(), grad


def gradient_x_input(model: MaskedLanguageModel, cloze: Cloze, answer: int) -> torch.Tensor:
    """Σ_d x_d ∂f/∂x_d for every position's word vector x.  -> (T,)."""
    ids = torch.tensor([cloze.ids])
    x = word_vectors(model, ids).detach()
    _, grad = _answer_and_grad(model, ids, x, cloze.position, answer)
    return (x * grad).sum(-1)[0].double()


def integrated_gradients(
    model: MaskedLanguageModel, tokenizer, cloze: Cloze, answer: int, baseline: str = "[PAD]", steps: int = 64
) -> Attributions:
    """Sundararajan et al. (2017): (x − x')·mean over the path of ∂f/∂x, the path x' + α(x − x') sampled at the
    midpoints α = (k + ½)/steps, all steps in one batch. Every position but the [MASK] moves from the baseline
    (the [MASK] is the question, kept as asked). Completeness: the attributions sum to f(x) − f(x')."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    ids = torch.tensor([cloze.ids])
    x = word_vectors(model, ids).detach()[0]  # (T, D)
    start = baseline_vectors(model, tokenizer, baseline, x).clone()
    start[cloze.position] = x[cloze.position]
    alphas = (torch.arange(steps, dtype=x.dtype) + 0.5) / steps
    path = start + alphas[:, None, None] * (x - start)  # (steps, T, D)
    grads = torch.zeros_like(x)
    for chunk in torch.split(torch.arange(steps), 32):  # bounded memory on long sentences
        _, g = _answer_and_grad(model, ids.expand(len(chunk), -1), path[chunk], cloze.position, answer)
        grads += g.sum(0)
    scores = ((x - start) * grads / steps).sum(-1).double()
    ends, _ = _answer_and_grad(model, ids.expand(2, -1), torch.stack([x, start]), cloze.position, answer)
    return Attributions(scores, float(scores.sum()), float(ends[0] - ends[1]), baseline, steps)


@dataclass
class Explanations:
    raw: torch.Tensor  # (T,): last layer's attention from the [MASK], mean of heads
    rollout: torch.Tensor  # (T,): the rollout's [MASK] row
    norm: torch.Tensor  # (T,): norm-based, last layer, from the [MASK]
    grad_input: torch.Tensor  # (T,)
    integrated: Attributions

    def by_method(self) -> dict[str, torch.Tensor]:
        """Every explanation's scores under its METHODS key."""
        return {
            "raw": self.raw,
            "rollout": self.rollout,
            "norm": self.norm,
            "grad_input": self.grad_input,
            "integrated": self.integrated.scores,
        }


def explanations(
    model: MaskedLanguageModel, tokenizer, cloze: Cloze, answer: int, baseline: str = "[PAD]", steps: int = 64
) -> Explanations:
    last = f"blocks.{model.config.n_layers - 1}.attn.in"  # what the last layer's attention reads
    with torch.inference_mode():
        out, cache = run_with_cache(model.bert, torch.tensor([cloze.ids]), names=[last])
        stacked = torch.stack([a[0] for a in out.attentions])  # (L, H, T, T)
        q = cloze.position
        raw = stacked[-1, :, q].mean(0).double()
        rollout = attention_rollout(stacked)[q]
        norm = norm_based(model, cache[last][0], stacked[-1], q)
    grad_input = gradient_x_input(model, cloze, answer)
    integrated = integrated_gradients(model, tokenizer, cloze, answer, baseline, steps)
    return Explanations(raw, rollout, norm, grad_input, integrated)
