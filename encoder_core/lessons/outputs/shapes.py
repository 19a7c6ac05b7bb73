"""The shapes: what each head's logits look like, and the shape exercise."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from ...finetune.tasks import MAX_LENGTH, Example, TaskModel, encode, passage_mask, tag_of
from ...model.output_heads import cls_pool
from ...typed_input import parse_int_tuple
from ..masking import shape_exercise

SHAPE_EXERCISE = {"batch": 8, "length": 20, "d_model": 48, "vocab_size": 1000, "n_masked": 12}  # seed 004's "Try it"
EXERCISE_STEPS = ("hidden", "logits", "chosen_logits")
EXERCISE_LIMITS = {"batch": (1, 64), "length": (1, 128), "d_model": (4, 256), "vocab_size": (8, 5000)}


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
    out = []
    for step in EXERCISE_STEPS:
        raw = typed.get(step, "") or ""
        read = parse_int_tuple(raw)
        out.append(ShapeCheck(step, raw, expected[step], read, read == expected[step]))
    return out
