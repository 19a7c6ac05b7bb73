"""EncoderConfig: one dataclass passed whole to every module, plus named presets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

NORM_PLACEMENTS = ("post", "pre")
POSITION_KINDS = ("learned", "sinusoidal")
ACTIVATIONS = ("gelu", "relu")
# A random model with BERT's init (std 0.02) attends almost uniformly; a larger std gives the
# seeded teaching model sharper, readable attention patterns.
TEACHING_INIT_STD = 0.2
MAX_SEED = 10_000  # the largest seed a control or a link may ask for


@dataclass(frozen=True)
class EncoderConfig:
    vocab_size: int = 30522
    max_positions: int = 512
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int | None = None  # None means 4 x d_model, BERT's ratio
    dropout: float = 0.0
    norm: str = "post"  # BERT's order: x = LN(x + sublayer(x))
    activation: str = "gelu"
    pad_id: int = 0
    position: str = "learned"
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12  # BERT's value

    def __post_init__(self) -> None:
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        for name in ("vocab_size", "max_positions", "d_model", "n_heads", "n_layers", "d_ff", "type_vocab_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"n_heads must divide d_model: {self.d_model} is not a multiple of {self.n_heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if self.norm not in NORM_PLACEMENTS:
            raise ValueError(f"norm must be one of {NORM_PLACEMENTS}, got {self.norm!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {self.activation!r}")
        if self.position not in POSITION_KINDS:
            raise ValueError(f"position must be one of {POSITION_KINDS}, got {self.position!r}")
        if not 0 <= self.pad_id < self.vocab_size:
            raise ValueError(f"pad_id must be a token id in [0, {self.vocab_size}), got {self.pad_id!r}")
        if not self.layer_norm_eps > 0:
            raise ValueError(f"layer_norm_eps must be positive, got {self.layer_norm_eps!r}")

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def with_(self, **changes) -> EncoderConfig:
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)


# Named shapes. "tiny" is the seed lesson's toy (d=12, 3 heads, d_ff=24, vocab 6);
# "small" is what the pages run on; the last two are real published shapes.
PRESETS: dict[str, EncoderConfig] = {
    "tiny": EncoderConfig(vocab_size=6, max_positions=5, d_model=12, n_heads=3, n_layers=2, d_ff=24),
    # BERT's uncased WordPiece vocabulary (encoder_core.model.tokenizer.english_tokenizer): any English sentence fits.
    "small": EncoderConfig(vocab_size=30522, d_model=64, n_heads=4, n_layers=2),
    "minilm": EncoderConfig(vocab_size=30522, d_model=384, n_heads=12, n_layers=6, d_ff=1536),
    "bert-base": EncoderConfig(vocab_size=30522, d_model=768, n_heads=12, n_layers=12, d_ff=3072),
}


def preset(name: str, **overrides) -> EncoderConfig:
    """A named preset, optionally with some fields changed (validated again)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    return PRESETS[name].with_(**overrides)
