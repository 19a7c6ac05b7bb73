"""Pre-train the lab's small masked-language model on real English and the generated corpus.

    python -m scripts.train  (or: make train; needs Debian's wordnet-base)

The training text is WordNet 3.0's example sentences and definitions (encoder_core.data.wordnet)
plus the grammar's generated sentences (encoder_core.data.corpus), read with BERT's uncased
WordPiece vocabulary, so the model has seen ordinary English and the lessons' own sentences.

Masking is dynamic, as in RoBERTa: every batch is masked afresh, so the same sentence is
seen with different hidden words on every pass. The loss is cross-entropy at the chosen
positions only (labels -100 everywhere else). Same seed, same machine: same weights.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from ..data.corpus import DEFAULT_SEED, DEFAULT_SIZE, HELD_OUT_FRACTION, bank_pairs, build_corpus, split_corpus
from ..data.wordnet import read_wordnet, split_examples
from ..model.config import EncoderConfig, preset
from ..model.model import init_bert_weights, param_count
from ..model.output_heads import MaskedLanguageModel
from ..model.tokenizer import Batch, english_tokenizer
from ..objectives.mlm_masking import IGNORE_INDEX, tokenizer_mask
from .checkpoint import DEFAULT_DIR, fill_mask, save_small_mlm
from .evaluate import evaluate_model, evaluate_real
from .probes import PROBES, filled, run_probes


@dataclass(frozen=True)
class TrainSettings:
    steps: int = 15_000
    batch_size: int = 64
    lr: float = 2e-3
    warmup: int = 300
    weight_decay: float = 0.01
    mask_rate: float = 0.15
    # Half the sentences end in " ." so the model copes with text typed with or without a full stop.
    period_rate: float = 0.5
    # Measured: without dropout this tiny, underfitting model generalises as well and learns faster
    # (held-out top-1 0.197 against 0.183 with dropout 0.1, same steps); the corpus is far from memorised.
    dropout: float = 0.0
    seed: int = 0
    corpus_size: int = DEFAULT_SIZE
    corpus_seed: int = DEFAULT_SEED
    held_out_fraction: float = HELD_OUT_FRACTION
    log_every: int = 50  # one point of the saved loss curve per this many steps (mean over them)
    # Definitions are long and dictionary-like; they teach words, the examples teach usage.
    use_glosses: bool = True
    example_copies: int = 3  # the example sentences are seen this many times per pass
    max_pieces: int = 48  # longer texts are cut (a few long definitions), to keep batches cheap


def small_config(dropout: float = 0.0) -> EncoderConfig:
    """The "small" preset (d=64, 4 heads, 2 layers, BERT's English vocabulary), optionally with dropout."""
    return preset("small", dropout=dropout)


def new_mlm(config: EncoderConfig, seed: int = 0) -> MaskedLanguageModel:
    """A freshly initialised MLM (BERT's init), the same weights for the same seed."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = MaskedLanguageModel(config)
        init_bert_weights(model.bert)
        head = model.cls.predictions
        # The decoder is the (already initialised) embedding table; init_bert_weights would
        # trip over its missing bias, so the head's own layers are set here.
        nn.init.normal_(head.transform.dense.weight, std=0.02)
        nn.init.zeros_(head.transform.dense.bias)
        nn.init.ones_(head.transform.LayerNorm.weight)
        nn.init.zeros_(head.transform.LayerNorm.bias)
        nn.init.zeros_(head.bias)
    return model


class SentenceBatches:
    """Endless shuffled batches of padded sentences; one pass over the list per epoch.

    Every sentence is tokenized and padded once, up front (with and without a final " ."),
    so a batch is a row gather and a trim to its longest sentence.
    """

    def __init__(
        self,
        sentences: list[str],
        tokenizer,
        batch_size: int,
        seed: int = 0,
        period_rate: float = 0.0,
        max_length: int | None = None,
    ):
        if not sentences:
            raise ValueError("no sentences to train on")
        self.tokenizer = tokenizer
        self.batch_size = batch_size
        self.period_rate = period_rate
        self.rng = random.Random(seed)
        cut = {} if max_length is None else {"max_length": max_length - (period_rate > 0), "truncate": True}
        self.plain = tokenizer.pad([tokenizer.encode(s, **cut) for s in sentences])
        self.dotted = None
        if period_rate > 0:
            # [CLS] w1 .. wn [SEP]  ->  [CLS] w1 .. wn . [SEP]: the same rows, one token longer.
            rows, last = torch.arange(len(sentences)), torch.tensor(self.plain.lengths) - 1
            self.dotted = F.pad(self.plain.ids, (0, 1), value=tokenizer.pad_id)
            self.dotted[rows, last] = tokenizer.token_to_id["."]
            self.dotted[rows, last + 1] = tokenizer.sep_id
        self.order: list[int] = []

    def next(self) -> Batch:
        rows, dots = [], []
        for _ in range(self.batch_size):
            if not self.order:
                self.order = list(range(len(self.plain.lengths)))
                self.rng.shuffle(self.order)
            rows.append(self.order.pop())
            dots.append(self.period_rate > 0 and self.rng.random() < self.period_rate)
        index, dot = torch.tensor(rows), torch.tensor(dots)
        ids = self.plain.ids[index]
        lengths = [self.plain.lengths[r] for r in rows]
        if self.dotted is not None:
            ids = torch.where(dot[:, None], self.dotted[index], F.pad(ids, (0, 1), value=self.tokenizer.pad_id))
            lengths = [n + d for n, d in zip(lengths, dots)]
        width = max(lengths)
        ids = ids[:, :width].contiguous()
        pad_mask = torch.arange(width)[None, :] >= torch.tensor(lengths)[:, None]
        tokens = [[self.tokenizer.vocab[i] for i in row] for row in ids.tolist()]
        return Batch(ids, torch.zeros_like(ids), pad_mask, tokens, lengths)


def warmup_linear(warmup: int, total: int) -> Callable[[int], float]:
    """Learning-rate factor: up linearly for `warmup` steps, then down linearly to 0 (BERT's schedule)."""

    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def coin_flip_mask(tokenizer, ids: torch.Tensor, rate: float, generator: torch.Generator, replacement_ids):
    """BERT's original selection: each position chosen with probability rate, then 80/10/10."""
    return tokenizer_mask(tokenizer, ids, rate=rate, exact=False, generator=generator, replacement_ids=replacement_ids)


def optimizer_step(optimizer, schedule, loss: torch.Tensor, params, logits: torch.Tensor, targets) -> float:
    """One update (gradients clipped to norm 1); returns the step's accuracy at the scored positions."""
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    optimizer.step()
    schedule.step()
    return float((logits.argmax(-1) == targets).float().mean())


def train_mlm(
    model: MaskedLanguageModel,
    tokenizer,
    sentences: list[str],
    *,
    steps: int,
    batch_size: int = 64,
    lr: float = 1e-3,
    warmup: int = 100,
    weight_decay: float = 0.01,
    mask_rate: float = 0.15,
    period_rate: float = 0.0,
    seed: int = 0,
    leaky: bool = False,
    max_length: int | None = None,
    replacement_ids: torch.Tensor | None = None,
    callback: Callable[[int, int, float, float], None] | None = None,
) -> list[dict]:
    """Train in place; returns one record per step: step, loss, accuracy (at scored positions), lr.

    leaky=True reproduces the classic bug: positions are chosen and scored as usual, but the
    input keeps the original token there, so the answer is visible to the model.
    replacement_ids: the tokens a "random" replacement draws from (default: every ordinary id).
    callback(step, total, loss, accuracy) is called after every step (step counts from 1).
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    batches = SentenceBatches(sentences, tokenizer, batch_size, seed, period_rate, max_length)
    generator = torch.Generator().manual_seed(seed)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "LayerNorm" not in n]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2 or "LayerNorm" in n]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        foreach=True,  # one fused update over all the small tensors: much less per-step overhead on CPU
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_linear(warmup, steps))
    records = []
    model.train()
    with torch.random.fork_rng(devices=[]):  # dropout draws, without disturbing the caller's generator
        torch.manual_seed(seed)
        for step in range(1, steps + 1):
            batch = batches.next()
            # Coin-flip selection (BERT's original): with ~9-token sentences the exact rule would
            # choose one position per sentence and always make it [MASK], never random or kept.
            while True:
                m = coin_flip_mask(tokenizer, batch.ids, mask_rate, generator, replacement_ids)
                if bool((m.labels != IGNORE_INDEX).any()):
                    break
            inputs = batch.ids if leaky else m.inputs
            scored = m.labels != IGNORE_INDEX
            out = model.bert(inputs, batch.segments, batch.key_padding_mask, need_weights=False)
            logits = model.cls.predictions(out.hidden[scored])  # only the scored rows: (N, V)
            targets = m.labels[scored]
            loss = F.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX)
            acc = optimizer_step(optimizer, schedule, loss, model.parameters(), logits, targets)
            rec = {"step": step, "loss": loss.item(), "accuracy": acc, "lr": optimizer.param_groups[0]["lr"]}
            records.append(rec)
            if callback is not None:
                callback(step, steps, rec["loss"], acc)
    model.eval()
    return records


class ProgressBar:
    """A one-line text progress bar with the running loss; plain lines when not on a terminal."""

    def __init__(self, total: int, stream=None, width: int = 30):
        self.total, self.width = total, width
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.start = time.perf_counter()
        self.running: float | None = None
        self.last_draw = 0.0

    def __call__(self, step: int, total: int, loss: float, accuracy: float) -> None:
        # Exponential moving average: a readable trend rather than one noisy batch.
        self.running = loss if self.running is None else 0.98 * self.running + 0.02 * loss
        now = time.perf_counter()
        done = step == self.total
        if self.tty and (done or now - self.last_draw > 0.1):
            self.last_draw = now
            self.stream.write("\r" + self.line(step, now))
            if done:
                self.stream.write("\n")
            self.stream.flush()
        elif not self.tty and (done or step % max(1, self.total // 20) == 0):
            self.stream.write(self.line(step, now) + "\n")
            self.stream.flush()

    def line(self, step: int, now: float) -> str:
        filled = int(self.width * step / self.total)
        elapsed = now - self.start
        eta = elapsed / step * (self.total - step)
        bar = "#" * filled + "." * (self.width - filled)
        return f"[{bar}] {step}/{self.total} loss {self.running:.3f} {elapsed:5.0f}s (eta {eta:3.0f}s)"


def loss_curve(records: list[dict], every: int) -> list[dict]:
    """Mean loss and accuracy over consecutive windows of `every` steps, labelled by the window's last step."""
    curve = []
    for start in range(0, len(records), every):
        window = records[start : start + every]
        curve.append(
            {
                "step": window[-1]["step"],
                "loss": round(sum(r["loss"] for r in window) / len(window), 4),
                "accuracy": round(sum(r["accuracy"] for r in window) / len(window), 4),
            }
        )
    return curve


@dataclass(frozen=True)
class TrainingText:
    texts: list[str]  # one pass of training, in order (shuffled per epoch by SentenceBatches)
    grammar_train: list[str]
    grammar_held_out: list[str]
    examples_held_out: list[str]  # WordNet example sentences never trained on
    counts: dict


def training_texts(settings: TrainSettings) -> TrainingText:
    """What run() trains and tests on: the grammar's split, WordNet's split, the definitions.

    No probe (encoder_core.training.probes), filled in with its expected word, is left in the training text.
    """
    grammar_train, grammar_held = split_corpus(
        build_corpus(settings.corpus_size, settings.corpus_seed), settings.held_out_fraction, settings.corpus_seed
    )
    wordnet = read_wordnet()
    examples_train, examples_held = split_examples(wordnet.examples)
    glosses = wordnet.glosses if settings.use_glosses else []
    # A held-out sentence must not be seen in any form: two definitions are word for word an example.
    elsewhere = set(glosses) | set(grammar_train)
    examples_held = [s for s in examples_held if s not in elsewhere]
    probes = {s for p in PROBES for s in filled(p)}
    texts = [
        s
        for s in grammar_train + examples_train * settings.example_copies + glosses
        if s.lower().rstrip(" .") not in probes
    ]
    counts = {
        "grammar_train": len(grammar_train),
        "grammar_held_out": len(grammar_held),
        "wordnet_examples_train": len(examples_train),
        "wordnet_examples_held_out": len(examples_held),
        "wordnet_glosses": len(glosses),
        "example_copies": settings.example_copies,
        "texts_per_pass": len(texts),
    }
    return TrainingText(texts, grammar_train, grammar_held, examples_held, counts)


def seen_ids(tokenizer, texts: list[str], max_length: int) -> torch.Tensor:
    """Every ordinary token id that occurs in the texts: what a "random" replacement draws from.

    BERT's vocabulary holds ~1,000 [unusedN] slots and pieces of other scripts; replacing a word
    with one of those teaches nothing, so the 10% random case uses words the corpus really has.
    """
    found: set[int] = set()
    for text in texts:
        found.update(tokenizer.encode(text, max_length=max_length, truncate=True).ids)
    found -= set(tokenizer.special_ids)
    return torch.tensor(sorted(found), dtype=torch.long)


def run(settings: TrainSettings = TrainSettings(), out_dir: Path | str = DEFAULT_DIR, progress: bool = True) -> dict:
    """Gather the texts, train the small model, evaluate it on held-out sentences, save the checkpoint."""
    tokenizer = english_tokenizer()
    data = training_texts(settings)
    replacements = seen_ids(tokenizer, data.texts, settings.max_pieces)
    config = small_config(settings.dropout)
    model = new_mlm(config, settings.seed)
    bar = ProgressBar(settings.steps) if progress else None
    t0, c0 = time.perf_counter(), time.process_time()
    records = train_mlm(
        model,
        tokenizer,
        data.texts,
        steps=settings.steps,
        batch_size=settings.batch_size,
        lr=settings.lr,
        warmup=settings.warmup,
        weight_decay=settings.weight_decay,
        mask_rate=settings.mask_rate,
        period_rate=settings.period_rate,
        seed=settings.seed,
        max_length=settings.max_pieces,
        replacement_ids=replacements,
        callback=bar,
    )
    spent = time_and_loss(records, t0, c0)
    metrics = evaluate_model(model, tokenizer, data.grammar_train, data.grammar_held_out, seed=settings.corpus_seed)
    real = evaluate_real(model, tokenizer, data.texts, data.examples_held_out, seed=settings.seed)
    examples = filled_examples(
        model,
        tokenizer,
        ["the [MASK] sat on the mat", "the [MASK] swam in the lake", "she read the [MASK]"]
        + [pair[i].replace(" bank ", " [MASK] ", 1) for pair in bank_pairs(2, settings.corpus_seed) for i in (0, 1)],
    )
    metadata = {
        "model": "small_mlm",
        "objective": "masked language modelling, dynamic masking (15%, 80/10/10, coin flip), loss at chosen positions",
        "settings": asdict(settings),
        "seed": settings.seed,
        "parameters": param_count(model),
        "corpus": data.counts,
        **spent,
        "metrics": metrics,
        "real_metrics": real,
        "probes": probe_ranks(model, tokenizer),
        "examples": examples,
        "curve": loss_curve(records, settings.log_every),
    }
    save_small_mlm(model, tokenizer, metadata, out_dir)
    return metadata


def time_and_loss(records: list[dict], t0: float, c0: float) -> dict:
    """A checkpoint's record of its training: wall and CPU time since t0, c0, and the last 200 steps' means."""
    # Wall time depends on what else the machine runs; CPU time is the work itself.
    train_seconds, cpu_seconds = time.perf_counter() - t0, time.process_time() - c0
    tail = records[-200:]
    return {
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(cpu_seconds, 1),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "final_loss": round(sum(r["loss"] for r in tail) / len(tail), 4),
        "final_train_accuracy": round(sum(r["accuracy"] for r in tail) / len(tail), 4),
    }


def probe_ranks(model, tokenizer) -> list[dict]:
    """The probes' ranks as a checkpoint records them."""
    return [{"text": r.probe.text, "rank": r.rank, "best": r.best} for r in run_probes(model, tokenizer)]


def filled_examples(model, tokenizer, texts: list[str]) -> dict[str, list[list]]:
    """Each text's top fills at its first [MASK], as a checkpoint records them."""
    return {text: [[tok, round(p, 4)] for tok, p in fill_mask(model, tokenizer, text)[0]] for text in texts}
