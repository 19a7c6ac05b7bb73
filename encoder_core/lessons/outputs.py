"""The outputs lesson: what the heads read from the encoder, and what a fine-tuned head says.

Training lives in encoder_core.finetune.tasks; here are the shapes, the trained heads' predictions on a
student's own text (under inference_mode, on the run's private model), the three starting points
compared, and [CLS] against mean pooling as sentence vectors of the real all-MiniLM-L6-v2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import torch

from ..finetune.tasks import (
    BASE_FORM,
    MAX_LENGTH,
    STARTS,
    TAG_OF,
    Example,
    FineTuneRun,
    TaskModel,
    best_spans,
    encode,
    first_pieces,
    make_task,
    passage_mask,
    tag_of,
)
from ..model.output_heads import cls_pool, mean_pool
from .masking import shape_exercise

SHAPE_EXERCISE = {"batch": 8, "length": 20, "d_model": 48, "vocab_size": 1000, "n_masked": 12}  # seed 004's "Try it"
EXERCISE_STEPS = ("hidden", "logits", "chosen_logits")
EXERCISE_LIMITS = {"batch": (1, 64), "length": (1, 128), "d_model": (4, 256), "vocab_size": (8, 5000)}


# ---- shapes ------------------------------------------------------------------------------------------


@dataclass
class HeadShapes:
    tokens: list[list[str]]  # the batch as the model sees it
    steps: dict[str, list[tuple[str, tuple[int, ...]]]]  # head -> (what, shape) in order
    classes: dict[str, int] = field(default_factory=dict)  # head -> how many scores it gives a row or token (C)

    def shape(self, head: str, what: str) -> tuple[int, ...]:
        return dict(self.steps[head])[what]


@torch.inference_mode()
def head_shapes(encoder, tokenizer, texts: list[tuple[str, str | None]], n_labels: int = 2, n_tags: int = 6):
    """Run the three heads (fresh, untrained) on a real batch and read every tensor's shape."""
    encs = [tokenizer.encode(a, b, max_length=MAX_LENGTH, truncate=True) for a, b in texts]
    batch = tokenizer.pad(encs)
    args = (batch.ids, batch.segments, batch.key_padding_mask)
    hidden = encoder(*args, need_weights=False).hidden
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        seq, tag, span = (TaskModel(encoder, t, n) for t, n in (("sentence", n_labels), ("tagging", n_tags), ("qa", 2)))
    passage = passage_mask(batch.segments, batch.key_padding_mask)
    if not bool(passage.any(-1).all()):  # a row without segment B: let the span head read all real tokens
        passage = ~batch.key_padding_mask
    span_logits = span(*args, passage)
    ids = ("ids", tuple(batch.ids.shape))
    h = ("hidden", tuple(hidden.shape))
    return HeadShapes(
        batch.tokens,
        {
            "sentence": [ids, h, ("[CLS] vector", tuple(cls_pool(hidden).shape)), ("logits", tuple(seq(*args).shape))],
            "tagging": [ids, h, ("logits", tuple(tag(*args).shape))],
            "qa": [
                ids,
                h,
                ("start/end logits", tuple(span_logits.shape)),
                ("start scores", tuple(span_logits[..., 0].shape)),
            ],
        },
        {"sentence": n_labels, "tagging": n_tags, "qa": 2},
    )


# A head's logits could have one of these shapes: one score per class for the row, one per class for every
# token, a D-wide vector per token (no head at all), or two scores per token (the span head).
SHAPE_FORMS = ("(B, C)", "(B, T, C)", "(B, T, D)", "(B, T, 2)")
LOGITS = {"sentence": "logits", "tagging": "logits", "qa": "start/end logits"}


def shape_forms(shapes: HeadShapes, head: str) -> dict[str, tuple[int, ...]]:
    """Each of SHAPE_FORMS with the batch's numbers put in: B and T from the ids, D from the encoder's output,
    C from the head."""
    (B, T), D, C = shapes.shape(head, "ids"), shapes.shape(head, "hidden")[-1], shapes.classes[head]
    return dict(zip(SHAPE_FORMS, ((B, C), (B, T, C), (B, T, D), (B, T, 2))))


