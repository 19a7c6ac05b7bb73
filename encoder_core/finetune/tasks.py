"""Fine-tuning tasks the lab writes itself, the heads that read them, and a short training loop.

Four labelled tasks, generated from the grammar's word lists (data/lexicon.py), so every answer is
known exactly; each is seeded and deterministic, with a train / held-out split of distinct texts:

- sentence: is the sentence's mood positive or negative? "the dog was not happy" is negative,
  "the sad cat was happy" positive: the predicate decides, and a "not" flips it;
- pair: does sentence B follow from sentence A ("she was hungry" -> "she ate the bread")?
- tagging: a tag for every word (person / animal / object / place / verb / other);
- qa: a question in segment A, a two-clause passage in segment B, the answer a span of B.

fine_tune() trains a model built around a COPY of the encoder it is given (or a random one of the
same shape), so a shared, cached model is never changed. Only the first word piece of a word
carries a tag; [CLS], [SEP], pads and later pieces are labelled -100, which the loss skips.
"""

from __future__ import annotations

import copy
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import nn

from ..data.lexicon import ANIMALS, OBJECTS, PEOPLE, PLACES, VERBS_INTRANSITIVE, VERBS_TRANSITIVE
from ..model.model import Encoder, build_encoder
from ..model.output_heads import SequenceClassifier, SpanHead, TokenClassifier, mean_pool
from ..model.tokenizer import Encoding
from ..objectives.mlm_masking import IGNORE_INDEX

TASKS = ("sentence", "pair", "tagging", "qa")
STARTS = ("finetune", "frozen", "scratch")  # the lab's MLM end to end; its encoder frozen; random weights
POOLINGS = ("cls", "mean")
N_TRAIN, N_HELD_OUT = 1600, 400
MAX_LENGTH = 64  # tokens per input: the generated texts are far shorter
MAX_ANSWER_TOKENS = 8  # the longest span the QA head may pick
# Steps each task needs to pass its baseline well; each run takes a few seconds on one core.
DEFAULT_STEPS = {"sentence": 150, "pair": 150, "tagging": 100, "qa": 300}
BATCH_SIZE = 32
# The head learns at HEAD_LR in every starting point; the encoder, when it trains, at a smaller
# ENCODER_LR, so the pre-trained weights are adjusted rather than overwritten.
HEAD_LR, ENCODER_LR = 1e-2, 1e-3

SENTENCE_LABELS = ("negative", "positive")
PAIR_LABELS = ("does not follow", "follows")
TAGS = ("other", "person", "animal", "object", "place", "verb")

# ---- the grammar's words, by role -----------------------------------------------------------------

GOOD_MOODS = ("happy", "warm")
BAD_MOODS = ("sad", "cold", "tired", "hungry")
SUBJECT_ADJ = ("old", "young", "little", "big", "small", "happy", "sad")
TAILS = ("", "", "", " all day", " at night", " in the morning", " in the garden", " at home")
BASE_FORM = {
    "sat": "sit",
    "slept": "sleep",
    "rested": "rest",
    "stood": "stand",
    "ate": "eat",
    "read": "read",
    "bought": "buy",
    "found": "find",
    "lost": "lose",
    "held": "hold",
    "washed": "wash",
    "carried": "carry",
    "opened": "open",
    "dropped": "drop",
    "made": "make",
    "saw": "see",
    "liked": "like",
    "took": "take",
}
REST_VERBS = ("sat", "slept", "rested", "stood")
ACTION_VERBS = tuple(v for v in BASE_FORM if v not in REST_VERBS)
SURFACES = ("mat", "floor", "bed", "sofa", "roof", "chair", "table", "hill", "road", "beach", "field")
NOUN_SUBJECTS = tuple(p for p in PEOPLE if p not in ("she", "he")) + ANIMALS
THINGS = tuple(o for o in OBJECTS if o != "money")

