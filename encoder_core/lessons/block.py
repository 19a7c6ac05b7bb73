"""The block lesson: one sentence through the embeddings and one whole encoder layer.

Every function returns a small dataclass of tensors and numbers. Functions that read a
shared model run under torch.inference_mode and never change it; the deep-stack study
builds its own throwaway models because it needs a backward pass.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from ..config import EncoderConfig, preset
from ..model import (
    POST_NORM_STAGES,
    PRE_NORM_STAGES,
    EmbeddingParts,
    Encoder,
    EncoderBlock,
    build_encoder,
    sinusoidal_table,
)
from ..tokenizer import WordTokenizer

BERT_INIT_STD = 0.02
BERT_BASE_WIDTH = 768
DEEP_STACK_MAX_TOKENS = 64


def stages_for(norm: str) -> tuple[str, ...]:
    return POST_NORM_STAGES if norm == "post" else PRE_NORM_STAGES


def _as_batch(ids) -> torch.Tensor:
    ids = torch.as_tensor(ids, dtype=torch.long)
    return ids[None] if ids.dim() == 1 else ids


# --- per-token statistics ------------------------------------------------------------


@dataclass
class TokenStats:
    """Per token (row), over its features: mean, standard deviation (population, as LayerNorm uses), L2 norm."""

    mean: torch.Tensor  # (T,)
    std: torch.Tensor  # (T,)
    l2: torch.Tensor  # (T,)


def token_stats(x: torch.Tensor) -> TokenStats:
    """x (T, F): one row per token."""
    mean = x.mean(dim=-1)
    std = ((x - mean[:, None]) ** 2).mean(dim=-1).sqrt()
    l2 = (x * x).sum(dim=-1).sqrt()
    return TokenStats(mean, std, l2)


# --- the walk through embeddings and one block -----------------------------------------


@dataclass
class BlockWalk:
    norm: str
    layer: int
    stages: tuple[str, ...]  # in the order the block computes them
    embeddings: EmbeddingParts  # batch dimension dropped: each (T, D)
    trace: dict[str, torch.Tensor]  # stage -> (T, D), or (T, d_ff) for the FFN's inside
    stats: dict[str, TokenStats]
    block_output: torch.Tensor  # (T, D): what the next layer receives


def walk_block(model: Encoder, ids, segments, layer: int) -> BlockWalk:
    """Run the sentence once and keep the embedding parts and every stage of one layer."""
    cfg = model.config
    if not 0 <= layer < cfg.n_layers:
        raise ValueError(f"layer must be in [0, {cfg.n_layers - 1}], got {layer}")
    ids, segments = _as_batch(ids), _as_batch(segments)
    with torch.inference_mode():
        out = model(ids, segments, return_trace=True)
        parts = model.embeddings.parts(ids, segments)
    parts = EmbeddingParts(
        *(t[0].detach() for t in (parts.token, parts.position, parts.segment, parts.summed, parts.normed))
    )
    trace = {name: t[0].detach() for name, t in out.traces[layer].items()}
    return BlockWalk(
        norm=cfg.norm,
        layer=layer,
        stages=stages_for(cfg.norm),
        embeddings=parts,
        trace=trace,
        stats={name: token_stats(t) for name, t in trace.items()},
        block_output=out.hidden_states[layer + 1][0].detach(),
    )


def mean_norm_per_stage(walk: BlockWalk) -> list[float]:
    """Mean over tokens of each stage's L2 norm, in stage order: the scale of the stream through the block."""
    return [float(walk.stats[s].l2.mean()) for s in walk.stages]


# --- where each stage is computed: EncoderBlock.forward's own source ----------------------


@dataclass
class SourceLines:
    path: str
    first_line: int  # line number in that file
    lines: list[str]


def _branch(norm: str) -> tuple[list[str], int]:
    """The lines of EncoderBlock.forward's post- or pre-norm branch, and the file line of the first."""
    lines, start = inspect.getsourcelines(EncoderBlock.forward)
    head = next(i for i, line in enumerate(lines) if 'self.config.norm == "post"' in line)
    indent = len(lines[head]) - len(lines[head].lstrip())
    other = next(
        i for i in range(head + 1, len(lines)) if lines[i].strip() == "else:" and lines[i].startswith(" " * indent)
    )
    body_end = next(
        (
            i
            for i in range(other + 1, len(lines))
            if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= indent
        ),
        len(lines),
    )
    if norm == "post":
        return lines[head + 1 : other], start + head + 1
    return lines[other + 1 : body_end], start + other + 1