def logits_form(shapes: HeadShapes, head: str) -> str:
    """Which of SHAPE_FORMS the head's logits, as measured on the batch, have; an error unless exactly one fits."""
    measured = shapes.shape(head, LOGITS[head])
    fits = [form for form, shape in shape_forms(shapes, head).items() if shape == measured]
    if len(fits) != 1:
        raise ValueError(f"{head}: logits {measured} fit {len(fits)} of the forms {shape_forms(shapes, head)}")
    return fits[0]


@dataclass
class TagLabels:
    tokens: list[str]
    labels: list[int]  # the grammar's tag at each word's first piece; -100 elsewhere


def tagging_labels(tokenizer, text: str) -> TagLabels:
    """The labels a tagging loss would get for this text, tags taken from the grammar's word lists."""
    words = tokenizer.split(text)
    enc = encode(tokenizer, "tagging", [Example(text, tags=tuple(tag_of(w) for w in words))])
    n = int((~enc.key_padding_mask[0]).sum())
    return TagLabels(enc.tokens[0][:n], enc.labels[0, :n].tolist())


@dataclass
class ShapeCheck:
    step: str
    typed: str
    expected: tuple[int, ...]
    read: tuple[int, ...] | None  # the typed answer as numbers; None if it could not be read
    correct: bool


def exercise_shapes(batch: int, length: int, d_model: int, vocab_size: int, n_masked: int) -> dict:
    """The exercise's answers, read from a throwaway model of exactly that size (masking.shape_exercise)."""
    steps = dict(shape_exercise(batch, length, d_model, vocab_size, n_masked).shape_steps())
    return {name: steps[name] for name in EXERCISE_STEPS}


def check_shapes(typed: dict[str, str], expected: dict[str, tuple[int, ...]]) -> list[ShapeCheck]:
    """Each typed shape against the computed one; "(8, 20, 48)", "8x20x48" and "[8,20,48]" all read."""
    from ..quiz.base import parse_int_tuple  # here, not at the top: the quiz package imports this module

    out = []
    for step in EXERCISE_STEPS:
        raw = typed.get(step, "") or ""
        read = parse_int_tuple(raw)
        out.append(ShapeCheck(step, raw, expected[step], read, read == expected[step]))
    return out


# ---- predictions of a trained head -------------------------------------------------------------------

# A head trained on the grammar's tasks has met only the grammar's words, in its sentence shapes. On
# anything else it still answers, often with a high probability: an answer is flagged as a guess when
# the text holds words the task's training data never used, or when the head's probability for its
# answer is below CONFIDENT.
CONFIDENT = 0.8


@lru_cache(maxsize=16)
def task_words(task: str, seed: int = 0) -> frozenset[str]:
    """Every word (and punctuation mark) of the task's training texts: all the head ever read."""
    words: set[str] = set()
    for ex in make_task(task, seed).train:
        for text in (ex.text_a, ex.text_b):
            if text:
                words.update(text.lower().split())
    return frozenset(words)


def unseen_words(tokenizer, task: str, seed: int, *texts: str | None) -> list[str]:
    """The words of the student's texts that the task's training data never used, each once, in order."""
    known = task_words(task, seed)
    out: list[str] = []
    for text in texts:
        for word in tokenizer.split(text or ""):
            w = word.lower()
            if w not in known and w not in out:
                out.append(w)
    return out


def is_guess(unseen: list[str], confidence: float) -> bool:
    """Outside what the head was trained on (unseen words), or unsure of its own answer."""
    return bool(unseen) or confidence < CONFIDENT


@dataclass
class ClassPrediction:
    tokens: list[str]
    unknown: list[str]
    truncated: int
    labels: tuple[str, ...]
    probabilities: list[float]  # softmax over the classes, sums to 1
    unseen: list[str] = field(default_factory=list)  # words the task's training data never used

    @property
    def best(self) -> str:
        return self.labels[max(range(len(self.labels)), key=self.probabilities.__getitem__)]

    @property
    def confidence(self) -> float:
        """The probability of the class the head chose."""
        return max(self.probabilities)

    @property
    def guess(self) -> bool:
        return is_guess(self.unseen, self.confidence)


def _encode(tokenizer, a: str, b: str | None = None):
    enc = tokenizer.encode(a, b, max_length=MAX_LENGTH, truncate=True)
    return enc, torch.tensor([enc.ids]), torch.tensor([enc.segments]), torch.zeros(1, len(enc), dtype=torch.bool)


