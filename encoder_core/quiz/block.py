"""Questions for the block lesson: post-norm vs pre-norm order, shapes, parameter counts, LayerNorm."""

from __future__ import annotations

import functools
import random

import torch

from ..config import TEACHING_INIT_STD, EncoderConfig
from ..model import EncoderBlock, build_encoder, param_count
from .base import Question, generator, options

STAGE_NAMES = {
    "input": "the block's input x",
    "attention": "self-attention (with its output projection W_O)",
    "residual_1": "the first residual sum (adding the attention output to what came in)",
    "norm_1": "the first LayerNorm",
    "ffn_hidden": "the FFN's first linear layer (d → 4d)",
    "ffn_activated": "the GELU activation",
    "ffn_output": "the FFN's second linear layer (4d → d)",
    "residual_2": "the second residual sum",
    "norm_2": "the second LayerNorm",
}
SIZES_BUILT = (16, 32, 48, 64, 96, 128, 192, 256)  # cheap to build and count directly
SIZES_FORMULA = (384, 512, 768, 1024)  # MiniLM, BERT-base...: counted with the formula (tested against a build)


def block_config(d: int, norm: str = "post", n_heads: int = 4) -> EncoderConfig:
    return EncoderConfig(vocab_size=8, max_positions=16, d_model=d, n_heads=n_heads, n_layers=1, norm=norm)