TAG_OF: dict[str, str] = {
    **{w: "person" for w in PEOPLE + ("boys", "girls")},
    **{w: "animal" for w in ANIMALS + ("cats", "dogs", "birds")},
    **{w: "object" for w in OBJECTS},
    **{w: "place" for w in PLACES + ("bank", "water")},
    **{w: "verb" for w in VERBS_INTRANSITIVE + VERBS_TRANSITIVE},
    **{w: "verb" for w in ("went", "came", "counted", "fished", "swam", "paid", "kept")},
}


def tag_of(word: str) -> int:
    """The tag index of a word as the grammar uses it; anything else is "other"."""
    return TAGS.index(TAG_OF.get(word.lower(), "other"))


# ---- examples --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    text_a: str
    text_b: str | None = None
    label: int | None = None  # sentence and pair tasks: the class index
    tags: tuple[int, ...] | None = None  # tagging: one tag per word of text_a (words as the tokenizer splits them)
    answer: tuple[int, int] | None = None  # qa: first and last word of the answer in text_b (inclusive)


@dataclass(frozen=True)
class TaskData:
    task: str
    labels: tuple[str, ...]  # class or tag names; () for qa
    train: tuple[Example, ...]
    held_out: tuple[Example, ...]


def _subject(r: random.Random) -> tuple[str, str]:
    """('the old dog', 'dog')."""
    noun = r.choice(NOUN_SUBJECTS)
    adj = f"{r.choice(SUBJECT_ADJ)} " if r.random() < 0.3 else ""
    return f"the {adj}{noun}", noun


def _sentence_example(r: random.Random) -> Example:
    label = r.randrange(2)
    negated = r.random() < 0.5
    good = (label == 1) != negated  # "not" flips the mood word's polarity
    mood = r.choice(GOOD_MOODS if good else BAD_MOODS)
    subject, _ = _subject(r)
    very = "very " if not negated and r.random() < 0.15 else ""
    return Example(f"{subject} was {'not ' if negated else ''}{very}{mood}{r.choice(TAILS)}", label=label)


# (what A says, what follows from it); B is built with A's pronoun
SITUATIONS = (
    ("was hungry", "ate the {food}"),
    ("was tired", "slept on the {bed}"),
    ("was cold", "sat near the lamp"),
    ("was happy", "sang in the garden"),
    ("ran to the river", "swam in the water"),
    ("went to the shop", "bought the {thing}"),
    ("lost {poss} {thing}", "was sad"),
    ("went to the bank", "counted the money"),
)


def _pair_example(r: random.Random) -> Example:
    noun = r.choice(NOUN_SUBJECTS)
    pronoun = "she" if noun in ("woman", "girl", "queen", "mother", "sister") else "he"
    pronoun = "it" if noun in ANIMALS else pronoun
    poss = {"she": "her", "he": "his", "it": "its"}[pronoun]
    i = r.randrange(len(SITUATIONS))
    follows = r.random() < 0.5
    j = i if follows else r.choice([k for k in range(len(SITUATIONS)) if k != i])
    fill = {"food": r.choice(("bread", "cake", "apple")), "bed": r.choice(("bed", "sofa", "mat")), "poss": poss}
    fill["thing"] = r.choice(THINGS)
    a = f"the {noun} " + SITUATIONS[i][0].format(**fill)
    b = f"{pronoun} " + SITUATIONS[j][1].format(**fill)
    return Example(a, b, label=int(follows))


def _tagging_example(r: random.Random) -> Example:
    from ..data.corpus import TEMPLATES  # the grammar's own sentence templates

    funcs, weights = [f for f, _ in TEMPLATES], [w for _, w in TEMPLATES]
    text = r.choices(funcs, weights=weights)[0](r)
    return Example(text, tags=tuple(tag_of(w) for w in text.split()))


