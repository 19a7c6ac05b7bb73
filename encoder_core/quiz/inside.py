"""Questions for the "Looking inside" lesson: attention rollout by hand, Spearman's rho, what a knockout's
log-probability change means, which part's knockout matters most, completeness, the logit lens and a layer
with every head knocked out.

The model questions run the lab's small trained MLM (two layers, four heads: quick to knock apart) on a
sentence from the question grammar with one word hidden.
"""

from __future__ import annotations

import functools
import math
import random

import numpy as np
import torch

from ..lessons import inside as core
from ..model.tokenizer import MASK
from ..training.checkpoint import load_small_mlm
from .base import Mistake, Question, fmt_list, generator, grid, sentence
from .forms import choice_question, numeric_question


@functools.lru_cache(maxsize=1)
def lab_mlm():
    """The lab's trained small MLM and its tokenizer (shared here: read them, never change them)."""
    with torch.random.fork_rng():  # building the model draws initial weights: leave the caller's stream alone
        model, tokenizer, _ = load_small_mlm()
    return model, tokenizer


def cloze_from(r: random.Random, n_words: tuple[int, int] = (4, 7)) -> tuple[str, core.Cloze]:
    """A grammar sentence with one of its words (not the first) hidden, ready for the lesson's functions."""
    _, tokenizer = lab_mlm()
    words = sentence(r, r.randint(*n_words)).split()
    k = r.randrange(1, len(words))
    words[k] = MASK
    text = " ".join(words)
    return text, core.prepare_cloze(tokenizer, text)


def rows_text(matrix: torch.Tensor, decimals: int) -> str:
    """A small matrix row by row: '[0.53, 0.28, 0.19]; [0.03, 0.16, 0.81]'."""
    return "; ".join(fmt_list(row, decimals) for row in matrix)


@generator("inside")
def inside_rollout(r: random.Random, g: torch.Generator) -> Question:
    T = 3
    layers = torch.softmax(torch.randn(2, 1, T, T, generator=g, dtype=torch.float64) * 1.5, dim=-1)
    layers = torch.round(layers * 100) / 100
    layers[..., -1] = 1 - layers[..., :-1].sum(-1)  # rows of two decimals that still sum to 1
    i, j = r.randrange(T), r.randrange(T)
    rollout = core.attention_rollout(layers)
    answer = float(rollout[i, j])
    plain = float((layers[1, 0] @ layers[0, 0])[i, j])
    only_top = float((0.5 * layers[1, 0] + 0.5 * torch.eye(T, dtype=torch.float64))[i, j])
    a0, a1 = (0.5 * layers[k, 0] + 0.5 * torch.eye(T, dtype=torch.float64) for k in (0, 1))
    return numeric_question(
        prompt=(
            f"Attention rollout over two layers of one head each, on {T} tokens. Layer 0's weights are "
            f"{rows_text(layers[0, 0], 2)} and layer 1's {rows_text(layers[1, 0], 2)} "
            "(rows are queries, columns keys, both numbered from 0). With the residual, each layer becomes "
            "0.5·A + 0.5·I, and the rollout is "
            f"(0.5·A₁ + 0.5·I)(0.5·A₀ + 0.5·I). What is its entry for query {i}, key {j}?"
        ),
        answer=answer,
        mistakes=(
            Mistake(plain, "That is A₁A₀ without the residual: each layer also passes its input straight on."),
            Mistake(only_top, "That is layer 1 alone: the rollout multiplies every layer's matrix."),
        ),
        explanation=(
            f"0.5·A₀ + 0.5·I = {rows_text(a0, 3)} and 0.5·A₁ + 0.5·I = {rows_text(a1, 3)} (rows already sum to 1). "
            f"Their product's row {i} is {fmt_list(rollout[i])}: entry {j} is {answer:.4f}. "
            f"Without the residual the product would give {plain:.4f}."
        ),
        min_decimals=3,
        inputs={"layers": [grid(layers[k, 0], 2) for k in (0, 1)], "query": i, "key": j},
    )