@functools.lru_cache(maxsize=16)
def built_block(d: int, norm: str = "post") -> EncoderBlock:
    """A block with fixed weights (seed 0), built without touching the caller's global random stream."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        return EncoderBlock(block_config(d, norm)).eval()


def block_param_formula(d: int, d_ff: int) -> dict[str, int]:
    """Parameters of one block, by part: weights + biases of every linear layer, scale + shift of each LayerNorm."""
    return {
        "W_Q, W_K, W_V, W_O": 4 * (d * d + d),
        "FFN first layer": d * d_ff + d_ff,
        "FFN second layer": d_ff * d + d,
        "two LayerNorms": 2 * 2 * d,
    }


def trace_order(norm: str, g: torch.Generator) -> list[str]:
    """The stages in the order a block of that kind records them while it runs."""
    x = torch.randn(1, 3, 16, generator=g)
    with torch.inference_mode():
        _, _, trace = built_block(16, norm)(x, return_trace=True)
    return list(trace)


@generator("block")
def block_param_count(r: random.Random, g: torch.Generator) -> Question:
    d = r.choice(SIZES_BUILT + SIZES_FORMULA)
    parts = block_param_formula(d, 4 * d)
    total = param_count(built_block(d)) if d in SIZES_BUILT else sum(parts.values())
    return Question(
        kind="numeric",
        prompt=(
            f"How many trainable parameters does one BERT-style encoder block have for d = {d}? It has W_Q, W_K, "
            f"W_V and W_O (each d × d with a bias), an FFN of width 4d = {4 * d} (two linear layers with biases) "
            "and two LayerNorms (a scale and a shift each). A whole number; commas are fine."
        ),
        answer=float(total),
        explanation=(
            "; ".join(f"{name}: {n:,}" for name, n in parts.items())
            + f". Total {total:,} = 12d² + 13d"
            + (" (counted on a built block)." if d in SIZES_BUILT else ".")
            + " The number of heads does not appear: heads split d, they do not add weights."
        ),
        inputs={"d": d},
    )


@generator("block")
def block_next_stage(r: random.Random, g: torch.Generator) -> Question:
    norm = r.choice(["post", "pre"])
    order, other = trace_order(norm, g), trace_order("pre" if norm == "post" else "post", g)
    stage = r.choice(order[:-1])
    after = order[order.index(stage) + 1]
    wrong = []
    if stage in other[:-1]:
        wrong.append(other[other.index(stage) + 1])  # the other placement's next step: the classic mix-up
    if order.index(stage) > 0:
        wrong.append(order[order.index(stage) - 1])
    wrong += r.sample([s for s in order if s not in (stage, after)], 4)
    correct = STAGE_NAMES[after]
    name = "post-norm (BERT's order)" if norm == "post" else "pre-norm"
    return Question(
        kind="choice",
        prompt=f"In a {name} encoder block, what is computed right after {STAGE_NAMES[stage]}?",
        answer=correct,
        choices=options(r, correct, [STAGE_NAMES[s] for s in wrong if s != after], n=4),
        explanation=(
            f"A running {norm}-norm block records its steps in this order: {' → '.join(order)}. "
            + (
                "Post-norm: x ← LayerNorm(x + Attention(x)), then x ← LayerNorm(x + FFN(x)); every block ends on a "
                "LayerNorm."
                if norm == "post"
                else "Pre-norm: x ← x + Attention(LayerNorm(x)), then x ← x + FFN(LayerNorm(x)); the residual path "
                "itself is never normalised."
            )
        ),
        inputs={"norm": norm, "stage": stage},
    )


@generator("block")
def block_formula(r: random.Random, g: torch.Generator) -> Question:
    norm = r.choice(["post", "pre"])
    sub = r.choice(["Attention", "FFN"])
    order = trace_order(norm, g)
    first = "attention" if sub == "Attention" else "ffn_hidden"
    residual, ln = ("residual_1", "norm_1") if sub == "Attention" else ("residual_2", "norm_2")
    formulas = {
        "post": f"x ← LayerNorm(x + {sub}(x))",
        "pre": f"x ← x + {sub}(LayerNorm(x))",
        "no residual": f"x ← LayerNorm({sub}(x))",
        "norm after": f"x ← x + LayerNorm({sub}(x))",
    }
    # Read the placement off the recorded order: LayerNorm after the residual sum is post-norm.
    found = "post" if order.index(ln) > order.index(residual) else "pre"
    if found == "pre" and order.index(ln) > order.index(first):
        raise AssertionError("pre-norm must normalise before the sublayer")
    correct = formulas[found]
    name = "post-norm block (BERT, PyTorch's default norm_first=False)" if norm == "post" else "pre-norm block"
    return Question(
        kind="choice",
        prompt=f"Which line is the {sub} step of a {name}?",
        answer=correct,
        choices=options(r, correct, [f for k, f in formulas.items() if k != found]),
        explanation=(
            f"The block's recorded order is {' → '.join(order)}: the LayerNorm comes "
            + ("after the residual sum, so it normalises x + sublayer(x)." if found == "post" else "")
            + ("before the sublayer, and the sum x + sublayer(LN(x)) is left as it is." if found == "pre" else "")
            + " Both keep the residual: dropping it is what makes deep stacks hard to train."
        ),
        inputs={"norm": norm, "sublayer": sub},
    )


@functools.lru_cache(maxsize=32)
def stack(norm: str, n_layers: int, seed: int):
    config = EncoderConfig(vocab_size=32, max_positions=16, d_model=32, n_heads=4, n_layers=n_layers, norm=norm)
    return build_encoder(config, seed=seed, init_std=TEACHING_INIT_STD)


@generator("block")
def block_final_norm(r: random.Random, g: torch.Generator) -> Question:
    n_layers = r.randint(3, 6)
    seed = r.randint(0, 3)
    stacks = {norm: stack(norm, n_layers, seed) for norm in ("post", "pre")}
    has_final = {norm: hasattr(m.encoder, "final_norm") for norm, m in stacks.items()}
    ids = torch.randint(0, 32, (1, 10), generator=g)
    with torch.inference_mode():
        states = stacks["pre"](ids).hidden_states
    before, after = float(states[-2].std(dim=-1).mean()), float(states[-1].std(dim=-1).mean())
    statements = {
        (False, True): "Pre-norm: its blocks end on a residual sum, which nothing has normalised.",
        (True, False): "Post-norm: its blocks end on a residual sum, which nothing has normalised.",
        (True, True): "Both: a stack always ends with a LayerNorm.",
        (False, False): "Neither: every block already ends on a LayerNorm.",
    }
    outcome = (has_final["post"], has_final["pre"])
    correct = statements[outcome]
    return Question(
        kind="choice",
        prompt="One kind of encoder stack needs an extra LayerNorm after its last block. Which one, and why?",
        answer=correct,
        choices=options(r, correct, [s for key, s in statements.items() if key != outcome]),
        explanation=(
            f"Built here with {n_layers} layers: the post-norm stack has a final LayerNorm: {has_final['post']}; the "
            f"pre-norm stack: {has_final['pre']}. In the pre-norm stack the last block's outputs have a spread "
            f"(std per token) of {before:.2f}, and {after:.2f} after the final LayerNorm. A post-norm block already "
            "ends on a LayerNorm, so its output is normalised as it stands."
        ),
        inputs={"n_layers": n_layers, "seed": seed},
    )


@generator("block")
def block_stage_shape(r: random.Random, g: torch.Generator) -> Question:
    B, T, d = r.randint(1, 4), r.randint(3, 12), r.choice([16, 32, 48, 64])
    stage = r.choice(["attention", "residual_1", "ffn_hidden", "ffn_activated", "ffn_output", "norm_2"])
    x = torch.randn(B, T, d, generator=g)
    with torch.inference_mode():
        _, _, trace = built_block(d)(x, return_trace=True)
    shape = tuple(trace[stage].shape)
    return Question(
        kind="exact",
        prompt=(
            f"A post-norm block with d = {d} and an FFN of width 4d runs on a batch of shape (B, T, d) = "
            f"({B}, {T}, {d}). What is the shape of the output of {STAGE_NAMES[stage]}? (for example (2, 3, 4))"
        ),
        answer=str(shape),
        explanation=(
            "Shapes recorded while the block ran: "
            + ", ".join(f"{s} {tuple(t.shape)}" for s, t in trace.items())
            + f". Only the FFN's inside is 4d = {4 * d} wide; every step that feeds a residual sum must be d = {d}."
        ),
        inputs={"B": B, "T": T, "d": d, "stage": stage},
    )


@generator("block")
def block_layernorm_output(r: random.Random, g: torch.Generator) -> Question:
    T, d = r.randint(3, 6), r.choice([16, 32, 64])
    t = r.randint(0, T - 1)
    stat = r.choice(["mean", "standard deviation"])
    x = torch.randn(1, T, d, generator=g) * r.choice([0.5, 2.0, 5.0]) + r.uniform(-3, 3)
    with torch.inference_mode():
        out, _, trace = built_block(d)(x, return_trace=True)
    vec, before = out[0, t], trace["residual_2"][0, t]

    def measure(v: torch.Tensor) -> float:
        return float(v.mean()) if stat == "mean" else float(v.std(unbiased=False))

    answer = measure(vec)
    return Question(
        kind="numeric",
        prompt=(
            f"A freshly built post-norm block (LayerNorm scale 1 and shift 0, as initialised) with d = {d} runs on "
            f"{T} tokens whose input features have mean {float(x.mean()):.1f}. What is the {stat} of the {d} "
            f"features of token {t}'s output vector? Answers within ±0.01 count."
        ),
        answer=answer,
        tolerance=0.01,
        explanation=(
            f"The block ends on a LayerNorm, which centres each token's vector and scales it to unit spread, then "
            f"applies scale 1 and shift 0. Measured: before the last LayerNorm the {stat} was {measure(before):.3f}; "
            f"after it, {answer:.3f} (the mean to within rounding error, the spread 1 up to LayerNorm's tiny eps)."
        ),
        inputs={"d": d, "T": T, "token": t, "stat": stat},
    )


@generator("block")
def block_ffn_share(r: random.Random, g: torch.Generator) -> Question:
    d = r.choice(SIZES_BUILT)
    block = built_block(d)
    ffn = param_count(block.intermediate) + param_count(block.output.dense)
    total = param_count(block)
    share = 100.0 * ffn / total
    return Question(
        kind="numeric",
        prompt=(
            f"In a BERT-style block with d = {d} and FFN width 4d, what percentage of the block's parameters sit in "
            "the feed-forward network (its two linear layers)? Give a percentage; answers within ±0.5 count."
        ),
        answer=share,
        tolerance=0.5,
        explanation=(
            f"FFN: {d}×{4 * d} + {4 * d} + {4 * d}×{d} + {d} = {ffn:,}; the whole block: {total:,}. "
            f"{ffn:,} / {total:,} = {share:.1f}%, close to 8d²/12d² = 2/3: the FFN, not attention, holds most of "
            "a block's weights."
        ),
        inputs={"d": d},
    )