def _clause(r: random.Random, taken: set[str]) -> dict:
    """One clause of a passage, as words, with where its subject, object and place sit."""
    while True:
        subject, noun = _subject(r)
        place = r.choice(SURFACES)
        verb = r.choice(REST_VERBS + ACTION_VERBS)
        thing = r.choice(THINGS) if verb in ACTION_VERBS else None
        if not {noun, place, verb, thing} & taken:
            taken |= {noun, place, verb} | ({thing} if thing else set())
            break
    words = subject.split() + [verb]
    obj = None
    if thing:
        obj = (len(words), len(words) + 1)
        words += ["the", thing]
    prep = "on" if verb in REST_VERBS else r.choice(("on", "near", "by"))
    where = (len(words) + 1, len(words) + 2)
    words += [prep, "the", place]
    return {"words": words, "noun": noun, "verb": verb, "thing": thing, "place": place, "prep": prep, "obj": obj,
            "subject": (0, len(subject.split()) - 1), "where": where}  # fmt: skip


def _qa_example(r: random.Random) -> Example:
    taken: set[str] = set()
    clauses = [_clause(r, taken), _clause(r, taken)]
    joiner = r.choice((["and"], ["."]))
    words = clauses[0]["words"] + joiner + clauses[1]["words"]
    k = r.randrange(2)
    c, offset = clauses[k], 0 if k == 0 else len(clauses[0]["words"]) + 1
    kinds = ["where", "who"] + (["what"] if c["thing"] else [])
    kind = r.choice(kinds)
    base = BASE_FORM[c["verb"]]
    if kind == "where":
        question, span = f"where did the {c['noun']} {base} ?", c["where"]
    elif kind == "what":
        question, span = f"what did the {c['noun']} {base} ?", c["obj"]
    else:
        rest = f"the {c['thing']}" if c["thing"] else f"{c['prep']} the {c['place']}"
        question, span = f"who {c['verb']} {rest} ?", c["subject"]
    return Example(question, " ".join(words), answer=(span[0] + offset, span[1] + offset))


MAKERS = {"sentence": _sentence_example, "pair": _pair_example, "tagging": _tagging_example, "qa": _qa_example}
LABELS = {"sentence": SENTENCE_LABELS, "pair": PAIR_LABELS, "tagging": TAGS, "qa": ()}


@lru_cache(maxsize=8)
def make_task(task: str, seed: int = 0, n_train: int = N_TRAIN, n_held_out: int = N_HELD_OUT) -> TaskData:
    """n_train + n_held_out distinct examples (by text), shuffled by seed and split; same seed, same data.

    Classification tasks get as many examples of each class (before the split): a pair that follows has
    fewer distinct wordings than one that does not, so plain sampling would tilt the classes.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    r = random.Random(f"{task}:{seed}")
    total = n_train + n_held_out
    per_class = -(-total // len(LABELS[task])) if task in ("sentence", "pair") else total
    seen: dict[tuple, Example] = {}
    counts: Counter = Counter()
    for _ in range(50 * total):
        ex = MAKERS[task](r)
        key = (ex.text_a, ex.text_b)
        if key not in seen and counts[ex.label] < per_class:
            seen[key] = ex
            counts[ex.label] += 1
        if len(seen) == total:
            break
    else:
        raise ValueError(f"the grammar has fewer than {n_train + n_held_out} distinct {task} examples")
    examples = list(seen.values())
    r.shuffle(examples)
    return TaskData(task, LABELS[task], tuple(examples[:n_train]), tuple(examples[n_train:]))


# ---- encoding ---------------------------------------------------------------------------------------


def first_pieces(tokenizer, text: str, offset: int = 1) -> list[int]:
    """The token position of each word's first word piece, when text starts at position offset."""
    positions, at = [], offset
    for _, pieces in tokenizer.split_words(text):
        positions.append(at)
        at += len(pieces)
    return positions


def word_labels(tokenizer, enc: Encoding, text: str, tags) -> list[int]:
    """-100 everywhere except each word's first piece, which carries its word's tag (cut words dropped)."""
    labels = [IGNORE_INDEX] * len(enc)
    for pos, tag in zip(first_pieces(tokenizer, text), tags):
        if pos < len(enc) - 1:  # the last position is [SEP]
            labels[pos] = int(tag)
    return labels


