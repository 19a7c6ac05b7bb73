"""Answer leakage, measured: the same tiny model trained twice from the same start.

- correct: chosen positions are corrupted (80% [MASK], 10% random, 10% kept) before the model sees them;
- leaky: the same positions are chosen and scored, but the input still shows the original token.

The leaky run's training accuracy shoots to ~1 within a few dozen steps - it only has to copy
its input - and it learns nothing that helps when the word really is hidden: on held-out
sentences with a real [MASK] it does far worse than the correct run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..data.corpus import DEFAULT_SEED, corpus_and_split
from ..model.config import EncoderConfig
from ..model.tokenizer import WordTokenizer
from ..training.evaluate import masked_examples, predict_top_k
from ..training.train import new_mlm, train_mlm

N_TRAIN_SENTENCES = 3000  # plenty for a few hundred steps, and cheap to tokenize
N_HELD_OUT = 400


@dataclass
class LeakageRun:
    leaky: bool
    loss: list[float]  # per step
    accuracy: list[float]  # per step, at the scored positions of that training batch
    held_out_top1: float  # fill-mask with a real [MASK] on held-out sentences
    held_out_top5: float
    seconds: float


@dataclass
class LeakageResult:
    steps: int
    seed: int
    config: dict
    correct: LeakageRun
    leaky: LeakageRun
    n_held_out: int
    notes: list[str] = field(default_factory=list)


def leakage_config(vocab_size: int) -> EncoderConfig:
    """Smaller than the "small" preset so both runs take seconds: d=32, 2 heads, 1 layer, no dropout."""
    return EncoderConfig(vocab_size=vocab_size, max_positions=64, d_model=32, n_heads=2, n_layers=1, dropout=0.0)


def leakage_run(
    leaky: bool,
    steps: int = 300,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
    *,
    _data: tuple | None = None,
) -> LeakageRun:
    """Train one tiny model (correct or leaky masking) and score it on held-out fill-mask."""
    tokenizer, train, examples = _data or _experiment_data()
    model = new_mlm(leakage_config(tokenizer.vocab_size), seed)  # same seed: same starting weights
    t0 = time.perf_counter()
    records = train_mlm(
        model,
        tokenizer,
        train,
        steps=steps,
        batch_size=32,
        lr=3e-3,
        warmup=max(1, steps // 10),
        seed=seed,
        leaky=leaky,
        callback=(lambda step, total, loss, acc: progress(step, total)) if progress else None,
    )
    guesses = predict_top_k(model, tokenizer, [ex.text for ex in examples], k=5)
    top1 = sum(ex.answer == g[0] for ex, g in zip(examples, guesses)) / len(examples)
    top5 = sum(ex.answer in g for ex, g in zip(examples, guesses)) / len(examples)
    return LeakageRun(
        leaky,
        [r["loss"] for r in records],
        [r["accuracy"] for r in records],
        round(top1, 4),
        round(top5, 4),
        round(time.perf_counter() - t0, 2),
    )


def _experiment_data() -> tuple[WordTokenizer, list[str], list]:
    train, held_out = corpus_and_split(seed=DEFAULT_SEED)
    return (
        WordTokenizer(),
        train[:N_TRAIN_SENTENCES],
        masked_examples(held_out[:N_HELD_OUT], DEFAULT_SEED, content_only=False),
    )


def leakage_experiment(
    steps: int = 300, seed: int = 0, progress: Callable[[int, int], None] | None = None
) -> LeakageResult:
    """Both runs from the same initial weights and the same batches. progress(step, total) counts over both."""
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    data = _experiment_data()
    total = 2 * steps

    def offset(base: int):
        return (lambda step, _total: progress(base + step, total)) if progress else None

    correct = leakage_run(False, steps, seed, offset(0), _data=data)
    leaky = leakage_run(True, steps, seed, offset(steps), _data=data)
    return LeakageResult(
        steps, seed, leakage_config(data[0].vocab_size).to_dict(), correct, leaky, n_held_out=len(data[2])
    )
