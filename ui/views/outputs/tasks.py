"""What the four task sections (sentence, pair, tagging, question answering) share: the task in words, what its head
covers, and when its answer is a guess."""

from __future__ import annotations

from encoder_core.finetune.tasks import BAD_MOODS, GOOD_MOODS, MAX_ANSWER_TOKENS, SITUATIONS, TAG_OF
from encoder_core.lessons.outputs import CONFIDENT, ClassPrediction, SpanPrediction, TagPrediction

TASK_TEXT = {
    "sentence": (
        "**The task.** Is the sentence's mood positive or negative? The grammar writes sentences like “the sad "
        "cat was happy” (positive: the predicate decides) and “the dog was not warm” (negative: *not* flips it), "
        "so no single word gives the answer away. The head is one linear layer on the [CLS] vector, (B, D) -> "
        "(B, 2), and the whole model is trained end to end at a small learning rate."
    ),
    "pair": (
        "**The task.** Two sentences in one input, `[CLS] A [SEP] B [SEP]`, segment 0 for A and 1 for B: does B "
        "follow from A? “the girl was hungry” -> “she ate the bread” follows; “she sang in the garden” does not. "
        "Every B is a sentence that does follow from *some* A, so the head has to read both segments."
    ),
    "tagging": (
        "**The task.** A tag for every word: person, animal, object, place, verb or other, taken from the grammar's "
        "word lists, so every answer is known. The head is a linear layer on *every* token, {shape}. "
        "Labels are −100 at [CLS], [SEP], pads and at the pieces after a word's first, so the loss reads each word "
        "once; a word cut into pieces is tagged at its first piece. On this grammar the task is nearly a word "
        "lookup, so even a frozen encoder does well."
    ),
    "qa": (
        "**The task.** Extractive question answering: the question is segment A, a two-clause passage segment B, "
        "and the answer is a span of the passage (“where did the cat sleep ?” -> “the mat”). The head gives every "
        "token a start score and an end score, {shape}; outside the passage they are −∞, so each "
        "softmax is a distribution over the passage. The answer is the span with the best start + end score, "
        f"end ≥ start, at most {MAX_ANSWER_TOKENS} tokens. **Exact match** counts an answer right only if both "
        "ends are."
    ),
}
TASK_SHAPES = {"tagging": "(B, T, D) -> (B, T, 6)", "qa": "(B, T, D) -> (B, T, 2)"}
SHAPE_HELD = "its output's shape held back until you answer the prediction in “The shapes”"


def task_text(task: str, shapes_shown: bool) -> str:
    """The task in words; the tagging and span heads' shapes only once the shape prediction is answered (they
    would answer it)."""
    return TASK_TEXT[task].replace("{shape}", TASK_SHAPES.get(task, "") if shapes_shown else SHAPE_HELD)


# What each toy task covers: the head has learned these and nothing else.
TASK_SCOPE = {
    "sentence": (
        "What this head knows: the grammar's mood sentences only, like “the old dog was not happy”: a person or "
        f"an animal, *was*, perhaps *not*, and one of {len(GOOD_MOODS + BAD_MOODS)} mood words "
        f"({', '.join(GOOD_MOODS + BAD_MOODS)})."
    ),
    "pair": (
        f"What this head knows: pairs built from {len(SITUATIONS)} situations only, like “the girl was hungry” → "
        "“she ate the bread” or “the boy went to the bank” → “he counted the money”."
    ),
    "tagging": (
        "What this head knows: the grammar's sentences only, tagged from its word lists (people, animals, objects, "
        f"places and verbs: {len(TAG_OF)} words); any other word is “other” to the grammar."
    ),
    "qa": (
        "What this head knows: two-clause passages like “the cat slept on the mat and the dog sat on the sofa”, "
        "with *where*, *who* and *what* questions about them only; it always picks a span, even when there is none."
    ),
}


def guess_text(pred: ClassPrediction | TagPrediction | SpanPrediction, escape) -> str | None:
    """When the head's answer is a guess outside its training: why, in one sentence; None when it is not."""
    if not pred.guess:
        return None
    if isinstance(pred, TagPrediction):
        why = [
            f"{escape(w)} ({'never seen in training' if not s else f'only {c:.0%} sure'})"
            for w, s, c, g in zip(pred.words, pred.seen, pred.confidence, pred.guessed)
            if g
        ]
        return (
            f"**The tags of {len(why)} word{'s' if len(why) > 1 else ''} are guesses**, outside what the head was "
            f"trained on: {', '.join(why[:12])}{' …' if len(why) > 12 else ''}. It must pick one of its six tags "
            "for every word; it has no way to say “I don't know”."
        )
    why = []
    if pred.unseen:
        shown = ", ".join(escape(w) for w in pred.unseen[:12]) + (" …" if len(pred.unseen) > 12 else "")
        why.append(f"words it never saw in training: {shown}")
    if pred.confidence < CONFIDENT:
        why.append(f"its probability for this answer is only {pred.confidence:.0%}")
    elif pred.unseen:
        why.append(f"its {pred.confidence:.0%} means little on input unlike its training")
    if isinstance(pred, SpanPrediction) and pred.missing_words and not why:
        why.append("the question asks about something the passage never mentions")
    return (
        "**Treat this answer as a guess**, outside what the head was trained on: "
        + "; ".join(why)
        + ". It must answer with one of its labels or spans; it has no way to say “I don't know”."
    )