@generator("inside", idea="rank_agreement")
def inside_spearman(r: random.Random, g: torch.Generator) -> Question:
    model, tokenizer = lab_mlm()
    for _ in range(20):  # a sentence whose two orders are not tied throughout
        text, cloze = cloze_from(r)
        answer_id, f = core.clean_answer(model, cloze)
        knock = core.token_knockouts(model, cloze, answer_id, f)
        with torch.inference_mode():
            _, attentions = core.stream(model, torch.tensor([cloze.ids]), need_weights=True)
        keep = core.scored_positions(cloze)
        raw = attentions[-1][0, :, cloze.position].mean(0).double()[keep].numpy()  # as Explanations.raw
        drops = (-knock[keep]).numpy()
        rho = core.spearman(raw, drops)
        if not math.isnan(rho) and abs(rho) > 0.05:
            break
    pearson = float(np.corrcoef(raw, drops)[0, 1])
    rows = tuple((f"{i} {cloze.tokens[i]}", f"{a:.3f}", f"{d:.3f}") for i, a, d in zip(keep, raw, drops, strict=True))
    return numeric_question(
        prompt=(
            f"The lab's small MLM reads “{text}”. For every token but the [MASK], the table gives the last layer's "
            "attention from the [MASK] (mean of the heads) and how much the log-probability of the model's answer "
            "drops when that token is hidden. What is Spearman's rank correlation between the two columns?"
        ),
        answer=rho,
        mistakes=(Mistake(pearson, "That is Pearson's correlation of the values; Spearman's correlates their ranks."),),
        explanation=(
            f"Rank each column (ties share the mean rank): attention ranks {fmt_list(core.ranks(raw), 1)}, "
            f"drop ranks {fmt_list(core.ranks(drops), 1)}. The Pearson correlation of the ranks is ρ = {rho:.3f}. "
            f"Pearson's on the values themselves gives {pearson:.3f}."
        ),
        table=(("token", "attention from [MASK]", "drop in log p when hidden"), rows),
        inputs={"text": text},
    )


@generator("inside")
def inside_knockout_factor(r: random.Random, g: torch.Generator) -> Question:
    model, tokenizer = lab_mlm()
    for _ in range(20):  # a head that moves the answer visibly
        text, cloze = cloze_from(r)
        answer_id, f, heads = core.head_knockouts(model, cloze)
        layer, head = divmod(int(heads.abs().argmax()), heads.shape[1])
        change = float(heads[layer, head])
        if abs(change) > 0.05:
            break
    knocked = f + change
    factor = math.exp(change)
    word = tokenizer.vocab[answer_id]
    return numeric_question(
        prompt=(
            f"The lab's small MLM reads “{text}” and answers “{word}” with log-probability {f:.3f}. With layer "
            f"{layer}, head {head} knocked out, the same answer's log-probability is {knocked:.3f}. By what factor "
            "did the answer's probability change (new probability ÷ old)?"
        ),
        answer=factor,
        mistakes=(
            Mistake(change, "That is the change in log-probability; the factor is e raised to it."),
            Mistake(1 / factor, "That is old ÷ new."),
        ),
        explanation=(
            f"Probabilities are e to the log-probabilities: e^{knocked:.3f} ÷ e^{f:.3f} = e^({change:.3f}) = "
            f"{factor:.3f}. The probability went from {math.exp(f):.4f} to {math.exp(knocked):.4f}."
        ),
        min_decimals=3,
        inputs={"text": text, "layer": layer, "head": head},
    )


@generator("inside")
def inside_completeness(r: random.Random, g: torch.Generator) -> Question:
    model, tokenizer = lab_mlm()
    text, cloze = cloze_from(r)
    answer_id, _ = core.clean_answer(model, cloze)
    baseline = r.choice(core.BASELINES)
    ig = core.integrated_gradients(model, tokenizer, cloze, answer_id, baseline, 64)
    moving = [i for i in range(len(cloze.ids)) if i != cloze.position]
    hidden = r.choice(moving)
    others = [i for i in moving if i != hidden]
    rest = float(ig.scores[others].sum())
    answer = ig.gap - rest
    rows = tuple((f"{i} {cloze.tokens[i]}", f"{float(ig.scores[i]):.4f}") for i in others)
    return numeric_question(
        prompt=(
            f"Integrated gradients on the lab's small MLM for “{text}”, from the {baseline} baseline: "
            f"f(x) − f(baseline) = {ig.gap:.4f}, and the table gives every token's attribution but one. Completeness "
            f"says the attributions sum to f(x) − f(baseline). What is the attribution of token {hidden} "
            f"({cloze.tokens[hidden]}; tokens are numbered from 0, [CLS] at 0)?"
        ),
        answer=answer,
        mistakes=(Mistake(rest, "That is the sum of the others; the missing one is the gap minus that sum."),),
        explanation=(
            f"The others sum to {rest:.4f}, so the missing one is {ig.gap:.4f} − {rest:.4f} = {answer:.4f}. Computed "
            f"directly with 64 steps it is {float(ig.scores[hidden]):.4f}: the sum misses the gap by "
            f"{ig.completeness_error:.2%}."
        ),
        table=(("token", "attribution"), rows),
        inputs={"text": text, "baseline": baseline, "token": hidden},
    )