def passage_start(enc: Encoding) -> int:
    """The first token of segment B (the passage)."""
    return enc.segments.index(1)


@dataclass
class Encoded:
    """A task's examples as tensors. labels: (N,) classes, (N, T) tags, or (N, 2) start/end positions."""

    ids: torch.Tensor  # (N, T)
    segments: torch.Tensor  # (N, T)
    key_padding_mask: torch.Tensor  # (N, T) True = pad
    labels: torch.Tensor
    passage: torch.Tensor | None = None  # qa: (N, T) True at passage tokens (segment B without its [SEP])
    tokens: list[list[str]] = field(default_factory=list)


def passage_mask(segments: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
    """(N, T) True at segment-B tokens other than the final [SEP]."""
    inside = (segments == 1) & ~key_padding_mask
    last = inside.long().cumsum(-1) == inside.long().sum(-1, keepdim=True)  # the final [SEP] and after
    return inside & ~last


def encode(tokenizer, task: str, examples, max_length: int = MAX_LENGTH) -> Encoded:
    encs = [tokenizer.encode(ex.text_a, ex.text_b, max_length=max_length, truncate=True) for ex in examples]
    batch = tokenizer.pad(encs)
    if task in ("sentence", "pair"):
        labels = torch.tensor([ex.label for ex in examples], dtype=torch.long)
    elif task == "tagging":
        labels = torch.full(batch.ids.shape, IGNORE_INDEX, dtype=torch.long)
        for i, (ex, enc) in enumerate(zip(examples, encs)):
            labels[i, : len(enc)] = torch.tensor(word_labels(tokenizer, enc, ex.text_a, ex.tags))
    else:
        spans = []
        for ex, enc in zip(examples, encs):
            firsts = first_pieces(tokenizer, ex.text_b, passage_start(enc))
            lasts = [p - 1 for p in firsts[1:]] + [len(enc) - 2]  # each word's last piece
            spans.append((firsts[ex.answer[0]], lasts[ex.answer[1]]))
        labels = torch.tensor(spans, dtype=torch.long)
    passage = passage_mask(batch.segments, batch.key_padding_mask) if task == "qa" else None
    return Encoded(batch.ids, batch.segments, batch.key_padding_mask, labels, passage, batch.tokens)


# ---- the model: encoder + one small head ---------------------------------------------------------------


class MeanPoolClassifier(nn.Module):
    """A label for the whole input, read from the mean of the real tokens' vectors."""

    def __init__(self, d_model: int, n_labels: int):
        super().__init__()
        self.classifier = nn.Linear(d_model, n_labels)

    def forward(self, hidden: torch.Tensor, key_padding_mask: torch.Tensor) -> torch.Tensor:
        return self.classifier(mean_pool(hidden, key_padding_mask))  # (B, n_labels)


class TaskModel(nn.Module):
    """An encoder with a task head: [CLS] (or mean) -> (B, C); every token -> (B, T, C); span -> (B, T, 2)."""

    def __init__(self, encoder: Encoder, task: str, n_labels: int, pooling: str = "cls"):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        self.encoder, self.task, self.pooling = encoder, task, pooling
        d = encoder.config.d_model
        if task in ("sentence", "pair"):
            self.head = SequenceClassifier(d, n_labels) if pooling == "cls" else MeanPoolClassifier(d, n_labels)
        elif task == "tagging":
            self.head = TokenClassifier(d, n_labels)
        else:
            self.head = SpanHead(d)

    def forward(self, ids, segments, key_padding_mask, passage=None):
        """(B, C) logits, (B, T, C) logits, or (B, T, 2) start/end logits, -inf outside the passage."""
        hidden = self.encoder(ids, segments, key_padding_mask, need_weights=False).hidden  # (B, T, D)
        if self.task in ("sentence", "pair"):
            return self.head(hidden) if self.pooling == "cls" else self.head(hidden, key_padding_mask)
        if self.task == "tagging":
            return self.head(hidden)
        start, end = self.head(hidden, ~passage)  # only passage tokens may start or end an answer
        return torch.stack([start, end], dim=-1)


def task_loss(task: str, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    if task in ("sentence", "pair"):
        return F.cross_entropy(logits, labels)
    if task == "tagging":
        return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX)
    return (F.cross_entropy(logits[..., 0], labels[:, 0]) + F.cross_entropy(logits[..., 1], labels[:, 1])) / 2


def best_spans(logits: torch.Tensor, max_tokens: int = MAX_ANSWER_TOKENS) -> torch.Tensor:
    """(B, T, 2) start/end logits -> (B, 2) the (start, end) with the highest start + end score,
    end >= start, at most max_tokens long, both inside the passage (outside it the logits are -inf)."""
    start, end = logits[..., 0], logits[..., 1]
    T = start.shape[-1]
    score = start[:, :, None] + end[:, None, :]  # (B, T_start, T_end)
    i = torch.arange(T)
    allowed = (i[None, :] >= i[:, None]) & (i[None, :] - i[:, None] < max_tokens)
    score = score.masked_fill(~allowed, float("-inf"))
    flat = score.flatten(1).argmax(-1)
    return torch.stack([flat // T, flat % T], dim=-1)


# ---- training and scoring ----------------------------------------------------------------------------


@dataclass
class FineTuneRun:
    task: str
    start: str
    pooling: str
    steps: int
    seed: int
    losses: list[float]  # one per step: the training batch's loss
    held_out: float  # accuracy (sentence, pair, tagging: over words) or exact match (qa)
    baseline: float  # the majority class (qa: the most common answer position in training) on held-out
    n_train: int
    n_held_out: int
    n_scored: int  # held-out items scored: sentences, pairs, words or questions
    trainable: int  # parameters that learned
    seconds: float
    model: TaskModel = field(repr=False)  # eval mode; private to this run
    labels: tuple[str, ...] = ()


def _starting_encoder(pretrained: Encoder, start: str, seed: int) -> Encoder:
    if start == "scratch":
        return build_encoder(pretrained.config, seed=seed)  # same shape, BERT's random init
    return copy.deepcopy(pretrained)  # a private copy: the shared model is never trained


def _predictions(task: str, logits: torch.Tensor) -> torch.Tensor:
    return best_spans(logits) if task == "qa" else logits.argmax(-1)


def _score(task: str, predicted: torch.Tensor, labels: torch.Tensor) -> tuple[float, int]:
    """(accuracy or exact match, how many items were scored)."""
    if task == "tagging":
        scored = labels != IGNORE_INDEX
        return float((predicted[scored] == labels[scored]).float().mean()), int(scored.sum())
    if task == "qa":
        return float((predicted == labels).all(-1).float().mean()), labels.shape[0]
    return float((predicted == labels).float().mean()), labels.shape[0]


def majority_baseline(task: str, train: Encoded, held: Encoded) -> float:
    """Always answer what training answered most often: its commonest class, tag or (start, end)."""
    if task == "qa":
        common = Counter(map(tuple, train.labels.tolist())).most_common(1)[0][0]
        return _score(task, torch.tensor(common).expand_as(held.labels), held.labels)[0]
    labels = train.labels[train.labels != IGNORE_INDEX]
    common = int(torch.mode(labels).values)
    return _score(task, torch.full_like(held.labels, common), held.labels)[0]


@torch.inference_mode()
def predict(model: TaskModel, data: Encoded, batch_size: int = 256) -> torch.Tensor:
    """Logits for every example, in batches (eval mode is the model's own: dropout is 0 here)."""
    outs = []
    for i in range(0, data.ids.shape[0], batch_size):
        sl = slice(i, i + batch_size)
        passage = data.passage[sl] if data.passage is not None else None
        outs.append(model(data.ids[sl], data.segments[sl], data.key_padding_mask[sl], passage))
    if data.passage is not None:  # pad every chunk to the same width before joining
        width = data.ids.shape[1]
        outs = [F.pad(o, (0, 0, 0, width - o.shape[1]), value=float("-inf")) for o in outs]
    return torch.cat(outs)


@lru_cache(maxsize=8)
def encoded_task(tokenizer, task: str, seed: int = 0) -> tuple[TaskData, Encoded, Encoded]:
    data = make_task(task, seed)
    return data, encode(tokenizer, task, data.train), encode(tokenizer, task, data.held_out)


def fine_tune(
    pretrained: Encoder,
    tokenizer,
    task: str,
    start: str = "finetune",
    *,
    steps: int | None = None,
    seed: int = 0,
    pooling: str = "cls",
    batch_size: int = BATCH_SIZE,
    progress: Callable[[int, int, float], None] | None = None,
) -> FineTuneRun:
    """Train a head (and, unless start="frozen", the encoder) for `steps` batches; score it on held-out data.

    `pretrained` is only read: the run trains its own copy ("finetune", "frozen") or a random
    encoder of the same shape ("scratch"). Same seed: same head, same batches, same curve.
    progress(step, total, loss) is called after every step.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if start not in STARTS:
        raise ValueError(f"start must be one of {STARTS}, got {start!r}")
    steps = DEFAULT_STEPS[task] if steps is None else steps
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    data, train, held = encoded_task(tokenizer, task, seed)
    t0 = time.perf_counter()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TaskModel(_starting_encoder(pretrained, start, seed), task, len(data.labels), pooling)
    encoder_params = list(model.encoder.parameters())
    for p in encoder_params:
        p.requires_grad_(start != "frozen")
    groups = [{"params": list(model.head.parameters()), "lr": HEAD_LR}]
    optimizers = []
    if start != "frozen":
        # The word-piece table is 30,522 x 64 and a task uses a few hundred of its rows: sparse
        # gradients and a sparse Adam update only the rows a batch uses (most of a step's time otherwise).
        table = model.encoder.embeddings.word_embeddings
        table.sparse = True
        optimizers.append(torch.optim.SparseAdam([table.weight], lr=ENCODER_LR))
        groups.append({"params": [p for p in encoder_params if p is not table.weight], "lr": ENCODER_LR})
    optimizers.append(torch.optim.AdamW(groups, weight_decay=0.01, foreach=True))
    order = torch.Generator().manual_seed(seed)
    n, losses = train.ids.shape[0], []
    model.train()
    perm, at = torch.randperm(n, generator=order), 0
    for step in range(1, steps + 1):
        if at + batch_size > n:
            perm, at = torch.randperm(n, generator=order), 0
        idx = perm[at : at + batch_size]
        at += batch_size
        width = int((~train.key_padding_mask[idx]).sum(-1).max())  # drop the columns that are pads in every row
        passage = train.passage[idx, :width] if train.passage is not None else None
        logits = model(
            train.ids[idx, :width], train.segments[idx, :width], train.key_padding_mask[idx, :width], passage
        )
        labels = train.labels[idx, :width] if task == "tagging" else train.labels[idx]
        loss = task_loss(task, logits, labels)
        for optimizer in optimizers:
            optimizer.zero_grad(set_to_none=True)
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
        losses.append(loss.item())
        if progress:
            progress(step, steps, losses[-1])
    model.eval()
    score, n_scored = _score(task, _predictions(task, predict(model, held)), held.labels)
    return FineTuneRun(
        task=task,
        start=start,
        pooling=pooling,
        steps=steps,
        seed=seed,
        losses=losses,
        held_out=score,
        baseline=majority_baseline(task, train, held),
        n_train=len(data.train),
        n_held_out=len(data.held_out),
        n_scored=n_scored,
        trainable=sum(p.numel() for p in model.parameters() if p.requires_grad),
        seconds=time.perf_counter() - t0,
        model=model,
        labels=data.labels,
    )