def stage_source(stage: str, norm: str) -> SourceLines:
    """The line(s) of EncoderBlock.forward that compute this stage, read from the running code.

    A stage's lines are its `t["<stage>"] = ...` line and any lines since the previous stage
    (e.g. the attention call that precedes t["attention"]).
    """
    path = inspect.getsourcefile(EncoderBlock) or "encoder_core/model.py"
    if stage == "input":
        lines, start = inspect.getsourcelines(EncoderBlock.forward)
        i = next(i for i, line in enumerate(lines) if '{"input": x}' in line)
        return SourceLines(path, start + i, [lines[i].strip()])
    if stage not in stages_for(norm):
        raise ValueError(f"unknown stage {stage!r}; choose one of {stages_for(norm)}")
    body, first = _branch(norm)
    end = next(i for i, line in enumerate(body) if f't["{stage}"] =' in line)
    begin = end
    while begin > 0 and 't["' not in body[begin - 1].split("=")[0]:
        begin -= 1
    return SourceLines(path, first + begin, [line.strip() for line in body[begin : end + 1]])


# Each stage as a formula (LaTeX). x is the block's input; T tokens, d features.
STAGE_FORMULAS = {
    "post": {
        "input": r"x \in \mathbb{R}^{T \times d}",
        "attention": r"a = \mathrm{MultiHead}(x) = "
        r"\mathrm{concat}_h\!\big(\mathrm{softmax}(Q_h K_h^\top/\sqrt{d_k})\,V_h\big)\,W^O + b^O",
        "residual_1": r"r_1 = x + a",
        "norm_1": r"h = \mathrm{LN}_1(r_1) = \gamma_1 \odot \frac{r_1 - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_1",
        "ffn_hidden": r"u = h\,W_1 + b_1 \in \mathbb{R}^{T \times 4d}",
        "ffn_activated": r"g = \mathrm{GELU}(u) = u\,\Phi(u)",
        "ffn_output": r"f = g\,W_2 + b_2 \in \mathbb{R}^{T \times d}",
        "residual_2": r"r_2 = h + f",
        "norm_2": r"y = \mathrm{LN}_2(r_2) \quad\text{(the block's output)}",
    },
    "pre": {
        "input": r"x \in \mathbb{R}^{T \times d}",
        "norm_1": r"n_1 = \mathrm{LN}_1(x) = \gamma_1 \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_1",
        "attention": r"a = \mathrm{MultiHead}(n_1) = "
        r"\mathrm{concat}_h\!\big(\mathrm{softmax}(Q_h K_h^\top/\sqrt{d_k})\,V_h\big)\,W^O + b^O",
        "residual_1": r"r_1 = x + a",
        "norm_2": r"n_2 = \mathrm{LN}_2(r_1)",
        "ffn_hidden": r"u = n_2\,W_1 + b_1 \in \mathbb{R}^{T \times 4d}",
        "ffn_activated": r"g = \mathrm{GELU}(u) = u\,\Phi(u)",
        "ffn_output": r"f = g\,W_2 + b_2 \in \mathbb{R}^{T \times d}",
        "residual_2": r"y = r_1 + f \quad\text{(the block's output, not normalised)}",
    },
}


# --- GELU next to ReLU -------------------------------------------------------------------


@dataclass
class ActivationCurves:
    x: torch.Tensor
    gelu: torch.Tensor
    relu: torch.Tensor


def activation_curves(lo: float = -4.0, hi: float = 4.0, n: int = 161) -> ActivationCurves:
    x = torch.linspace(lo, hi, n)
    return ActivationCurves(x, F.gelu(x), F.relu(x))


@dataclass
class ActiveUnits:
    """How the two activations treat the same FFN pre-activations u (T x d_ff values)."""

    total: int
    gelu_positive: int
    relu_positive: int
    gelu_negative: int  # GELU lets small negative values through
    relu_zero: int  # ReLU sets every u <= 0 to exactly 0 (and its gradient there is 0)
    gelu_min: float  # GELU's most negative output on this input (never below about -0.17)
    per_token_gelu_positive: list[int]
    per_token_relu_positive: list[int]


