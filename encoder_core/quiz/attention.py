"""Questions for the attention lesson: bidirectional vs causal weights, from encoder_core.model.self_attention."""

from __future__ import annotations

import random

import torch

from ..model.self_attention import attention
from .attention_inputs import draw_scores, drop_last_gaps, random_qkv, scores_to_qk
from .base import Mistake, Question, fmt_list, generator, grid, label, sentence
from .forms import attention_figure, choice_question, numeric_question


@generator("attention", idea="causal-last-row")
def attention_identical_row(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(4, 6)
    words = sentence(r, T).split()
    while True:  # redraw in the (rare) case a saturated softmax makes a second row match
        q, k, v = random_qkv(g, T)
        _, bi = attention(q, k, v)
        _, ca = attention(q, k, v, causal=True)
        gaps = (bi - ca).abs().amax(dim=-1)
        same = [i for i in range(T) if float(gaps[i]) < 1e-9]
        if len(same) == 1:
            break
    row = same[0]

    def row_text(i: int) -> str:
        return f"row {i} (query '{words[i]}')"

    correct = row_text(row)
    none = "none: the mask changes every row"
    per_row = ", ".join(f"row {i}: {float(gaps[i]):.3f}" for i in range(T))
    mistakes = (
        Mistake(row_text(0), "Row 0 changes the most: under the causal mask it may look only at itself."),
        Mistake(none, "The last row already sees every key under the causal mask, so removing it changes nothing."),
    )
    return Question(
        kind="choice",
        prompt=(
            f"The {T} tokens '{' '.join(words)}' go through attention twice with the same queries and keys: "
            "once bidirectional (no mask) and once with the causal mask. Rows are queries, columns keys, both "
            "numbered from 0. Which row of the two weight grids comes out identical?"
        ),
        answer=correct,
        choices=tuple(row_text(i) for i in range(T)) + (none,),
        mistakes=mistakes,
        explanation=(
            f"Largest difference between the two grids, row by row: {per_row}. "
            f"Only row {row} matches: the last query may already look at every key under the causal mask, "
            "so removing the mask changes nothing for it. Every earlier row gains the keys to its right, "
            "and its softmax is shared among more keys."
        ),
        figure=attention_figure(
            (bi - ca).abs(),
            words,
            "|bidirectional - causal| weight per cell",
            f"Difference between the grids: row {row} is 0 everywhere; the other rows differ by up to "
            f"{float(gaps.max()):.2f}.",
        ),
        inputs={"T": T, "q": grid(q, 6), "k": grid(k, 6)},
    )


@generator("attention")
def attention_causal_weight(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(3, 5)
    i = r.randint(1, T - 2)  # a row the mask actually changes
    j = r.randint(0, i)
    s = draw_scores(r, T)
    q, k = scores_to_qk(s)
    _, causal = attention(q, k, k, causal=True)
    _, full = attention(q, k, k)
    w, w_unmasked = float(causal[i, j]), float(full[i, j])
    visible = " + ".join(f"e^{s[m]}" for m in range(i + 1))
    mistakes = [Mistake(w_unmasked, "That is the softmax over all the keys: the causal mask was left out.")]
    if j < i:
        before = torch.softmax(torch.tensor(s[:i], dtype=torch.float64), dim=0)[j]
        mistakes.append(Mistake(float(before), f"Key {i} was masked too, but a query may look at itself."))
    if all(x > 0 for x in s[: i + 1]):  # shares of the raw scores: only a slip a student makes when all are positive
        share = s[j] / sum(s[: i + 1])
        mistakes.append(Mistake(share, "The scores were shared out as they are: e^x was skipped."))
    return numeric_question(
        prompt=(
            f"Keys are numbered from 0. Query {i} has these scaled scores q·k/√d against keys 0 to {T - 1}: {s}. "
            f"With the causal mask on, what weight does it give key {j}? A number between 0 and 1."
        ),
        answer=w,
        mistakes=mistakes,
        explanation=(
            f"The causal mask puts −∞ on keys {i + 1} to {T - 1} (they come after query {i}), so the softmax "
            f"runs over keys 0 to {i} only: e^{s[j]} / ({visible}) = {w:.3f}. "
            f"Forgetting the mask (softmax over all {T} keys) would give {w_unmasked:.3f}."
        ),
        inputs={"scores": s, "query": i, "key": j},
    )


@generator("attention")
def attention_future_mass(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(3, 5)
    s = draw_scores(r, T)
    q, k = scores_to_qk(s)
    _, full = attention(q, k, k)
    _, causal = attention(q, k, k, causal=True)
    future = float(full[0, 1:].sum())
    return numeric_question(
        prompt=(
            f"Keys are numbered from 0. Query 0 (the first token) has scaled scores {s} against keys 0 to {T - 1}. "
            f"Without any mask (an encoder), how much weight in total does it put on the later keys 1 to {T - 1}?"
        ),
        answer=future,
        mistakes=(
            Mistake(0.0, "That is what a causal mask gives; an encoder has none, so the first token sees every key."),
            Mistake(float(full[0, 0]), "That is the weight query 0 keeps on itself (key 0), not on keys after it."),
            Mistake(1 - 1 / T, "The weights are not equal shares: the softmax of the scores decides them."),
        ),
        explanation=(
            f"Softmax of the row gives {fmt_list(full[0])}; keys 1 to {T - 1} get {future:.3f} together "
            f"(1 − {float(full[0, 0]):.3f}). Under a causal mask the same query would put "
            f"{float(causal[0, 1:].sum()):.3f} there: the first token of a decoder sees only itself."
        ),
        inputs={"scores": s},
    )


@generator("attention", idea="drop-moves-bidirectional-only")
def attention_drop_last(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(4, 6)
    words = sentence(r, T).split()
    q, k, v = random_qkv(g, T)
    gap = drop_last_gaps(q, k, v)
    statements = {
        (True, False): "Causal: the first outputs do not move at all. Bidirectional: they change.",
        (False, True): "Bidirectional: the first outputs do not move at all. Causal: they change.",
        (True, True): "Neither changes: dropping a token only removes its own output.",
        (False, False): "Both change, since every query loses one key.",
    }
    outcome = (gap[True] < 1e-9, gap[False] < 1e-9)
    correct = statements[outcome]
    swapped = (outcome[1], outcome[0])
    mistakes = (
        Mistake(statements[swapped], "The two masks are swapped: it is the causal mask that hides later tokens."),
        Mistake(statements[(False, False)], "Under the causal mask no earlier query ever had the last token as a key."),
    )
    return choice_question(
        r,
        prompt=(
            f"Run attention on '{' '.join(words)}', then drop the last token ('{words[-1]}') and run again. "
            f"What happens to the outputs of the first {T - 1} tokens, with the causal mask and without it?"
        ),
        correct=correct,
        candidates=statements.values(),
        mistakes=mistakes,
        explanation=(
            f"Largest change in the first {T - 1} outputs: causal {gap[True]:.3f}, bidirectional {gap[False]:.3f}. "
            "Under the causal mask no earlier token ever looked at the last one, so nothing it fed them is lost. "
            "Without the mask every token read the last one, so all of them change: an encoder cannot append a "
            "token and reuse its earlier work, which is why it cannot generate text step by step."
        ),
        inputs={"T": T, "q": grid(q, 6), "k": grid(k, 6), "v": grid(v, 6)},
    )


@generator("attention")
def attention_rows_sum(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(3, 5)
    words = sentence(r, T).split()
    q, k, v = random_qkv(g, T)
    _, w = attention(q, k, v)
    rows, cols = w.sum(dim=-1), w.sum(dim=0)
    statements = {
        "rows": "Each row: the weights one query spreads over all the keys.",
        "columns": "Each column: the weights all the queries give one key.",
        "grid": "The whole grid.",
        "diagonal": "The diagonal: each token's weight on itself.",
    }
    sums = {"rows": rows, "columns": cols, "grid": w.sum()[None], "diagonal": w.diag().sum()[None]}
    found = [name for name, s in sums.items() if torch.allclose(s, torch.ones_like(s), atol=1e-9)]
    correct = statements[found[0]]
    mistakes = (
        Mistake(statements["columns"], "The softmax runs along a row, over the keys: a column can sum to anything."),
        Mistake(statements["grid"], f"Every one of the {T} rows sums to 1, so the whole grid sums to {T}."),
    )
    return choice_question(
        r,
        prompt=(
            f"attention(q, k, v) on '{' '.join(words)}' returns a {T}×{T} grid of weights, rows = queries, "
            "columns = keys. Which of these always adds up to exactly 1?"
        ),
        correct=correct,
        candidates=statements.values(),
        mistakes=mistakes,
        explanation=(
            f"Row sums: {fmt_list(rows)}. Column sums: {fmt_list(cols)}. The softmax runs along each row (over the "
            "keys), so every query hands out exactly 1 in total; a column can get more or less than 1, depending "
            "on how popular that key is."
        ),
        figure=attention_figure(
            w,
            words,
            "Attention weights (rows = queries)",
            f"Each row sums to 1; the column sums are {fmt_list(cols, 2)}.",
        ),
        inputs={"q": grid(q, 6), "k": grid(k, 6)},
    )


@generator("attention")
def attention_output_value(r: random.Random, g: torch.Generator) -> Question:
    T = 3
    while True:  # terms that nearly cancel ask for more digits than a hand softmax gives: draw again
        s = draw_scores(r, T)
        values = [float(r.randint(-4, 6)) for _ in range(T)]
        q, k = scores_to_qk(s)
        v = torch.tensor(values, dtype=torch.float64)[:, None]
        out, w = attention(q, k, v)
        answer = float(out[0, 0])
        if any(values) and abs(answer) >= 0.1 * max(abs(x) for x in values):
            break
    terms = " + ".join(f"{float(w[0, j]):.3f}×({values[j]:g})" for j in range(T))
    best = max(range(T), key=lambda j: s[j])
    return numeric_question(
        prompt=(
            f"A query's scaled scores against three keys are {s}, and the three value vectors have a single "
            f"feature: {[int(x) for x in values]}. No mask. What is the query's output?"
        ),
        answer=answer,
        mistakes=(
            Mistake(sum(values) / T, "That is the plain average of the values: the softmax weights were left out."),
            Mistake(values[best], "That is the value of the best-scoring key alone: attention mixes all of them."),
            Mistake(
                float(torch.tensor(s, dtype=torch.float64) @ v[:, 0]),
                "The raw scores weighted the values; they must go through the softmax first.",
            ),
        ),
        explanation=(
            f"The softmax of the scores gives the weights {fmt_list(w[0])}. The output is the weighted sum of the "
            f"values: {terms} = {answer:.3f}. (The plain average of the values would be {sum(values) / T:.3f}.)"
        ),
        inputs={"scores": s, "values": values},
    )


@generator("attention")
def attention_causal_cell(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(4, 6)
    words = sentence(r, T).split()
    q, k, v = random_qkv(g, T)
    _, w = attention(q, k, v, causal=True)
    i = r.randint(0, T - 2)
    j = r.randint(i + 1, T - 1)

    def cell(a: int, b: int) -> str:
        return f"(query {a} '{words[a]}', key {b} '{words[b]}')"

    candidates = [(i, j), (j, i), (j, j), (T - 1, 0), (j, max(i - 1, 0))]
    zero = [c for c in dict.fromkeys(candidates) if float(w[c]) == 0.0]
    # By construction only (i, j) lies above the diagonal; the model's own weights confirm it.
    correct = cell(*zero[0])
    wrong = [cell(a, b) for a, b in dict.fromkeys(candidates) if (a, b) not in zero]
    return choice_question(
        r,
        kind="cell",
        prompt=(
            f"Causal attention on '{' '.join(words)}'. Cells are written (query row, key column), both numbered "
            "from 0. Which of these cells of the weight grid is always exactly 0, whatever the queries and keys are?"
        ),
        correct=correct,
        candidates=wrong,
        mistakes=(
            Mistake(cell(j, i), "Query and key are swapped: a later query looking back at an earlier key is allowed."),
            Mistake(cell(j, j), "The diagonal is never masked: under the causal mask a token may look at itself."),
        ),
        explanation=(
            f"The causal mask forbids a query from looking at keys after it: key {j} comes after query {i}, "
            f"so weight {cell(i, j)} = {float(w[i, j]):.3f}. The mirror cell {cell(j, i)} is a later query "
            f"looking back, which is allowed (here {float(w[j, i]):.3f}): do not swap query rows and key columns."
        ),
        figure=attention_figure(
            w,
            words,
            "Causal attention weights",
            f"Every cell above the diagonal is 0; cell ({i}, {j}) is {float(w[i, j]):.2f}.",
        ),
        inputs={"T": T, "cell": [i, j]},
    )


LOOK_BONUS = (3.0, 3.5, 4.0)  # the score a look-ahead head adds to the key right after the query


def look_ahead_scores(r: random.Random, n: int, bonus: float) -> list[list[float]]:
    """Scaled scores of a head with a habit: small noise everywhere, and `bonus` on the key right after each query."""
    return [[round(r.uniform(-1.0, 1.0), 1) + (bonus if j == i + 1 else 0.0) for j in range(n)] for i in range(n)]


def softmax_rows(scores: list[list[float]]) -> torch.Tensor:
    """Each row of scores through attention() as one query (scores_to_qk): the head's weight grid."""
    rows = []
    for s in scores:
        q, k = scores_to_qk(s)
        _, w = attention(q[:1], k, k)
        rows.append(w[0])
    return torch.stack(rows)


@generator("attention", idea="a-head-looks-ahead")
def attention_look_ahead(r: random.Random, g: torch.Generator) -> Question:
    bonus = r.choice(LOOK_BONUS)
    shown = sentence(r, r.randint(5, 6)).split()
    while True:  # a second sentence that differs from the first
        asked = sentence(r, r.randint(5, 7)).split()
        if asked != shown:
            break
    example = softmax_rows(look_ahead_scores(r, len(shown), bonus))
    scores = look_ahead_scores(r, len(asked), bonus)
    i = r.randint(1, len(asked) - 3)  # a word with a word before it and two after it
    row = softmax_rows([scores[i]])[0]
    offered = {"before": i - 1, "itself": i, "after": i + 1, "further": i + 2}
    best = max(offered.values(), key=lambda p: float(row[p]))

    def option(p: int) -> str:
        return label(p, asked[p])

    mistakes = (
        Mistake(
            option(i - 1),
            "Looking back is all a causal mask allows; an encoder has none, and this head looks at the token after.",
        ),
        Mistake(option(i), "The head's habit is not to keep the weight on the word itself: read any row of the grid."),
        Mistake(option(i + 2), "The head looks one token ahead, not two: the bright cell sits right of the diagonal."),
    )
    return choice_question(
        r,
        prompt=(
            f"An encoder's attention head reads '{' '.join(shown)}' (the grid: rows are queries, columns keys, "
            f"numbered from 0). It has the same habit on every sentence. Now it reads '{' '.join(asked)}'. "
            f"Which token does '{label(i, asked[i])}' attend to most?"
        ),
        correct=option(best),
        candidates=[option(p) for p in offered.values()],
        mistakes=mistakes,
        explanation=(
            f"In the grid every row but the last is brightest on the token right after it. On the new sentence "
            f"'{asked[i]}' gives {', '.join(f'{option(p)}: {float(row[p]):.3f}' for p in offered.values())}, so "
            f"'{asked[best]}' most. A decoder's causal mask would give a token after the query a weight of exactly "
            "0; an encoder leaves every key in view, and a trained head may use the words ahead."
        ),
        figure=attention_figure(
            example,
            shown,
            "One head on the first sentence",
            f"Every row but the last of the grid on '{' '.join(shown)}' is brightest on the token right after it "
            f"(weights {fmt_list(example.diagonal(1), 2)}).",
            in_prompt=True,
        ),
        inputs={"shown": shown, "asked": asked, "query": i, "scores": scores[i], "bonus": bonus},
    )
