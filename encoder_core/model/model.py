"""The encoder: embeddings, a stack of blocks, a pooler.

Parameter names follow Hugging Face's BertModel (embeddings.word_embeddings.weight,
encoder.layer.0.attention.self.query.weight, ...) so a BERT checkpoint loads by name
with strict=True. Shapes: B batch, T positions, D = d_model, H heads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .config import TEACHING_INIT_STD, EncoderConfig, preset
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

    def forward(self, ids: torch.Tensor, segments: torch.Tensor) -> torch.Tensor:
        x = self.word_embeddings(ids) + self.position_vectors(ids.shape[1]) + self.token_type_embeddings(segments)
        return self.dropout(self.LayerNorm(x))


class SelfOutput(nn.Module):
    """No forward: W_O and LayerNorm 1 under BertSelfOutput's names, kept so a BERT checkpoint loads strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_model)
        self.LayerNorm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)


class AttentionSublayer(nn.Module):
    """No forward: a shell named like BertAttention, kept so a BERT checkpoint's names load strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.self = SelfAttention(config)
        self.output = SelfOutput(config)


class Intermediate(nn.Module):
    """No forward: W_1 under BertIntermediate's name, kept so a BERT checkpoint loads strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_model, config.d_ff)


class FFNOutput(nn.Module):
    """No forward: W_2 and LayerNorm 2 under BertOutput's names, kept so a BERT checkpoint loads strictly."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.dense = nn.Linear(config.d_ff, config.d_model)
        self.LayerNorm = nn.LayerNorm(config.d_model, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.dropout)


class EncoderBlock(nn.Module):
    """One layer. Post-norm (BERT): x = LN1(x + Attn(x)); x = LN2(x + FFN(x)).
    Pre-norm: x = x + Attn(LN1(x)); x = x + FFN(LN2(x)).  FFN(x) = W2 act(W1 x + b1) + b2."""

    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.config = config
        self.attention = AttentionSublayer(config)
        self.intermediate = Intermediate(config)
        self.output = FFNOutput(config)
        self.act = F.gelu if config.activation == "gelu" else F.relu

    def forward(
        self,
        x: torch.Tensor,
        *,
        causal: bool = False,
        key_padding_mask: torch.Tensor | None = None,
        need_weights: bool = True,
        return_trace: bool = False,
    ):
        """Returns (output (B,T,D), weights (B,H,T,T) or None, trace dict or None).

        Each `# stage: <name>` comment marks the statements that compute that traced stage, up to the
        next marker or the end of their block; "(post-norm)" / "(pre-norm)" after the name: that placement
        only. The block lesson finds its code lines by these markers, not by the code's layout.
        """
        attn, ffn_in_proj, ffn_out = self.attention, self.intermediate.dense, self.output
        ln1, ln2 = attn.output.LayerNorm, ffn_out.LayerNorm
        post_norm = self.config.norm == "post"
        # stage: input
        t = {"input": x}
        if post_norm:
            # stage: attention (post-norm)
            a, w = attn.self(x, causal=causal, key_padding_mask=key_padding_mask, need_weights=need_weights)
            t["attention"] = attn.output.dropout(attn.output.dense(a))
            # stage: residual_1 (post-norm)
            t["residual_1"] = x + t["attention"]
            # stage: norm_1 (post-norm)
            t["norm_1"] = h = ln1(t["residual_1"])
        else:
            # stage: norm_1 (pre-norm)
            t["norm_1"] = h = ln1(x)
            # stage: attention (pre-norm)
            a, w = attn.self(h, causal=causal, key_padding_mask=key_padding_mask, need_weights=need_weights)
            t["attention"] = attn.output.dropout(attn.output.dense(a))
            # stage: residual_1 (pre-norm)
            t["residual_1"] = r = x + t["attention"]
            # stage: norm_2 (pre-norm)
            t["norm_2"] = h = ln2(r)
        # The FFN is the same for both placements: it reads h, the normalised stream.
        # stage: ffn_hidden
        t["ffn_hidden"] = ffn_in_proj(h)
        # stage: ffn_activated
        t["ffn_activated"] = self.act(t["ffn_hidden"])
        # stage: ffn_output
        t["ffn_output"] = ffn_out.dropout(ffn_out.dense(t["ffn_activated"]))
        if post_norm:
            # stage: residual_2 (post-norm)
            t["residual_2"] = h + t["ffn_output"]
            # stage: norm_2 (post-norm)
            t["norm_2"] = out = ln2(t["residual_2"])
        else:
            # stage: residual_2 (pre-norm)
            t["residual_2"] = out = r + t["ffn_output"]
        return out, w, (t if return_trace else None)


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
    hidden_states: list[torch.Tensor]  # embeddings output, then each layer's output
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

    def forward(
        self,
        ids: torch.Tensor,
        segments: torch.Tensor | None = None,
        key_padding_mask: torch.Tensor | None = None,
        *,
        causal: bool = False,
        need_weights: bool = True,
        return_trace: bool = False,
    ) -> EncoderOutput:
        self.check_inputs(ids, segments, key_padding_mask)
        if segments is None:
            segments = torch.zeros_like(ids)
        x = self.embeddings(ids, segments)  # (B, T, D)
        hidden_states, attentions, traces = [x], [], []
        for block in self.encoder.layer:
            x, w, t = block(
                x,
                causal=causal,
                key_padding_mask=key_padding_mask,
                need_weights=need_weights or return_trace,
                return_trace=return_trace,
            )
            hidden_states.append(x)
            attentions.append(w)
            traces.append(t)
        if self.config.norm == "pre":
            x = self.encoder.final_norm(x)
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