@generator("inside")
def inside_logit_lens(r: random.Random, g: torch.Generator) -> Question:
    model, tokenizer = lab_mlm()
    text, cloze = cloze_from(r)
    lens = core.logit_lens(model, tokenizer, cloze)
    stages = ["the embeddings"] + [f"after layer {i}" for i in range(len(lens.rank) - 1)]
    first = next(i for i, rank in enumerate(lens.rank) if rank == 1 and all(x == 1 for x in lens.rank[i:]))
    rows = tuple((s, t, f"{p:.3f}") for s, t, p in zip(stages, lens.top, lens.probability, strict=True))
    return choice_question(
        r,
        prompt=(
            f"The logit lens on the lab's small MLM for “{text}”: the MLM head applied to the [MASK]'s stream at every "
            f"stage. The table gives the top guess there and the probability of the final answer, “{lens.answer}”. "
            "From which stage on is the final answer the top guess?"
        ),
        correct=stages[first],
        candidates=stages,
        mistakes=tuple(
            Mistake(
                stage,
                f"There the top guess is “{lens.top[i]}”, not “{lens.answer}”."
                if i < first
                else f"It is on top already from {stages[first]} on: the first stage counts.",
            )
            for i, stage in enumerate(stages)
            if i != first
        )[:2],
        explanation=(
            f"The answer's rank at each stage is {lens.rank}: it is first from {stages[first]} on. "
            f"Its probability there is {lens.probability[first]:.3f}."
        ),
        table=(("stage", "top guess", f"p({lens.answer})"), rows),
        inputs={"text": text},
    )


KNOCKOUT_HOW = {
    "head": "its output zeroed before W_O",
    "token": "hidden from every query in every layer",
}


def knockout_rows(model, cloze: core.Cloze, part: str) -> tuple[list[str], list[float], list[float], float, int]:
    """(names, log p(answer) with each part knocked out, attention column, f, answer id) for every head, or every
    token but the [MASK]. The attention column: a head's largest weight from the [MASK]; for a token, the last
    layer's weight on it from the [MASK], mean of the heads."""
    answer_id, f, heads = core.head_knockouts(model, cloze)
    with torch.inference_mode():
        _, att = core.stream(model, torch.tensor([cloze.ids]), need_weights=True)
    attentions = torch.stack([a[0] for a in att])  # (L, H, T, T)
    q = cloze.position
    if part == "head":
        cells = [(layer, head) for layer in range(heads.shape[0]) for head in range(heads.shape[1])]
        names = [f"layer {layer}, head {head}" for layer, head in cells]
        knocked = [f + float(heads[c]) for c in cells]
        looks = [float(attentions[layer, head, q].max()) for layer, head in cells]
    else:
        keep = core.scored_positions(cloze)
        change = core.token_knockouts(model, cloze, answer_id, f)
        names = [f"token {i} ({cloze.tokens[i]})" for i in keep]
        knocked = [f + float(change[i]) for i in keep]
        looks = [float(attentions[-1, :, q, i].mean()) for i in keep]
    return names, knocked, looks, f, answer_id


