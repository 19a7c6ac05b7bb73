"""Questions for the heads lesson: d_head, how many weights, W_O, reading a head's grid, head patterns."""

from __future__ import annotations

import functools
import random

import torch

from ..model.config import EncoderConfig
from ..model.head_patterns import BROAD, PATTERNS, label_heads
from ..model.model import EncoderBlock, param_count
from ..model.self_attention import attention
from .base import Mistake, Question, count_of, fmt_list, generator, grid, label, sentence, small_model, tokenizer
from .forms import attention_figure, choice_question, count_question, position_question


@functools.lru_cache(maxsize=32)
def built_block(d: int, n_heads: int) -> EncoderBlock:
    """A block with fixed weights (seed 0), built without touching the caller's global random stream."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        config = EncoderConfig(vocab_size=8, max_positions=64, d_model=d, n_heads=n_heads, n_layers=1)
        return EncoderBlock(config).eval()


@generator("heads")
def heads_d_head(r: random.Random, g: torch.Generator) -> Question:
    h, d_head = r.choice([2, 3, 4, 6, 8, 12, 16]), r.choice([8, 16, 32, 64])
    d = h * d_head
    config = EncoderConfig(vocab_size=8, d_model=d, n_heads=h)
    answer = config.d_head
    if d <= 256:  # small enough to build: read it off the split queries too
        sa = built_block(d, h).attention.self
        answer = sa.split_heads(torch.zeros(1, 2, d)).shape[-1]
    return count_question(
        prompt=(
            f"A model of width d = {d} uses {h} attention heads. How many features does each head's query, key and "
            "value vector have (d_head)? (a whole number)"
        ),
        answer=answer,
        mistakes=(
            Mistake(d * h, "Heads split the width, they do not multiply it: divide d by the heads."),
            Mistake(d, "Each head sees a slice of the d features, not all of them."),
        ),
        explanation=(
            f"The d = {d} features are cut into {h} equal slices: d_head = {d} / {h} = {answer}. Heads split the "
            f"width, they do not multiply it: their outputs, concatenated, are {h} × {answer} = {d} wide again."
        ),
        inputs={"d": d, "h": h},
    )


@generator("heads", idea="attention-weight-count")
def heads_weight_count(r: random.Random, g: torch.Generator) -> Question:
    B, H, T = r.randint(1, 8), r.choice([2, 4, 6, 8, 12]), r.choice([4, 6, 8, 10, 12, 16, 20, 32, 48, 64])
    d = 4 * H
    x = torch.randn(B, T, d, generator=g)
    with torch.inference_mode():
        _, weights = built_block(d, H).attention.self(x)
    n = weights.numel()
    mistakes = (
        Mistake(B * T * T, "The heads were left out: every head has its own T × T grid."),
        Mistake(H * T * T, "The batch was left out: every sequence has its own grids."),
        Mistake(B * H * T, "One weight per token is too few: there is one per query-key pair, T × T."),
    )
    return count_question(
        prompt=(
            f"One attention layer with {H} heads runs on a batch of {count_of(B, 'sequence')} of {T} tokens. "
            "How many attention weights does it compute? (a whole number; commas are fine)"
        ),
        answer=n,
        mistakes=mistakes,
        explanation=(
            f"The weights tensor has shape (B, H, T, T) = {tuple(weights.shape)}: every head of every sequence has its "
            f"own T × T grid. {B} × {H} × {T} × {T} = {n:,}. Forgetting the heads gives {B * T * T:,}; the count grows "
            "with the square of the length."
        ),
        inputs={"B": B, "H": H, "T": T},
    )


@generator("heads")
def heads_shapes(r: random.Random, g: torch.Generator) -> Question:
    B, T = r.randint(1, 4), r.randint(3, 10)
    H, d_head = r.choice([2, 4, 8]), r.choice([4, 8, 16])
    d = H * d_head
    block = built_block(d, H)
    sa = block.attention.self
    x = torch.randn(B, T, d, generator=g)
    with torch.inference_mode():
        per_head_q = sa.split_heads(sa.query(x))
        concatenated, weights = sa(x)
    shapes = {
        "one layer's queries after splitting into heads": tuple(per_head_q.shape),
        "the attention weights": tuple(weights.shape),
        "the heads' outputs concatenated back together (what W_O receives)": tuple(concatenated.shape),
        "W_O's weight matrix, as nn.Linear stores it (out, in)": tuple(block.attention.output.dense.weight.shape),
    }
    asked = r.choice(list(shapes))
    mistakes = {
        "one layer's queries after splitting into heads": (
            Mistake(str((B, T, H, d_head)), "That is before the transpose: the heads come before the positions."),
            Mistake(str((B, T, d)), "That is before the split into heads."),
        ),
        "the attention weights": (
            Mistake(str((B, T, T)), "The heads dimension was left out: every head has its own grid."),
            Mistake(str((B, H, T, d_head)), "That is a head's queries; the weights are T × T per head."),
        ),
        "the heads' outputs concatenated back together (what W_O receives)": (
            Mistake(str((B, H, T, d_head)), "That is before concatenating: the heads are joined back into d features."),
            Mistake(str((B, T, d_head)), f"Concatenating {H} heads of {d_head} gives {d} features, not {d_head}."),
        ),
        "W_O's weight matrix, as nn.Linear stores it (out, in)": (
            Mistake(str((d_head, d_head)), "W_O mixes all the heads: it maps the d concatenated features to d."),
            Mistake(str((H, d_head, d)), "nn.Linear stores one 2-D matrix, (out, in) = (d, d)."),
        ),
    }[asked]
    return Question(
        kind="exact",
        prompt=(
            f"Multi-head attention with d = {d} and {H} heads (d_head = {d_head}) runs on a batch of shape (B, T, d) "
            f"= ({B}, {T}, {d}). What is the shape of {asked}? (for example (2, 3, 4))"
        ),
        answer=str(shapes[asked]),
        mistakes=mistakes,
        explanation=(
            "Shapes read off a running layer: "
            + "; ".join(f"{name}: {shape}" for name, shape in shapes.items())
            + f". W_O mixes the {H} heads' {d_head}-wide outputs back into one {d}-wide vector per token."
        ),
        inputs={"B": B, "T": T, "H": H, "d_head": d_head, "asked": asked},
    )


@generator("heads")
def heads_attention_params(r: random.Random, g: torch.Generator) -> Question:
    d = r.choice([32, 48, 64, 96, 128, 192, 256])
    h, other = r.sample([h for h in (2, 4, 8, 16) if d % h == 0], 2)

    def count(n_heads: int) -> int:
        sub = built_block(d, n_heads).attention
        return param_count(sub.self) + param_count(sub.output.dense)

    n, n_other = count(h), count(other)
    return count_question(
        prompt=(
            f"Multi-head attention with d = {d} and {h} heads: how many parameters do W_Q, W_K, W_V and W_O have "
            "together, biases included? (a whole number; commas are fine)"
        ),
        answer=n,
        mistakes=(
            Mistake(4 * d * d, f"That is 4 × {d}²: the biases were left out."),
            Mistake(h * n, "Heads are slices of the same four matrices: they do not multiply the count."),
            Mistake(3 * (d * d + d), "W_O was left out: it has a matrix and a bias too."),
        ),
        explanation=(
            f"Each of the four is a {d} × {d} matrix plus a bias of {d}: 4 × ({d}² + {d}) = {n:,}. With {other} heads "
            f"instead the count is {n_other:,}, the same: the heads are slices of these matrices, not extra ones. "
            f"Multiplying by the number of heads would give {h * n:,}."
        ),
        inputs={"d": d, "h": h},
    )


@generator("heads", idea="query-top-key")
def heads_top_key(r: random.Random, g: torch.Generator) -> Question:
    model_seed, layer, head = r.randint(0, 3), r.randint(0, 1), r.randint(0, 3)
    text = sentence(r, r.randint(3, 6))
    enc = tokenizer().encode(text)
    with torch.inference_mode():
        w = small_model(model_seed)(torch.tensor([enc.ids])).attentions[layer][0, head]
    tokens = enc.tokens
    i = r.randrange(len(tokens))
    ranked = torch.argsort(w[i], descending=True).tolist()
    best = ranked[0]
    transposed = int(w[:, i].argmax())  # reading column i instead of row i
    return position_question(
        prompt=(
            f"The small model (seed {model_seed}) reads '{text}'. The chart is layer {layer}, head {head}: rows are "
            f"queries, columns keys, numbered from 0 with [CLS] at 0. Which key does the query "
            f"'{label(i, tokens[i])}' attend to most?"
        ),
        tokens=tokens,
        answer=best,
        mistakes=(
            (transposed, f"That is column {i} read instead of row {i}: the query that looks most at this token."),
            (i, "A token need not attend to itself most: read the largest weight in its row."),
            (ranked[1], "That key has the second-largest weight in the row."),
        ),
        explanation=(
            f"Row {i} ('{tokens[i]}') reads {fmt_list(w[i])} across the keys; its largest weight, "
            f"{float(w[i, best]):.3f}, is on key {best} ('{tokens[best]}'). Reading column {i} instead answers a "
            f"different question (which query looks most at '{tokens[i]}': query {transposed})."
        ),
        figure=attention_figure(
            w,
            tokens,
            f"Small model, layer {layer}, head {head}",
            f"Attention grid of layer {layer}, head {head}: {len(tokens)} query rows by {len(tokens)} key columns, "
            "each row summing to 1; the numbers are in the table below the chart.",
            in_prompt=True,
        ),
        inputs={"model_seed": model_seed, "layer": layer, "head": head, "text": text, "query": i},
    )


@generator("heads")
def heads_column_reading(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(4, 6)
    words = sentence(r, T).split()
    q, k, v = (torch.randn(T, 4, generator=g, dtype=torch.float64) * 1.3 for _ in range(3))
    _, w = attention(q, k, v)
    j = r.randrange(T)
    top_query = int(w[:, j].argmax())
    row_reading = int(w[j].argmax())  # reading row j instead of column j
    return position_question(
        prompt=(
            f"In this attention grid for '{' '.join(words)}' (rows are queries, columns keys, both numbered from 0), "
            f"which query gives the key '{label(j, words[j])}' its largest weight?"
        ),
        tokens=words,
        answer=top_query,
        mistakes=(
            (row_reading, f"That is row {j} read instead of column {j}: where this token itself looks."),
            (j, "A key need not get its largest weight from itself: read down its column."),
        ),
        explanation=(
            f"Read down column {j}: {fmt_list(w[:, j])}. The largest, {float(w[top_query, j]):.3f}, is in row "
            f"{top_query} ('{words[top_query]}'). Row {j} would tell you where '{words[j]}' itself looks (key "
            f"{row_reading}), which is the mirror question."
        ),
        figure=attention_figure(
            w,
            words,
            "Attention weights",
            f"Attention grid: {T} query rows by {T} key columns, each row summing to 1; the numbers are in the table "
            "below the chart.",
            in_prompt=True,
        ),
        inputs={"q": grid(q, 6), "k": grid(k, 6), "key": j},
    )


def synthetic_head(r: random.Random, g: torch.Generator, pattern: str, T: int) -> torch.Tensor:
    """A (T, T) grid: every row mixes a random spread with a peak where the pattern says, or no peak for broad."""
    spread = torch.softmax(torch.randn(T, T, generator=g, dtype=torch.float64) * 0.6, dim=-1)
    if pattern == BROAD:
        return spread
    rows = torch.arange(T)
    target = {
        "previous token": (rows - 1).clamp(min=0),
        "next token": (rows + 1).clamp(max=T - 1),
        "[CLS]": torch.zeros(T, dtype=torch.long),
        "[SEP]": torch.full((T,), T - 1),
        "self": rows,
    }[pattern]
    peak = torch.zeros(T, T, dtype=torch.float64)
    peak[rows, target] = 1.0
    strength = r.uniform(0.5, 0.8)
    return (1 - strength) * spread + strength * peak


@generator("heads", idea="head-pattern")
def heads_pattern(r: random.Random, g: torch.Generator) -> Question:
    words = sentence(r, r.randint(4, 7)).split()
    tokens = ["[CLS]"] + words + ["[SEP]"]
    intended = r.choice(list(PATTERNS) + [BROAD])
    for _ in range(50):  # a weak random peak can read as another pattern: draw until the rule agrees
        w = synthetic_head(r, g, intended, len(tokens))
        found = label_heads(w[None, None], tokens)[0]
        if found.pattern == intended:
            break
    masses = ", ".join(f"{p} {m:.2f}" for p, m in found.masses.items())
    correct = found.pattern
    ranked = sorted(found.masses, key=found.masses.get, reverse=True)
    if correct == BROAD:
        mistakes = (
            Mistake(
                ranked[0],
                f"'{ranked[0]}' has the largest mass, {found.masses[ranked[0]]:.2f}, but that is "
                "below 0.4: no pattern wins.",
            ),
        )
    else:
        runner_up = next(p for p in ranked if p != correct)
        mistakes = (
            Mistake(
                runner_up,
                f"'{runner_up}' has a mass of {found.masses[runner_up]:.2f}; '{correct}' has "
                f"{found.mass:.2f}, the largest.",
            ),
            Mistake(BROAD, f"The largest mass, {found.mass:.2f}, reaches 0.4, so the head has a pattern."),
        )
    return choice_question(
        r,
        prompt=(
            "Which pattern does this head show? Rule: each pattern's mass is the weight a query row puts on its "
            "key (the token before, the token after, [CLS], [SEP], the token itself), averaged over every row "
            "that has such a key ([CLS] and [SEP] rows included; the first row has no token before it, the last "
            "none after); the head gets the pattern with the largest mass if that is at least 0.4, otherwise "
            "'broad'."
        ),
        correct=correct,
        candidates=list(PATTERNS) + [BROAD],
        mistakes=mistakes,
        explanation=(
            f"Masses measured on this grid: {masses}. The largest is {found.mass:.2f} "
            + (f"(≥ 0.4), so the head is '{correct}'." if correct != BROAD else "(< 0.4), so no pattern wins: broad.")
        ),
        figure=attention_figure(
            w,
            tokens,
            "Which pattern?",
            f"A {len(tokens)}-token head whose largest pattern mass is {found.mass:.2f}.",
            in_prompt=True,
        ),
        inputs={"tokens": tokens, "weights": grid(w, 8)},
    )