@torch.inference_mode()
def classify(run: FineTuneRun, tokenizer, text_a: str, text_b: str | None = None) -> ClassPrediction:
    enc, ids, segs, mask = _encode(tokenizer, text_a, text_b)
    probs = torch.softmax(run.model(ids, segs, mask)[0], -1)
    unseen = unseen_words(tokenizer, run.task, run.seed, text_a, text_b)
    return ClassPrediction(enc.tokens, enc.unknown, enc.truncated, run.labels, probs.tolist(), unseen)


@dataclass
class TagPrediction:
    tokens: list[str]
    unknown: list[str]
    truncated: int
    words: list[str]  # as typed
    pieces: list[list[str]]
    tags: list[str]  # one per word, read at its first piece
    confidence: list[float]  # the chosen tag's probability
    seen: list[bool] = field(default_factory=list)  # per word: did the task's training data use it?

    @property
    def unseen(self) -> list[str]:
        return list(dict.fromkeys(w.lower() for w, s in zip(self.words, self.seen) if not s))

    @property
    def guessed(self) -> list[bool]:
        """Per word: a guess (a word the tagger never met, or a tag it gives below CONFIDENT)."""
        return [not s or c < CONFIDENT for s, c in zip(self.seen, self.confidence)]

    @property
    def guess(self) -> bool:
        return any(self.guessed)


@torch.inference_mode()
def tag_words(run: FineTuneRun, tokenizer, text: str) -> TagPrediction:
    enc, ids, segs, mask = _encode(tokenizer, text)
    probs = torch.softmax(run.model(ids, segs, mask)[0], -1)  # (T, n_tags)
    split = tokenizer.split_words(text)
    firsts = [p for p in first_pieces(tokenizer, text) if p < len(enc) - 1]  # words cut off by truncation drop out
    best = probs[firsts].max(-1)
    words = [w for w, _ in split[: len(firsts)]]
    known = task_words(run.task, run.seed)
    return TagPrediction(
        enc.tokens,
        enc.unknown,
        enc.truncated,
        words,
        [p for _, p in split[: len(firsts)]],
        [run.labels[int(i)] for i in best.indices],
        best.values.tolist(),
        [w.lower() in known for w in words],
    )


@dataclass
class SpanPrediction:
    question_tokens: list[str]
    passage_tokens: list[str]
    start_probs: list[float]  # over the passage's tokens only: sums to 1
    end_probs: list[float]
    start: int  # index into passage_tokens
    end: int  # >= start
    unknown: list[str]
    truncated: int
    missing_words: list[str]  # question words naming something the passage never mentions
    unseen: list[str] = field(default_factory=list)  # words of the question or passage the training data never used

    @property
    def answer(self) -> str:
        return " ".join(self.passage_tokens[self.start : self.end + 1]).replace(" ##", "")

    @property
    def confidence(self) -> float:
        """The chosen span's probability: its start's times its end's."""
        return self.start_probs[self.start] * self.end_probs[self.end]

    @property
    def guess(self) -> bool:
        return bool(self.missing_words) or is_guess(self.unseen, self.confidence)


QUESTION_WORDS = frozenset(("where", "who", "what", "did", "was", "is", "the", "a", "an", "?", "which", "when"))


@torch.inference_mode()
def answer_span(run: FineTuneRun, tokenizer, question: str, passage: str) -> SpanPrediction:
    """The trained span head's best span of the passage (end >= start), with its start and end distributions."""
    enc, ids, segs, mask = _encode(tokenizer, question, passage)
    inside = passage_mask(segs, mask)
    if not bool(inside.any()):
        raise ValueError("the passage is empty: there is no span to choose from")
    logits = run.model(ids, segs, mask, inside)  # (1, T, 2), -inf outside the passage
    s, e = best_spans(logits)[0].tolist()
    where = inside[0].nonzero().flatten()
    lo = int(where[0])
    start_p = torch.softmax(logits[0, where, 0], -1)
    end_p = torch.softmax(logits[0, where, 1], -1)
    passage_words = {w.lower() for w in tokenizer.split(passage)}
    asked = [w.lower() for w in tokenizer.split(question)]
    verbs = set(BASE_FORM.values()) | {w for w, tag in TAG_OF.items() if tag == "verb"}
    missing = [w for w in asked if w.isalpha() and w not in QUESTION_WORDS | verbs | passage_words]
    return SpanPrediction(
        enc.tokens[1 : enc.segments.index(1) - 1],
        [enc.tokens[int(i)] for i in where],
        start_p.tolist(),
        end_p.tolist(),
        s - lo,
        e - lo,
        enc.unknown,
        enc.truncated,
        missing,
        unseen_words(tokenizer, run.task, run.seed, question, passage),
    )


