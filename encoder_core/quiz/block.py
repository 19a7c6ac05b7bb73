"""Questions for the block lesson: post-norm vs pre-norm order, shapes, parameter counts, LayerNorm."""

from __future__ import annotations

import functools
import random

import torch

from ..model.config import TEACHING_INIT_STD, EncoderConfig
from ..model.hooks import HookPoints
from ..model.model import EncoderBlock, build_encoder, param_count
from .base import Mistake, Question, generator
from .forms import choice_question, count_question, numeric_question

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
    mistakes = (
        Mistake(12 * d * d + 4 * d, "That is 12d² + 4d: the biases of the linear layers were left out."),
        Mistake(12 * d * d + 9 * d, "That is 12d² + 9d: the two LayerNorms' scales and shifts were left out."),
        Mistake(12 * d * d, "That is 12d²: only the weight matrices were counted, no biases, no LayerNorms."),
    )
    return count_question(
        prompt=(
            f"How many trainable parameters does one BERT-style encoder block have for d = {d}? It has W_Q, W_K, "
            f"W_V and W_O (each d × d with a bias), an FFN of width 4d = {4 * d} (two linear layers with biases) "
            "and two LayerNorms (a scale and a shift each). A whole number; commas are fine."
        ),
        answer=total,
        mistakes=mistakes,
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
    correct = STAGE_NAMES[after]
    name = "post-norm (BERT's order)" if norm == "post" else "pre-norm"
    mistakes = []
    if stage in other[:-1]:
        mistakes.append(  # the classic mix-up
            Mistake(
                STAGE_NAMES[other[other.index(stage) + 1]],
                f"That comes next in the other placement: this is a {norm}-norm block.",
            )
        )
    if order.index(stage) > 1:  # the step before, unless that is the input (not an option: nothing computes it)
        mistakes.append(Mistake(STAGE_NAMES[order[order.index(stage) - 1]], "That step comes just before, not after."))
    return choice_question(
        r,
        prompt=f"In a {name} encoder block, what is computed right after {STAGE_NAMES[stage]}?",
        correct=correct,
        # Any step could come next: every one is offered but the input and the step asked about.
        candidates=[STAGE_NAMES[s] for s in STAGE_NAMES if s not in ("input", stage)],
        mistakes=mistakes,
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
    other = "pre" if found == "post" else "post"
    mistakes = (
        Mistake(formulas[other], f"That is the {other}-norm line: the LayerNorm sits on the other side of the sum."),
        Mistake(formulas["no residual"], "The residual is gone: every sublayer adds to x, it never replaces it."),
    )
    return choice_question(
        r,
        prompt=f"Which line is the {sub} step of a {name}?",
        correct=correct,
        candidates=formulas.values(),
        mistakes=mistakes,
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


@generator("block", idea="prenorm-raw-stream")
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
    mistakes = (
        Mistake(
            statements[(outcome[1], outcome[0])],
            "Swapped: it is the pre-norm block that ends on a bare residual "
            "sum; a post-norm block ends on its LayerNorm.",
        ),
        Mistake(
            statements[(False, False)],
            "A pre-norm block normalises only what enters each sublayer; its output, "
            "a residual sum, is never normalised.",
        ),
    )
    return choice_question(
        r,
        prompt="One kind of encoder stack needs an extra LayerNorm after its last block. Which one, and why?",
        correct=correct,
        candidates=statements.values(),
        mistakes=mistakes,
        explanation=(
            f"Built here with {n_layers} layers: the post-norm stack has a final LayerNorm: {has_final['post']}; the "
            f"pre-norm stack: {has_final['pre']}. In the pre-norm stack the last block's outputs have a spread "
            f"(std per token) of {before:.2f}, and {after:.2f} after the final LayerNorm. A post-norm block already "
            "ends on a LayerNorm, so its output is normalised as it stands."
        ),
        inputs={"n_layers": n_layers, "seed": seed},
    )


@generator("block", idea="stage-shape")
def block_stage_shape(r: random.Random, g: torch.Generator) -> Question:
    B, T, d = r.randint(1, 4), r.randint(3, 12), r.choice([16, 32, 48, 64])
    stage = r.choice(["attention", "residual_1", "ffn_hidden", "ffn_activated", "ffn_output", "norm_2"])
    x = torch.randn(B, T, d, generator=g)
    with torch.inference_mode():
        _, _, trace = built_block(d)(x, return_trace=True)
    shape = tuple(trace[stage].shape)
    wide = shape[-1] == 4 * d
    mistakes = (
        Mistake(
            str((B, T, d if wide else 4 * d)),
            "Only the FFN's inside (its first layer and the GELU) is 4d wide; "
            "everything that feeds a residual sum is d wide.",
        ),
        Mistake(str((T, shape[-1])), "The batch dimension B was left out."),
    )
    return Question(
        kind="exact",
        prompt=(
            f"A post-norm block with d = {d} and an FFN of width 4d runs on a batch of shape (B, T, d) = "
            f"({B}, {T}, {d}). What is the shape of the output of {STAGE_NAMES[stage]}? (for example (2, 3, 4))"
        ),
        answer=str(shape),
        mistakes=mistakes,
        explanation=(
            "Shapes recorded while the block ran: "
            + ", ".join(f"{s} {tuple(t.shape)}" for s, t in trace.items())
            + f". Only the FFN's inside is 4d = {4 * d} wide; every step that feeds a residual sum must be d = {d}."
        ),
        inputs={"B": B, "T": T, "d": d, "stage": stage},
    )


@generator("block", idea="layernorm-output")
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

    # The mean is 0 by construction (up to float error): state it as exactly 0, not as a tiny number.
    answer = 0.0 if stat == "mean" else measure(vec)
    input_mean = float(x.mean())
    spread_rule = f" (dividing by {d}, not {d - 1})" if stat != "mean" else ""
    mistakes = [Mistake(measure(before), f"That is the {stat} before the last LayerNorm; the block ends on it.")]
    if stat == "mean":
        mistakes.append(Mistake(round(input_mean, 1), "LayerNorm does not keep the input's mean: it centres it."))
    else:
        mistakes.append(Mistake(0.0, "LayerNorm centres the vector, but it scales its spread to 1, not to 0."))
    return numeric_question(
        prompt=(
            f"A freshly built post-norm block (LayerNorm scale 1 and shift 0, as initialised) with d = {d} runs on "
            f"{T} tokens whose input features have mean {input_mean:.1f}. Tokens are numbered from 0. What is the "
            f"{stat} of the {d} features of token {t}'s output vector{spread_rule}?"
        ),
        answer=answer,
        mistakes=mistakes,
        explanation=(
            f"The block ends on a LayerNorm, which centres each token's vector and scales it to unit spread, then "
            f"applies scale 1 and shift 0. Measured: before the last LayerNorm the {stat} was {measure(before):.3f}; "
            f"after it, {measure(vec):.3f} (the mean 0 up to rounding error, the spread 1 up to LayerNorm's tiny eps)."
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
    attn = param_count(block.attention.self) + param_count(block.attention.output.dense)
    return numeric_question(
        prompt=(
            f"In a BERT-style block with d = {d} and FFN width 4d, what percentage of the block's parameters sit in "
            "the feed-forward network (its two linear layers, biases included)? The block also holds W_Q, W_K, W_V, "
            "W_O and two LayerNorms. Enter the percentage as a number (12.5 for 12.5%)."
        ),
        answer=share,
        min_decimals=1,
        relative=0.005,  # a percentage: half a percent of it
        mistakes=(
            Mistake(200 / 3, "8d² / 12d² = 2/3 leaves out the biases and the LayerNorms; at this size they count."),
            Mistake(100.0 * attn / total, "That is attention's share (W_Q, W_K, W_V, W_O), not the FFN's."),
            Mistake(
                100.0 * 8 * d * d / (8 * d * d + 4 * d * d),
                "The FFN was compared with attention alone, without the biases and LayerNorms.",
            ),
        ),
        explanation=(
            f"FFN: {d}×{4 * d} + {4 * d} + {4 * d}×{d} + {d} = {ffn:,}; the whole block: {total:,}. "
            f"{ffn:,} / {total:,} = {share:.1f}%, close to 8d²/12d² = 2/3: the FFN, not attention, holds most of "
            "a block's weights."
        ),
        inputs={"d": d},
    )


FFN_ROWS = ("only", "every", "after", "none")  # which rows of a sublayer's output change when one row of its input does


@generator("block", idea="ffn-per-token")
def block_ffn_per_token(r: random.Random, g: torch.Generator) -> Question:
    d, T = r.choice([16, 32, 64]), r.randint(4, 8)
    j = r.randint(1, T - 2)  # not the first or last row: "row j and those after it" then differs from both others
    sub = r.choice(["FFN", "attention"])
    block = built_block(d)
    x = torch.randn(1, T, d, generator=g)
    changed = x.clone()
    changed[0, j] += torch.randn(d, generator=g)

    def run(h: torch.Tensor) -> torch.Tensor:
        return sublayer_output(block, h, "ffn" if sub == "FFN" else "attn")

    with torch.inference_mode():
        moved = (run(changed) - run(x))[0].abs().amax(dim=-1)  # (T,): how far each output row moved
    rows = [i for i in range(T) if float(moved[i]) > 1e-6]
    statements = {
        "only": f"only row {j}",
        "every": f"every row, 0 to {T - 1}",
        "after": f"row {j} and the rows after it",
        "none": "no row: a sublayer's output depends on its weights, not on one row",
    }
    found = {(j,): "only", tuple(range(T)): "every", tuple(range(j, T)): "after", (): "none"}[tuple(rows)]
    reads = "h, the first LayerNorm's output" if sub == "FFN" else "x, the block's input"
    mistakes = {
        "FFN": (
            Mistake(statements["every"], "That is attention, which mixes every row; the FFN reads one row at a time."),
            Mistake(statements["after"], "No mask is involved: the FFN never looks at another row, before or after."),
        ),
        "attention": (
            Mistake(statements["only"], "That is the FFN; attention mixes: every query row reads every key row."),
            Mistake(
                statements["after"], "An encoder has no causal mask: every row reads the changed one, earlier too."
            ),
        ),
    }[sub]
    return choice_question(
        r,
        prompt=(
            f"A post-norm block with d = {d} runs on {T} tokens, rows numbered from 0 to {T - 1}. The {sub} sublayer "
            f"reads {reads}. Only row {j} of what it reads is changed, nothing else. Which rows of the {sub}'s output "
            "change?"
        ),
        correct=statements[found],
        candidates=statements.values(),
        mistakes=mistakes,
        explanation=(
            f"Measured on a built block: the largest change of each output row is {fmt_changes(moved)}. "
            + (
                "The FFN applies the same two linear layers to each row on its own: only the changed row's output "
                "moves. That is why it can write a different amount into each token."
                if sub == "FFN"
                else "Attention gives every query row a weighted mix of every row's value, so one changed row "
                "reaches every output row."
            )
        ),
        inputs={"d": d, "T": T, "row": j, "sublayer": sub},
    )


def sublayer_output(block: EncoderBlock, h: torch.Tensor, sublayer: str) -> torch.Tensor:
    """What one sublayer ("attn" or "ffn") of the block adds when it reads h, read at the block's hook points:
    h goes in at "<sublayer>.in" (what the sublayer reads), its output comes out at "<sublayer>.out"."""
    hooks = HookPoints([f"{sublayer}.out"], {f"{sublayer}.in": lambda _: h})
    block(h, hook=hooks, need_weights=False)
    return hooks.cache[f"{sublayer}.out"]


def fmt_changes(moved: torch.Tensor) -> str:
    return ", ".join(f"row {i}: {float(v):.2g}" for i, v in enumerate(moved))
