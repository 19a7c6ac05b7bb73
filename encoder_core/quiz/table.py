"""Ten held-fixed questions, their answers and the mistakes they diagnose, as a Markdown table.

python -m scripts.quiz_table prints it; `make figures` writes it into docs/lecturers.md and a test
checks it there, so a change to a generator that moves an answer or a diagnosis shows up there.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Question, format_number, generators


def _batch(q: Question) -> str:
    counts = [f"{len(a.split())}+{len(b.split())} (pair)" if b else str(len(a.split())) for a, b in q.inputs["texts"]]
    return f"(B, T) of a padded batch; words per input: {', '.join(counts)}"


def _pool(q: Question) -> str:
    cells = ", ".join(f"{t} {v:g}" for t, v in zip(q.inputs["tokens"], q.inputs["values"]))
    return f"masked mean pool of one feature: {cells}"


SHORT: dict[str, Callable[[Question], str]] = {
    "attention_causal_weight": lambda q: (
        f"causal weight of query {q.inputs['query']} on key {q.inputs['key']}, scores {q.inputs['scores']}"
    ),
    "attention_output_value": lambda q: f"output for scores {q.inputs['scores']}, values {q.inputs['values']}",
    "padding_mean_pool": _pool,
    "padding_batch_shape": _batch,
    "masking_chosen_count": lambda q: f"positions chosen among {q.inputs['N']} tokens, [CLS] and [SEP] included",
    "masking_split": lambda q: f"[MASK], random, kept among {q.inputs['n']} eligible tokens",
    "block_param_count": lambda q: f"parameters of one block, d = {q.inputs['d']}",
    "block_stage_shape": lambda q: (
        f"shape after {q.inputs['stage']}, (B, T, d) = ({q.inputs['B']}, {q.inputs['T']}, {q.inputs['d']})"
    ),
    "heads_attention_params": lambda q: f"W_Q, W_K, W_V, W_O with biases, d = {q.inputs['d']}, {q.inputs['h']} heads",
    "heads_weight_count": lambda q: f"attention weights, B = {q.inputs['B']}, H = {q.inputs['H']}, T = {q.inputs['T']}",
}
FIXED = (  # (generator, seed): two per lesson, held fixed so the table tracks the generators over time
    ("attention_causal_weight", 12),
    ("attention_output_value", 0),
    ("padding_mean_pool", 0),
    ("padding_batch_shape", 1),
    ("masking_chosen_count", 2),
    ("masking_split", 0),
    ("block_param_count", 0),
    ("block_stage_shape", 0),
    ("heads_attention_params", 1),
    ("heads_weight_count", 0),
)


def fixed_questions() -> list[Question]:
    by_name = {g.__name__: g for g in generators()}
    return [by_name[name](seed) for name, seed in FIXED]


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _shown(q: Question, value: float | str) -> str:
    return format_number(float(value), q.tolerance, q.decimals) if q.kind == "numeric" else str(value)


def quiz_table(questions: list[Question]) -> str:
    """A Markdown table: generator, seed, the question in short, the answer, the mistakes it names."""
    lines = ["| generator | seed | question | answer | mistakes it diagnoses |", "|---|---|---|---|---|"]
    for q in questions:
        name, seed = q.id.split(":")
        tol = f" ±{q.tolerance:g}" if q.tolerance else ""
        mistakes = "<br>".join(f"{_shown(q, m.answer)}: {m.diagnosis}" for m in q.mistakes)
        row = (name, seed, SHORT[name](q), q.answer_text + tol, mistakes)
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines)
