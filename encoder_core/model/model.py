"""The encoder: embeddings, a stack of blocks, a pooler.

Parameter names follow Hugging Face's BertModel (embeddings.word_embeddings.weight,
encoder.layer.0.attention.self.query.weight, ...) so a BERT checkpoint loads by name
with strict=True. Shapes: B batch, T positions, D = d_model, H heads, d_head = D / H.

Hook points (encoder_core/model/hooks.py): one forward pass hands each of these to its hook by name, to be
read (run_with_cache) or replaced (run_with_hooks); hook_names(config) lists them. The trace stage is the
same tensor's name in a block's trace (EncoderBlock.forward(return_trace=True)), post-norm / pre-norm.

name            shape              post-norm (BERT)             pre-norm                     trace stage
embed.token     (B, T, D)          the token embeddings alone, before position, segment and LayerNorm
embed           (B, T, D)          the embeddings' output, after LayerNorm: hidden_states[0]
  per block, named blocks.{i}.<name>:
resid_pre       (B, T, D)          x, the stream entering the block: hidden_states[i]        input
attn.in         (B, T, D)          x                            LN1(x)                       - / norm_1
attn.scores     (B, H, T, T)       q k^T / sqrt(d_head), before the mask
attn.pattern    (B, H, T, T)       softmax(scores + mask): query rows, key columns           (the weights)
attn.head_out   (B, H, T, d_head)  pattern @ v, each head's output, after head_mask, before W_O
attn.out        (B, T, D)          W_O (heads side by side) + b_O: what attention adds       attention
resid_mid       (B, T, D)          LN1(x + attn.out)            x + attn.out                 norm_1 / residual_1
ffn.in          (B, T, D)          resid_mid                    LN2(resid_mid)               - / norm_2
ffn.hidden      (B, T, d_ff)       W_1 ffn.in + b_1, before the activation                   ffn_hidden
ffn.activated   (B, T, d_ff)       GELU (or ReLU) of ffn.hidden                              ffn_activated
ffn.out         (B, T, D)          W_2 ffn.activated + b_2: what the FFN adds                ffn_output
resid_post      (B, T, D)          LN2(resid_mid + ffn.out)     resid_mid + ffn.out          norm_2 / residual_2
  after the last block:
final_norm      (B, T, D)          (no such point)              the final LayerNorm of the last resid_post

resid_post of block i is resid_pre of block i + 1. Replacing attn.in or ffn.in changes only what that sublayer
reads, not the stream its residual adds to. In post-norm the stream after the first residual sum, x + attn.out,
and after the second have no hook of their own: their LayerNorms, resid_mid and resid_post, are what flows on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .config import TEACHING_INIT_STD, EncoderConfig, preset
from .hooks import NO_HOOK, Hook
from .self_attention import SelfAttention

# The stages a block's trace records, in the order they are computed.
POST_NORM_STAGES = (
    "input",
    "attention",
    "residual_1",
    "norm_1",
    "ffn_hidden",
    "ffn_activated",
    "ffn_output",
    "residual_2",
    "norm_2",
)
PRE_NORM_STAGES = (
    "input",
    "norm_1",
    "attention",
    "residual_1",
    "norm_2",
    "ffn_hidden",
    "ffn_activated",
    "ffn_output",
    "residual_2",
)
Stages = tuple[torch.Tensor, ...]  # one tensor per stage, in the placement's order


def stages_for(norm: str) -> tuple[str, ...]:
    return POST_NORM_STAGES if norm == "post" else PRE_NORM_STAGES


def sinusoidal_table(n_positions: int, d_model: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same angle).  (n_positions, d_model)."""
    pos = torch.arange(n_positions, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float32) / d_model)
    table = torch.zeros(n_positions, d_model)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)[:, : d_model // 2]
    return table


@dataclass
class EmbeddingParts:
    token: torch.Tensor  # (B, T, D)
    position: torch.Tensor  # (1, T, D)
    segment: torch.Tensor  # (B, T, D)
    summed: torch.Tensor  # (B, T, D)
    normed: torch.Tensor  # (B, T, D), after LayerNorm (dropout follows in training)


class Embeddings(nn.Module):
    """token + position + segment, summed, then LayerNorm and dropout (BERT's order)."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        d = config.d_model
        self.word_embeddings = nn.Embedding(config.vocab_size, d, padding_idx=config.pad_id)
        if config.position == "learned":
            self.position_embeddings = nn.Embedding(config.max_positions, d)
        else:
            self.register_buffer("sinusoid", sinusoidal_table(config.max_positions, d), persistent=False)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, d)
        self.LayerNorm = nn.LayerNorm(d, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)

    def position_vectors(self, T: int) -> torch.Tensor:
        if self.config.position == "learned":
            return self.position_embeddings.weight[:T][None]
        return self.sinusoid[:T][None]

    def parts(self, ids: torch.Tensor, segments: torch.Tensor) -> EmbeddingParts:
        token = self.word_embeddings(ids)
        position = self.position_vectors(ids.shape[1])
        segment = self.token_type_embeddings(segments)
        summed = token + position + segment
        return EmbeddingParts(token, position, segment, summed, self.LayerNorm(summed))

    def forward(self, ids: torch.Tensor, segments: torch.Tensor, hook: Hook = NO_HOOK) -> torch.Tensor:
        words = hook("embed.token", self.word_embeddings(ids))
        x = words + self.position_vectors(ids.shape[1]) + self.token_type_embeddings(segments)
        return hook("embed", self.dropout(self.LayerNorm(x)))


class SublayerOutput(nn.Module):
    """No forward: a sublayer's output projection, its dropout and the LayerNorm named with it, kept under
    BertSelfOutput's and BertOutput's names so a BERT checkpoint loads strictly.

    After attention: W_O (d_in = d_model) and LayerNorm 1. After the FFN: W_2 (d_in = d_ff) and LayerNorm 2.
    """

    def __init__(self, config: EncoderConfig, d_in: int):
        super().__init__()
        self.dense = nn.Linear(d_in, config.d_model)
        self.LayerNorm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)


class AttentionSublayer(nn.Module):
    """No forward: a shell named like BertAttention, kept so a BERT checkpoint's names load strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.self = SelfAttention(config)
        self.output = SublayerOutput(config, config.d_model)


class Intermediate(nn.Module):
    """No forward: W_1 under BertIntermediate's name, kept so a BERT checkpoint loads strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_ff)


class EncoderBlock(nn.Module):
    """One layer. Post-norm (BERT): x = LN1(x + Attn(x)); x = LN2(x + FFN(x)).
    Pre-norm: x = x + Attn(LN1(x)); x = x + FFN(LN2(x)).  FFN(x) = W2 act(W1 x + b1) + b2.

    Each traced stage is computed by one small method, the same code for both placements; _post_norm and
    _pre_norm say in which order the stages run and what each one reads. The block lesson shows a stage by
    reading its method's source (see stage_function). hook(name, tensor) lets a caller read or replace a
    stage by its hook name (the table in this module's docstring); by default it hands the tensor back.
    """

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.attention = AttentionSublayer(config)
        self.intermediate = Intermediate(config)
        self.output = SublayerOutput(config, config.d_ff)
        self.act = F.gelu if config.activation == "gelu" else F.relu

    def forward(self, x: torch.Tensor, *, return_trace: bool = False, hook: Hook = NO_HOOK, **attend):
        """x (B, T, D) -> (output (B, T, D), weights (B, H, T, T) or None, trace or None).

        attend: SelfAttention.forward's keywords (causal, key_padding_mask, need_weights, head_mask), handed on
        unchanged. The trace maps each stage's name to its tensor, in the order computed (POST_NORM_STAGES or
        PRE_NORM_STAGES). hook: this block's hook points, named without "blocks.{i}.".
        """
        x = hook("resid_pre", x)
        placement = self._post_norm if self.config.norm == "post" else self._pre_norm
        stages, weights = placement(x, attend, hook)
        trace = dict(zip(stages_for(self.config.norm), stages, strict=True)) if return_trace else None
        return stages[-1], weights, trace

    # ---- the two placements: which stage reads what; each returns every stage, in POST_/PRE_NORM_STAGES order ----

    def _post_norm(self, x: torch.Tensor, attend: dict, hook: Hook = NO_HOOK) -> tuple[Stages, torch.Tensor | None]:
        """BERT's order, from the input x: a LayerNorm after each residual sum, so the block's output is normalised."""
        attention, weights = self._attention(hook("attn.in", x), hook, **attend)
        residual_1 = self._residual_1(x, attention)
        norm_1 = hook("resid_mid", self._norm_1(residual_1))
        ffn_hidden, ffn_activated, ffn_output = self._ffn(hook("ffn.in", norm_1), hook)
        residual_2 = self._residual_2(norm_1, ffn_output)
        norm_2 = hook("resid_post", self._norm_2(residual_2))
        return (x, attention, residual_1, norm_1, ffn_hidden, ffn_activated, ffn_output, residual_2, norm_2), weights

    def _pre_norm(self, x: torch.Tensor, attend: dict, hook: Hook = NO_HOOK) -> tuple[Stages, torch.Tensor | None]:
        """Pre-norm, from the input x: each sublayer reads a normalised copy; the stream itself is never normalised."""
        norm_1 = hook("attn.in", self._norm_1(x))
        attention, weights = self._attention(norm_1, hook, **attend)
        residual_1 = hook("resid_mid", self._residual_1(x, attention))
        norm_2 = hook("ffn.in", self._norm_2(residual_1))
        ffn_hidden, ffn_activated, ffn_output = self._ffn(norm_2, hook)
        residual_2 = hook("resid_post", self._residual_2(residual_1, ffn_output))
        return (x, norm_1, attention, residual_1, norm_2, ffn_hidden, ffn_activated, ffn_output, residual_2), weights

    def _ffn(self, h: torch.Tensor, hook: Hook = NO_HOOK) -> Stages:
        """The FFN's three stages, the same for both placements: h is the normalised stream."""
        ffn_hidden = hook("ffn.hidden", self._ffn_hidden(h))
        ffn_activated = hook("ffn.activated", self._ffn_activated(ffn_hidden))
        return ffn_hidden, ffn_activated, hook("ffn.out", self._ffn_output(ffn_activated))

    # ---- one method per stage ----

    def _attention(self, h: torch.Tensor, hook: Hook = NO_HOOK, **attend) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Multi-head self-attention over h (post-norm: the input x; pre-norm: norm_1), then W_O."""
        heads, weights = self.attention.self(h, hook=hook, **attend)  # (B, T, D): the heads side by side
        out = self.attention.output
        return hook("attn.out", out.dropout(out.dense(heads))), weights  # (B, T, D), (B, H, T, T) or None

    def _residual_1(self, x: torch.Tensor, attention: torch.Tensor) -> torch.Tensor:
        """The skip connection around attention: the block's input plus what attention adds."""
        return x + attention  # (B, T, D)

    def _norm_1(self, stream: torch.Tensor) -> torch.Tensor:
        """LayerNorm 1, over each token's features (post-norm: of residual_1; pre-norm: of the input x)."""
        return self.attention.output.LayerNorm(stream)  # (B, T, D)

    def _ffn_hidden(self, h: torch.Tensor) -> torch.Tensor:
        """W_1: each token on its own, widened from d_model to d_ff."""
        return self.intermediate.dense(h)  # (B, T, d_ff)

    def _ffn_activated(self, u: torch.Tensor) -> torch.Tensor:
        """The activation, GELU (BERT) or ReLU, value by value."""
        return self.act(u)  # (B, T, d_ff)

    def _ffn_output(self, g: torch.Tensor) -> torch.Tensor:
        """W_2: back from d_ff to d_model."""
        out = self.output
        return out.dropout(out.dense(g))  # (B, T, D)

    def _residual_2(self, stream: torch.Tensor, ffn_output: torch.Tensor) -> torch.Tensor:
        """The skip connection around the FFN (post-norm: to norm_1, what the FFN read; pre-norm: to residual_1)."""
        return stream + ffn_output  # (B, T, D)

    def _norm_2(self, stream: torch.Tensor) -> torch.Tensor:
        """LayerNorm 2 (post-norm: of residual_2, the block's output; pre-norm: of residual_1, what the FFN reads)."""
        return self.output.LayerNorm(stream)  # (B, T, D)


# The method that computes each stage after the input, the same code for both placements. The "input" stage's
# code is the placement's own method: where x comes in and the order every other stage runs in.
STAGE_METHODS = {
    "attention": EncoderBlock._attention,
    "residual_1": EncoderBlock._residual_1,
    "norm_1": EncoderBlock._norm_1,
    "ffn_hidden": EncoderBlock._ffn_hidden,
    "ffn_activated": EncoderBlock._ffn_activated,
    "ffn_output": EncoderBlock._ffn_output,
    "residual_2": EncoderBlock._residual_2,
    "norm_2": EncoderBlock._norm_2,
}
PLACEMENT_METHODS = {"post": EncoderBlock._post_norm, "pre": EncoderBlock._pre_norm}


def stage_function(stage: str, norm: str) -> Callable:
    """The function that computes this stage of a block with this placement (for "input", the placement's
    method). Unbound: call it with the block first, e.g. stage_function("norm_1", "post")(block, residual_1)."""
    if stage not in stages_for(norm):
        raise ValueError(f"unknown stage {stage!r}; choose one of {stages_for(norm)}")
    return PLACEMENT_METHODS[norm] if stage == "input" else STAGE_METHODS[stage]


class BlockStack(nn.Module):
    """No forward (Encoder runs the blocks): named like BertEncoder so a BERT checkpoint loads strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.layer = nn.ModuleList(EncoderBlock(config) for _ in range(config.n_layers))
        # A pre-norm stack ends on a residual sum whose scale grows with depth: it needs
        # one last LayerNorm. A post-norm stack already ends every block on a LayerNorm.
        if config.norm == "pre":
            self.final_norm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)


class Pooler(nn.Module):
    """BERT's pooler: tanh(W h_[CLS] + b)."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_model)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))


@dataclass
class EncoderOutput:
    hidden: torch.Tensor  # (B, T, D), the last layer
    hidden_states: list[torch.Tensor]  # embeddings output (or resid), each layer run's output, then final_norm (pre)
    attentions: list[torch.Tensor] | None  # one (B, H, T, T) per layer
    traces: list[dict[str, torch.Tensor]] | None  # one per layer, see POST_NORM_STAGES / PRE_NORM_STAGES


class Encoder(nn.Module):
    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.embeddings = Embeddings(config)
        self.encoder = BlockStack(config)
        self.pooler = Pooler(config)

    def check_inputs(self, ids, segments, key_padding_mask):
        """Refuse bad input here, with a message, rather than deep inside an index op."""
        cfg = self.config
        if not isinstance(ids, torch.Tensor) or ids.dtype != torch.long:
            raise ValueError("ids must be a torch.long tensor of shape (B, T)")
        if ids.dim() != 2:
            raise ValueError(f"ids must have shape (B, T), got {tuple(ids.shape)}")
        B, T = ids.shape
        if B == 0 or T == 0:
            raise ValueError(f"empty input: ids has shape {tuple(ids.shape)}")
        if T > cfg.max_positions:
            raise ValueError(
                f"sequence of {T} tokens is longer than max_positions={cfg.max_positions}; truncate it first"
            )
        lo, hi = int(ids.min()), int(ids.max())
        if lo < 0 or hi >= cfg.vocab_size:
            raise ValueError(f"token ids must be in [0, {cfg.vocab_size}), got values in [{lo}, {hi}]")
        if segments is not None:
            if segments.shape != ids.shape:
                raise ValueError(f"segments shape {tuple(segments.shape)} does not match ids {tuple(ids.shape)}")
            if int(segments.min()) < 0 or int(segments.max()) >= cfg.type_vocab_size:
                raise ValueError(f"segment ids must be in [0, {cfg.type_vocab_size})")
        if key_padding_mask is not None:
            if key_padding_mask.shape != ids.shape:
                raise ValueError(
                    f"key_padding_mask shape {tuple(key_padding_mask.shape)} does not match ids {tuple(ids.shape)}"
                )
            if key_padding_mask.dtype != torch.bool:
                raise ValueError("key_padding_mask must be a bool tensor (True = ignore that key)")
            if bool(key_padding_mask.all(dim=1).any()):
                raise ValueError("a sequence in the batch has no real token (every key is masked)")

    def check_interventions(self, ids, key_mask, head_mask, start_at, resid):
        """Refuse an intervention that does not fit this model and input, with a message."""
        cfg = self.config
        if key_mask is not None and (key_mask.shape != ids.shape or key_mask.dtype != torch.bool):
            raise ValueError(f"key_mask must be a bool tensor shaped like ids {tuple(ids.shape)} (True = hide a key)")
        if head_mask is not None and tuple(head_mask.shape[-2:]) != (cfg.n_layers, cfg.n_heads):
            raise ValueError(f"head_mask must be (L, H) or (B, L, H) = (..., {cfg.n_layers}, {cfg.n_heads})")
        if not 0 <= start_at <= cfg.n_layers:
            raise ValueError(f"start_at must be in [0, {cfg.n_layers}], got {start_at}")
        if start_at and resid is None:
            raise ValueError("start_at needs resid: the stream entering that layer (hidden_states[start_at])")
        if resid is not None and tuple(resid.shape) != (*ids.shape, cfg.d_model):
            raise ValueError(f"resid must be (B, T, D) = {(*ids.shape, cfg.d_model)}, got {tuple(resid.shape)}")

    def forward(
        self,
        ids: torch.Tensor,
        segments: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
        *,
        causal: bool = False,
        need_weights: bool = True,
        return_trace: bool = False,
        hooks: Hook = NO_HOOK,
        head_mask: torch.Tensor | None = None,
        key_mask: torch.Tensor | None = None,
        start_at: int = 0,
        resid: torch.Tensor | None = None,
    ) -> EncoderOutput:
        """ids (B, T) -> EncoderOutput. hidden_states holds the stream entering the first layer run, then each
        layer's output, then (pre-norm) the final LayerNorm's: L + 1 tensors post-norm, L + 2 pre-norm.

        The interventions, none by default:
        hooks: reads or replaces intermediates by name (HookPoints; see run_with_cache, run_with_hooks).
        head_mask (L, H) or (B, L, H): scales each head's output before W_O (0 knocks it out), as transformers'.
        key_mask (B, T) bool: True hides that token as a key from every query of every layer, on top of
            key_padding_mask (the one rule is self_attention.additive_mask).
        start_at, resid: run layers start_at.. only, from resid (B, T, D), the stream entering layer start_at
            (another run's hidden_states[start_at]); the embeddings are not run when resid is given.
        """
        self.check_inputs(ids, segments, key_padding_mask)
        self.check_interventions(ids, key_mask, head_mask, start_at, resid)
        if key_mask is not None:
            key_padding_mask = key_mask if key_padding_mask is None else key_padding_mask | key_mask
            if bool(key_padding_mask.all(dim=1).any()):  # a query must still have a key to read
                raise ValueError("key_mask hides every key of a sequence in the batch")
        if segments is None:
            segments = torch.zeros_like(ids)
        x = self.embeddings(ids, segments, hooks) if resid is None else resid  # (B, T, D)
        hidden_states, attentions, traces = [x], [], []
        for i in range(start_at, self.config.n_layers):
            x, w, t = self.encoder.layer[i](
                x,
                causal=causal,
                key_padding_mask=key_padding_mask,
                need_weights=need_weights or return_trace,
                return_trace=return_trace,
                head_mask=None if head_mask is None else head_mask[..., i, :],
                hook=hooks.within(f"blocks.{i}."),
            )
            hidden_states.append(x)
            attentions.append(w)
            traces.append(t)
        if self.config.norm == "pre":
            x = hooks("final_norm", self.encoder.final_norm(x))
            hidden_states.append(x)
        return EncoderOutput(x, hidden_states, attentions if need_weights else None, traces if return_trace else None)


def build_encoder(config: EncoderConfig, seed: int = 0, init_std: float = 0.02) -> Encoder:
    """A freshly initialised encoder in eval mode, the same weights for the same seed on every run.

    init_std 0.02 is BERT's; a larger value gives a random model sharper, easier to read attention.
    """
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = Encoder(config)
        init_bert_weights(model, std=init_std)
    finally:
        torch.random.set_rng_state(generator_state)
    return model.eval()


def teaching_model(seed: int = 0, norm: str = "post") -> Encoder:
    """The seeded small model every lesson runs on (preset "small", init std TEACHING_INIT_STD)."""
    return build_encoder(preset("small", norm=norm), seed=seed, init_std=TEACHING_INIT_STD)


def init_bert_weights(model: nn.Module, std: float = 0.02) -> None:
    """BERT's initialisation: normal(0, 0.02) weights, zero biases, LayerNorm at (1, 0), pad row 0."""
    for m in model.modules():
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=std)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=std)
            if m.padding_idx is not None:
                with torch.no_grad():
                    m.weight[m.padding_idx].zero_()
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


def param_count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