# ---- three starting points, and pooling -----------------------------------------------------------------


@dataclass
class StartComparison:
    task: str
    steps: int
    held_out: dict[str, float]  # start -> held-out score
    early_loss: dict[str, float]  # mean loss over the first tenth of the steps
    final_loss: dict[str, float]  # mean loss over the last tenth
    baseline: float
    n_train: int

    @property
    def pretraining_gain(self) -> float:
        """Held-out score of the pre-trained model fine-tuned end to end, minus the same from random weights."""
        return self.held_out["finetune"] - self.held_out["scratch"]

    @property
    def buys_little(self) -> bool:
        return self.pretraining_gain < 0.05


# Which scores higher on held-out data: the frozen pre-trained encoder with a trained head (a linear
# probe), or the same architecture trained end to end from random weights? Within SAME_MARGIN (2 points
# of accuracy or exact match): about the same. Scores differ slightly between CPUs, so the answer is
# always read from the runs the page just made.
PROBE_OUTCOMES = ("frozen", "scratch", "same")
SAME_MARGIN = 0.02


def probe_or_scratch(cmp: StartComparison, margin: float = SAME_MARGIN) -> str:
    """One of PROBE_OUTCOMES: which of the frozen probe and random weights wins on held-out data."""
    gap = cmp.held_out["frozen"] - cmp.held_out["scratch"]
    if abs(gap) <= margin + 1e-9:  # a gap of exactly the margin, up to float rounding, is within it
        return "same"
    return "frozen" if gap > 0 else "scratch"


def compare_starts(runs: dict[str, FineTuneRun]) -> StartComparison:
    if set(runs) != set(STARTS):
        raise ValueError(f"need one run per starting point {STARTS}, got {sorted(runs)}")
    steps = {r.steps for r in runs.values()} | {r.task for r in runs.values()}
    if len(steps) != 2:
        raise ValueError("the runs must share one task and one number of steps")
    first = next(iter(runs.values()))
    k = max(1, first.steps // 10)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return StartComparison(
        first.task,
        first.steps,
        {s: r.held_out for s, r in runs.items()},
        {s: mean(r.losses[:k]) for s, r in runs.items()},
        {s: mean(r.losses[-k:]) for s, r in runs.items()},
        first.baseline,
        first.n_train,
    )


# Pairs written for this lesson: a sentence, a paraphrase of it, and a sentence that shares most of
# its words but means something else.
PARAPHRASES = (
    ("the cat sat on the mat", "a cat was sitting on the rug", "the cat chased the dog off the mat"),
    ("she bought a new car yesterday", "yesterday she purchased a new vehicle", "she sold her old car yesterday"),
    (
        "the meeting was cancelled because of the storm",
        "the storm led them to call off the meeting",
        "the storm started after the meeting",
    ),
    ("he is learning to play the piano", "he is taking piano lessons", "he is learning to fix the piano"),
    ("the children are playing in the park", "kids are having fun in the park", "the children are leaving the park"),
    (
        "the restaurant was too expensive for us",
        "we could not afford that restaurant",
        "the restaurant was too far from us",
    ),
    (
        "my phone battery died this morning",
        "my phone ran out of charge this morning",
        "my phone was stolen this morning",
    ),
    ("the train arrived late again", "once more the train was delayed", "the train left early again"),
    ("she won the chess tournament", "she came first in the chess competition", "she lost the chess tournament"),
    ("the river flooded the village", "the village was flooded by the river", "the village is next to the river"),
    ("it is raining heavily outside", "there is a downpour outside", "it stopped raining outside"),
    ("the doctor told him to rest", "his doctor advised him to take it easy", "he told the doctor to rest"),
)
PAIR_KINDS = ("paraphrase", "same words, other meaning", "unrelated")