@generator("inside", idea="knockout_importance")
def inside_knockout_importance(r: random.Random, g: torch.Generator) -> Question:
    model, tokenizer = lab_mlm()
    part = r.choice(("head", "token"))
    for _ in range(20):  # a sentence whose most important part stands clear at the digits shown
        text, cloze = cloze_from(r)
        names, knocked, looks, f, answer_id = knockout_rows(model, cloze, part)
        low = sorted(knocked)
        if len({f"{v:.3f}" for v in knocked}) == len(knocked) and low[1] - low[0] >= 0.05:
            break
    most = min(range(len(names)), key=knocked.__getitem__)
    least = max(range(len(names)), key=knocked.__getitem__)
    sharpest = max(range(len(names)), key=looks.__getitem__)
    word = tokenizer.vocab[answer_id]
    looks_name = "largest attention weight from the [MASK]" if part == "head" else "attention from the [MASK]"
    rows = tuple((n, f"{k:.3f}", f"{a:.2f}") for n, k, a in zip(names, knocked, looks, strict=True))
    mistakes = (
        Mistake(
            names[least],
            "That knockout hurts the answer least (or helps it): the part that matters most is "
            "the one whose removal lowers the answer's log-probability most.",
        ),  # fmt: skip
        Mistake(
            names[sharpest],
            "That is where the attention from the [MASK] is largest; a knockout measures "
            "what the part does for the answer, and attention is not that.",
        ),  # fmt: skip
    )
    return choice_question(
        r,
        prompt=(
            f"The lab's small MLM reads “{text}” and answers “{word}” at the [MASK] with log-probability {f:.3f}. "
            f"The table gives, for each {part}, the answer's log-probability with that {part} knocked out "
            f"({KNOCKOUT_HOW[part]}), and its {looks_name}. Which {part}'s knockout matters most for the answer?"
        ),
        correct=names[most],
        candidates=[m.answer for m in mistakes] + names,
        n=5,
        mistakes=mistakes,
        explanation=(
            f"Knocking out {names[most]} lowers the answer's log-probability most: from {f:.3f} to "
            f"{knocked[most]:.3f}, a change of {knocked[most] - f:+.3f}. The importance of a part is what removing "
            "it does to the answer, whatever the attention looks like."
        ),
        table=((part, f"log p(“{word}”) knocked out", looks_name), rows),
        inputs={"text": text, "part": part},
    )


LAYER_KNOCKOUT_OPTIONS = {
    "bias": "W_O's bias, the same vector at every position",
    "zero": "the zero vector",
    "input": "the layer's input, unchanged",
    "mean": "the mean of the tokens' value vectors",
}


@generator("inside")
def inside_layer_knockout(r: random.Random, g: torch.Generator) -> Question:
    model, tokenizer = lab_mlm()
    text, cloze = cloze_from(r)
    L, H = model.config.n_layers, model.config.n_heads
    layer = r.randrange(L)
    mask = torch.ones(1, L, H)
    mask[0, layer] = 0.0
    block = model.bert.encoder.layer[layer]
    with torch.inference_mode():
        states, _ = core.stream(model, torch.tensor([cloze.ids]), head_mask=mask)
        heads, _ = block.attention.self(states[layer], need_weights=False)
        added = block.attention.output.dense(heads * 0.0)  # what the sublayer adds with every head zeroed
    is_bias = bool(torch.allclose(added, block.attention.output.dense.bias.expand_as(added)))
    correct = LAYER_KNOCKOUT_OPTIONS["bias" if is_bias else "zero"]
    return choice_question(
        r,
        prompt=(
            f"In the lab's small MLM, every head of layer {layer} is knocked out: each head's output is zeroed before "
            "W_O. What does the attention sublayer then add to the residual stream?"
        ),
        correct=correct,
        candidates=list(LAYER_KNOCKOUT_OPTIONS.values()),
        mistakes=(
            Mistake(LAYER_KNOCKOUT_OPTIONS["zero"], "W_O is W·h + b: with h = 0 the bias b is still added."),
            Mistake(LAYER_KNOCKOUT_OPTIONS["input"], "The input goes on through the residual, not the sublayer."),
        ),
        explanation=(
            f"W_O maps the zeroed heads to W_O·0 + b_O = b_O (its norm here is "
            f"{float(block.attention.output.dense.bias.detach().norm()):.3f}), the same at every position. "
            "The layer still passes its input on through the residual, so it becomes LN2(h + FFN(h)) "
            "with h = LN1(x + b_O)."
        ),
        inputs={"text": text, "layer": layer},
    )