def active_units(ffn_hidden: torch.Tensor) -> ActiveUnits:
    """ffn_hidden (T, d_ff): the FFN's pre-activations from a block trace."""
    g, r = F.gelu(ffn_hidden), F.relu(ffn_hidden)
    return ActiveUnits(
        total=ffn_hidden.numel(),
        gelu_positive=int((g > 0).sum()),
        relu_positive=int((r > 0).sum()),
        gelu_negative=int((g < 0).sum()),
        relu_zero=int((r == 0).sum()),
        gelu_min=float(g.min()),
        per_token_gelu_positive=(g > 0).sum(dim=-1).tolist(),
        per_token_relu_positive=(r > 0).sum(dim=-1).tolist(),
    )


# --- positions ----------------------------------------------------------------------------


def cosine_similarity_matrix(table: torch.Tensor) -> torch.Tensor:
    """(P, D) -> (P, P): cos of the angle between every pair of rows."""
    unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return unit @ unit.T


@dataclass
class PositionTables:
    n_positions: int
    sinusoid: torch.Tensor  # (P, D)
    sinusoid_similarity: torch.Tensor  # (P, P)
    learned: torch.Tensor | None  # (P, D): the model's learned table (random before training)
    learned_similarity: torch.Tensor | None  # (P, P)

    def learned_off_diagonal(self) -> torch.Tensor | None:
        """The learned table's similarities between different positions."""
        if self.learned_similarity is None:
            return None
        return self.learned_similarity[~torch.eye(self.n_positions, dtype=torch.bool)]


def position_tables(model: Encoder, n_positions: int) -> PositionTables:
    cfg = model.config
    n_positions = max(1, min(n_positions, cfg.max_positions))
    sinusoid = sinusoidal_table(n_positions, cfg.d_model)
    learned = None
    with torch.inference_mode():
        if cfg.position == "learned":
            learned = model.embeddings.position_embeddings.weight[:n_positions].detach().clone()
    return PositionTables(
        n_positions,
        sinusoid,
        cosine_similarity_matrix(sinusoid),
        learned,
        cosine_similarity_matrix(learned) if learned is not None else None,
    )


@dataclass
class LengthCap:
    max_positions: int
    n_tokens: int  # the long input's length before any cut
    kept: int  # after the tokenizer's truncation
    truncated: int
    refusal: str  # the Encoder's own error message for the uncut input