@dataclass
class PoolingRanking:
    pairs: list[tuple[str, str, str]]  # (sentence, other sentence, kind)
    cosine: dict[str, list[float]]  # pooling ("cls", "mean") -> one cosine per pair
    rank_accuracy: dict[str, float]  # fraction of (paraphrase pair, other pair) orderings put right
    retrieval_top1: dict[str, float]  # each sentence's own paraphrase ranked first among all the paraphrases
    beats_same_words: dict[str, float]  # each sentence's paraphrase closer than its same-words, other-meaning pair


def pooling_pairs(triples=PARAPHRASES) -> list[tuple[str, str, str]]:
    n = len(triples)
    return (
        [(a, p, PAIR_KINDS[0]) for a, p, _ in triples]
        + [(a, d, PAIR_KINDS[1]) for a, _, d in triples]
        + [(triples[i][0], triples[(i + 1) % n][1], PAIR_KINDS[2]) for i in range(n)]
    )


def rank_accuracy(cosines: list[float], kinds: list[str]) -> float:
    """Of every (paraphrase pair, non-paraphrase pair) combination, the fraction where the paraphrase scores higher."""
    pos = [c for c, k in zip(cosines, kinds) if k == PAIR_KINDS[0]]
    neg = [c for c, k in zip(cosines, kinds) if k != PAIR_KINDS[0]]
    return sum(p > q for p in pos for q in neg) / (len(pos) * len(neg))


@torch.inference_mode()
def pooling_ranking(pretrained, triples=PARAPHRASES) -> PoolingRanking:
    """Raw [CLS] vectors against mean pooling (what all-MiniLM-L6-v2 was trained with) as sentence vectors."""
    tok = pretrained.tokenizer
    texts = list(dict.fromkeys(s for t in triples for s in t))
    batch = tok.pad([tok.encode(t, max_length=MAX_LENGTH, truncate=True) for t in texts])
    hidden = pretrained.model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False).hidden
    vectors = {"cls": cls_pool(hidden), "mean": mean_pool(hidden, batch.key_padding_mask)}
    index = {t: i for i, t in enumerate(texts)}
    pairs = pooling_pairs(triples)
    kinds = [k for _, _, k in pairs]
    cosine, ranked, top1, beats = {}, {}, {}, {}
    for name, v in vectors.items():
        unit = torch.nn.functional.normalize(v, dim=-1)
        cosine[name] = [float(unit[index[a]] @ unit[index[b]]) for a, b, _ in pairs]
        ranked[name] = rank_accuracy(cosine[name], kinds)
        anchors = unit[[index[a] for a, _, _ in triples]]
        paraphrases = unit[[index[p] for _, p, _ in triples]]
        top1[name] = float(((anchors @ paraphrases.T).argmax(-1) == torch.arange(len(triples))).float().mean())
        n = len(triples)
        beats[name] = sum(p > q for p, q in zip(cosine[name][:n], cosine[name][n : 2 * n])) / n
    return PoolingRanking(pairs, cosine, ranked, top1, beats)


# ---- which sentence is closest to the student's: mean-pooled all-MiniLM-L6-v2 ------------------------------

# Everyday sentences on many topics, written for this question; none of them is among PARAPHRASES (whose
# cosines the pooling section shows), so nothing drawn there answers the question.
CLOSEST_CANDIDATES = (
    "the puppy looked sad and lonely",
    "a kitten chased a ball of wool",
    "we cooked pasta for dinner",
    "the bakery sells fresh bread every morning",
    "a storm brought heavy rain and wind",
    "the sun is shining on the beach",
    "the bus to the airport was delayed",
    "he drove his new truck to work",
    "our team won the football match",
    "she practises the violin every day",
    "the nurse gave him some medicine",
    "the students are studying for their exams",
    "my laptop stopped working again",
    "they bought a small house by the lake",
    "the shop was closed on sunday",
    "grandmother told the children a story",
    "the garden is full of flowers",
    "the police caught the thief",
    "the kids ran around the playground",
    "he reads a novel before bed",
)
# The closest candidate is asked about only when it beats every other option offered by CLOSEST_MARGIN in
# cosine (candidates nearer than that to it are left out: no coin toss), and only when its own cosine is at
# least CLOSEST_RELATED: below that, on this model, no candidate is about what the sentence is about.
CLOSEST_MARGIN = 0.1
CLOSEST_RELATED = 0.25
CLOSEST_OPTIONS = 4


@dataclass(frozen=True)
class ClosestSentence:
    sentence: str
    options: tuple[str, ...]  # the closest candidate first, then the closest of those trailing it by the margin
    cosine: dict[str, tuple[float, ...]]  # pooling ("mean", "cls") -> per option, its cosine with the sentence
    shared: tuple[tuple[str, ...], ...]  # per option: the words it shares with the sentence, in its order
    left_out: tuple[str, ...] = ()  # candidates within the margin of the closest: not offered
    answer: int = 0  # the option whose mean-pooled vector is closest

    @property
    def gap(self) -> float:
        """How far the closest option's mean-pooled cosine is ahead of the next option's."""
        mean = self.cosine["mean"]
        return mean[self.answer] - max(c for i, c in enumerate(mean) if i != self.answer)


def shared_words(text: str, other: str) -> tuple[str, ...]:
    """The words of `other` that `text` also has, each once, in other's order (case ignored)."""
    mine = set(text.lower().split())
    return tuple(dict.fromkeys(w for w in other.lower().split() if w in mine and w.isalpha()))


def closest_sentence(
    pretrained,
    sentence: str,
    candidates=CLOSEST_CANDIDATES,
    *,
    margin: float = CLOSEST_MARGIN,
    related: float = CLOSEST_RELATED,
    n_options: int = CLOSEST_OPTIONS,
) -> ClosestSentence | None:
    """Which candidate's mean-pooled vector is closest (cosine) to the sentence's, with the options to offer:
    the closest, then the next closest of those at least `margin` behind it. None when the closest is below
    `related`, or fewer than two options are left (no fair question on this sentence)."""
    from ..pretrained.minilm import sentence_embeddings  # here: the lesson runs without MiniLM installed

    pool = [c for c in candidates if c.strip().lower() != sentence.strip().lower()]
    vectors = {p: sentence_embeddings(pretrained, [sentence, *pool], pooling=p) for p in ("mean", "cls")}
    cosine = {p: (v[1:] @ v[0]).tolist() for p, v in vectors.items()}
    order = sorted(range(len(pool)), key=lambda i: -cosine["mean"][i])
    best = order[0]
    if cosine["mean"][best] < related:
        return None
    trailing = [i for i in order[1:] if cosine["mean"][i] <= cosine["mean"][best] - margin]
    picked = [best, *trailing[: n_options - 1]]
    if len(picked) < 2:
        return None
    return ClosestSentence(
        sentence,
        tuple(pool[i] for i in picked),
        {p: tuple(cosine[p][i] for i in picked) for p in cosine},
        tuple(shared_words(sentence, pool[i]) for i in picked),
        tuple(pool[i] for i in order[1:] if cosine["mean"][i] > cosine["mean"][best] - margin),
    )


def closest_for_any(pretrained, texts) -> ClosestSentence | None:
    """closest_sentence of the first text that allows a fair question (texts: the student's, in order)."""
    for text in dict.fromkeys(t for t in texts if t and t.strip()):
        found = closest_sentence(pretrained, text)
        if found is not None:
            return found
    return None


# ---- a probe on frozen features: pre-trained against random weights -----------------------------------------


@torch.inference_mode()
def word_vectors(encoder, tokenizer, words, template: str = "the {} was there") -> torch.Tensor:
    """Each word's final vector (its first piece's), read in the template sentence: (n, D), unit length."""
    out = []
    for word in words:
        enc = tokenizer.encode(template.format(word))
        first = len(tokenizer.encode(template.split("{}")[0]).ids) - 1  # after [CLS] and the words before it
        out.append(encoder(torch.tensor([enc.ids]), need_weights=False).hidden[0, first])
    return torch.nn.functional.normalize(torch.stack(out), dim=-1)


def centroid_probe(encoder, tokenizer, train: dict[str, str], test: dict[str, str]) -> float:
    """A probe on frozen vectors: the mean vector of each label's training words; a held-out word gets the label
    whose mean is nearest (cosine). Its held-out accuracy, over the test words ({word: label})."""
    labels = sorted(set(train.values()))
    vectors = word_vectors(encoder, tokenizer, list(train))
    means = torch.stack([vectors[[v == lab for v in train.values()]].mean(0) for lab in labels])
    means = torch.nn.functional.normalize(means, dim=-1)
    guessed = (word_vectors(encoder, tokenizer, list(test)) @ means.T).argmax(-1).tolist()
    return sum(labels[g] == lab for g, lab in zip(guessed, test.values())) / len(test)