def length_cap(model: Encoder, tokenizer: WordTokenizer, sentence: str) -> LengthCap:
    """Repeat the sentence past the position table and show both ways a long input is handled."""
    cap = model.config.max_positions
    words = max(1, len(tokenizer.split(sentence)))
    text = " ".join([sentence] * (cap // words + 2))
    full = tokenizer.encode(text)
    cut = tokenizer.encode(text, max_length=cap, truncate=True)
    ids = torch.tensor([full.ids])
    refusal = ""
    try:
        with torch.inference_mode():
            model(ids)
    except ValueError as err:
        refusal = str(err)
    return LengthCap(cap, len(full), len(cut), cut.truncated, refusal)


# --- post-norm vs pre-norm on the same weights ------------------------------------------


@dataclass
class WeightMatch:
    compared: int  # parameter tensors present in both models
    max_abs_diff: float
    only_in_first: list[str] = field(default_factory=list)
    only_in_second: list[str] = field(default_factory=list)


def compare_weights(first: nn.Module, second: nn.Module) -> WeightMatch:
    a, b = dict(first.named_parameters()), dict(second.named_parameters())
    shared = [k for k in a if k in b]
    with torch.no_grad():
        diff = max((float((a[k] - b[k]).abs().max()) for k in shared), default=0.0)
    return WeightMatch(len(shared), diff, [k for k in a if k not in b], [k for k in b if k not in a])


@dataclass
class DeepStackRun:
    norm: str
    residual_norms: list[float]  # mean over tokens of ||x||: embeddings output, then after each block
    grad_norms: list[float]  # per block: ||dL/dtheta|| over all of that block's parameters
    output_norm: float  # mean ||y|| of what the stack hands on (after the final LayerNorm for pre-norm)

    @property
    def growth(self) -> float:
        """How many times larger the stream is after the last block than at the embeddings."""
        return self.residual_norms[-1] / self.residual_norms[0]


@dataclass
class DeepStackStudy:
    depth: int
    n_tokens: int  # tokens of the sentence used
    d_model: int
    init_std: float
    seed: int
    post: DeepStackRun
    pre: DeepStackRun
    weights: WeightMatch  # post vs pre model built from the same seed

    @property
    def grad_spread(self) -> float:
        """Largest over smallest per-block gradient norm, across both stacks."""
        grads = self.post.grad_norms + self.pre.grad_norms
        return max(grads) / min(grads)

    @property
    def loudness(self) -> float:
        """init std x sqrt(d): the typical size of what one freshly initialised sublayer adds."""
        return self.init_std * math.sqrt(self.d_model)


def width_matched_std(d_model: int) -> float:
    """The std that gives a width-d model BERT-base's scale: 0.02 * sqrt(768 / d), so std * sqrt(d) is the same."""
    return BERT_INIT_STD * math.sqrt(BERT_BASE_WIDTH / d_model)


def deep_stack_study(
    ids: list[int],
    segments: list[int],
    depth: int,
    seed: int,
    init_std: float = BERT_INIT_STD,
    max_tokens: int = DEEP_STACK_MAX_TOKENS,
) -> DeepStackStudy:
    """Build a post-norm and a pre-norm stack of `depth` small blocks from one seed (same weights), run the
    sentence through both, and take one backward pass of L = sum(y * R), with R a fixed standard-normal
    tensor drawn from the seed: a random projection of the output, so every output feature gets a gradient.

    Only the first max_tokens tokens are used: the measurement is per token and stays fast for any input.
    """
    runs, models = {}, {}
    ids, segments = list(ids)[:max_tokens], list(segments)[:max_tokens]
    ids_t, seg_t = torch.tensor([ids], dtype=torch.long), torch.tensor([segments], dtype=torch.long)
    with torch.inference_mode(False), torch.enable_grad():
        for norm in ("post", "pre"):
            model = build_encoder(preset("small", n_layers=depth, norm=norm), seed=seed, init_std=init_std)
            out = model(ids_t, seg_t, need_weights=False)
            probe = torch.randn(out.hidden.shape, generator=torch.Generator().manual_seed(seed))
            (out.hidden * probe).sum().backward()
            streams = out.hidden_states[: depth + 1]  # a pre-norm run appends the final norm's output
            with torch.no_grad():
                runs[norm] = DeepStackRun(
                    norm=norm,
                    residual_norms=[float(h[0].norm(dim=-1).mean()) for h in streams],
                    grad_norms=[
                        math.sqrt(sum(float((p.grad**2).sum()) for p in block.parameters()))
                        for block in model.encoder.layer
                    ],
                    output_norm=float(out.hidden[0].norm(dim=-1).mean()),
                )
            models[norm] = model
    return DeepStackStudy(
        depth,
        len(ids),
        models["post"].config.d_model,
        init_std,
        seed,
        runs["post"],
        runs["pre"],
        compare_weights(models["post"], models["pre"]),
    )


# --- parameter count ----------------------------------------------------------------------


@dataclass
class BlockParams:
    d_model: int
    d_ff: int
    attention: int  # counted from the modules: W_Q, W_K, W_V, W_O and their biases
    ffn: int  # W_1, b_1, W_2, b_2
    norms: int  # two LayerNorms: gamma and beta each
    total: int  # param_count of the whole block
    attention_formula: int  # 4 d^2 + 4 d
    ffn_formula: int  # 2 d d_ff + d_ff + d
    norms_formula: int  # 4 d


def block_params(config: EncoderConfig) -> BlockParams:
    """Count a block's parameters from its modules and from the formula. Built on the meta device:
    the module tree and every shape are real, but no memory is allocated for the values."""
    with torch.device("meta"):
        block = EncoderBlock(config)

    def count(*modules: nn.Module) -> int:
        return sum(p.numel() for m in modules for p in m.parameters())

    d, d_ff = config.d_model, config.d_ff
    return BlockParams(
        d_model=d,
        d_ff=d_ff,
        attention=count(block.attention.self, block.attention.output.dense),
        ffn=count(block.intermediate.dense, block.output.dense),
        norms=count(block.attention.output.LayerNorm, block.output.LayerNorm),
        total=count(block),
        attention_formula=4 * d * d + 4 * d,
        ffn_formula=2 * d * d_ff + d_ff + d,
        norms_formula=4 * d,
    )
