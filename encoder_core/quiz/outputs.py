"""Questions for the outputs lesson: head shapes, -100 tag labels, span decoding, pooling, baselines."""

from __future__ import annotations

import random

import torch

from ..finetune.tasks import TAG_OF, TAGS, TaskModel, best_spans, make_task
from ..lessons.outputs import centroid_probe, tagging_labels
from ..model.config import EncoderConfig
from ..model.model import build_encoder
from ..model.output_heads import mean_pool
from ..objectives.mlm_masking import IGNORE_INDEX
from .base import Mistake, Question, count_of, fmt_list, generator, sentence, signed_sum, small_model, tokenizer
from .forms import choice_question, count_question, numeric_question, position_question
from .inside import lab_mlm

# Sentences ending in a word BERT's vocabulary cuts into two or more pieces, for the tagging questions.
SPLIT_ENDINGS = (
    "slept on the doormat",
    "washed the teapot",
    "walked along the footpath",
    "made a snowman",
    "sat in the playroom",
    "looked at the bookshelf",
    "sat in the rowboat",
)
HEAD_NAMES = {"sentence": "sentence-classification head on [CLS]", "tagging": "token-classification (tagging) head"}


@generator("outputs", idea="head-output-shape")
def outputs_head_shape(r: random.Random, g: torch.Generator) -> Question:
    task = r.choice(("sentence", "tagging", "qa"))
    B, T, D = r.randint(2, 8), r.randint(5, 16), r.choice((8, 16, 32))
    C = r.randint(2, 9) if task != "qa" else 2
    config = EncoderConfig(vocab_size=50, max_positions=T, d_model=D, n_heads=2, n_layers=1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(r.getrandbits(31))
        model = TaskModel(build_encoder(config), task, C).eval()
    ids = torch.randint(5, 50, (B, T), generator=g)
    segments = torch.zeros_like(ids)
    segments[:, T // 2 :] = 1
    mask = torch.zeros(B, T, dtype=torch.bool)
    passage = (segments == 1) if task == "qa" else None
    with torch.inference_mode():
        shape = tuple(model(ids, segments, mask, passage).shape)
    head = HEAD_NAMES.get(task, "span (extractive QA) head: a start and an end score per token")
    what = f"{C} classes" if task == "sentence" else f"{C} tags" if task == "tagging" else "start and end"
    return Question(
        kind="exact",
        prompt=(
            f"An encoder of width D = {D} reads a batch of B = {B} sequences of T = {T} tokens. On top sits a "
            f"{head} ({what}). What is the shape of the head's output? Answer like (2, 3)."
        ),
        answer=str(shape),
        mistakes=(
            Mistake(str((B, T, D)), "That is the encoder's output, before the head."),
            Mistake(str((B, C)) if task != "sentence" else str((B, T, C)), "That is another head's shape."),
            Mistake(str((B, D)), "That is the pooled [CLS] vector, the head's input, not its output."),
        ),
        explanation=(
            f"Computed by running a model of exactly that size: the encoder gives (B, T, D) = {(B, T, D)}. "
            + (
                f"The sentence head reads position 0 only, (B, D) = {(B, D)}, and maps it to {C} scores: {shape}."
                if task == "sentence"
                else f"The tagging head maps every token's vector to {C} scores: {shape}."
                if task == "tagging"
                else f"The span head maps every token's vector to two scores, start and end: {shape}."
            )
        ),
        inputs={"task": task, "B": B, "T": T, "D": D, "C": C},
    )


@generator("outputs")
def outputs_scored_positions(r: random.Random, g: torch.Generator) -> Question:
    adjective = r.choice(("", "old ", "little ", "happy ", "tired "))
    text = (
        f"the {adjective}{r.choice(('boy', 'girl', 'teacher', 'farmer', 'king', 'mother'))} {r.choice(SPLIT_ENDINGS)}"
    )
    words = text.split()
    labelled = tagging_labels(tokenizer(), text)
    n_tokens = len(labelled.tokens)
    scored = sum(v != IGNORE_INDEX for v in labelled.labels)
    return count_question(
        prompt=(
            f"A tagging model reads '{text}' with BERT's WordPiece vocabulary, [CLS] in front and [SEP] at the end: "
            f"{' '.join(labelled.tokens)}. Labels are -100 at [CLS], [SEP] and at every piece after a word's first. "
            "How many positions carry a real tag (not -100)? (a whole number)"
        ),
        answer=scored,
        mistakes=(
            Mistake(n_tokens, "That counts every position, [CLS] and [SEP] included."),
            Mistake(n_tokens - 2, "That counts every word piece: the pieces after a word's first are -100."),
        ),
        explanation=(
            f"{n_tokens} tokens; minus [CLS] and [SEP] leaves {n_tokens - 2} pieces; only each word's first piece is "
            f"scored, one per word: {scored} (the {len(words)} words)."
        ),
        inputs={"text": text},
    )


def _passage_logits(r: random.Random, g: torch.Generator, n: int) -> torch.Tensor:
    """(n, 2) start/end logits with one decimal, drawn until the separate maxima give end < start."""
    for _ in range(200):
        logits = torch.round(torch.randn(n, 2, generator=g) * 20) / 10
        if int(logits[:, 1].argmax()) < int(logits[:, 0].argmax()):
            return logits
    return logits


@generator("outputs")
def outputs_span_decode(r: random.Random, g: torch.Generator) -> Question:
    tokens = "the cat sat on the mat and the dog slept on the sofa".split()[: r.randint(6, 9)]
    logits = _passage_logits(r, g, len(tokens))
    s, e = best_spans(logits[None], max_tokens=len(tokens))[0].tolist()
    naive = (int(logits[:, 0].argmax()), int(logits[:, 1].argmax()))
    rows = tuple((i, t, f"{float(a):.1f}", f"{float(b):.1f}") for i, (t, (a, b)) in enumerate(zip(tokens, logits)))
    return Question(
        kind="exact",
        prompt=(
            f"A span head scored every token of the passage '{' '.join(tokens)}' (positions counted from 0 in the "
            "passage). The answer is the "
            "pair (start, end) with the highest start score + end score, with end ≥ start. Which pair? Answer "
            "like (2, 3)."
        ),
        answer=str((s, e)),
        mistakes=(Mistake(str(naive), "That takes the best start and the best end separately: the end comes first."),),
        explanation=(
            f"The best start alone is {naive[0]} and the best end alone {naive[1]}, which ends before it starts. "
            f"Over all pairs with end ≥ start, ({s}, {e}) scores "
            f"{signed_sum([float(logits[s, 0]), float(logits[e, 1])], 1)} = {float(logits[s, 0] + logits[e, 1]):.1f}, "
            "the highest."
        ),
        table=(("position", "token", "start score", "end score"), rows),
        inputs={"tokens": tokens, "logits": logits.tolist()},
    )


@generator("outputs")
def outputs_start_probability(r: random.Random, g: torch.Generator) -> Question:
    question = "where did the cat sit ?".split()
    passage = "the cat sat on the mat".split()
    tokens = ["[CLS]", *question, "[SEP]", *passage, "[SEP]"]
    scores = torch.round(torch.randn(len(tokens), generator=g) * 15) / 10
    inside = torch.zeros(len(tokens), dtype=torch.bool)
    inside[len(question) + 2 : -1] = True
    pos = len(question) + 2 + r.randrange(len(passage))
    p_inside = torch.softmax(scores.masked_fill(~inside, float("-inf")), -1)
    p_all = torch.softmax(scores, -1)
    answer = float(p_inside[pos])
    rows = tuple((i, t, f"{float(v):.1f}") for i, (t, v) in enumerate(zip(tokens, scores)))
    return numeric_question(
        prompt=(
            "A span head gave these start scores to a question + passage input (positions counted from 0). "
            f"Start probabilities are a softmax "
            f"over the passage's tokens only (positions {len(question) + 2} to {len(tokens) - 2}). What is the start "
            f"probability of position {pos}, '{tokens[pos]}'?"
        ),
        answer=answer,
        mistakes=(Mistake(float(p_all[pos]), "That softmax ran over every token, question and specials included."),),
        explanation=(
            f"Exponentiate the passage's scores only and divide: e^{float(scores[pos]):.1f} / "
            f"{float(scores[inside].exp().sum()):.3f} = {answer:.3f}. Over all {len(tokens)} tokens it would be "
            f"{float(p_all[pos]):.3f}, but the question and the specials can never be the answer."
        ),
        table=(("position", "token", "start score"), rows),
        inputs={"scores": scores.tolist(), "position": pos, "passage": (len(question) + 2, len(tokens) - 2)},
    )


@generator("outputs")
def outputs_mean_pool(r: random.Random, g: torch.Generator) -> Question:
    n_real, n_pads = r.randint(2, 4), r.randint(1, 3)
    hidden = torch.round(torch.randn(n_real + n_pads, 2, generator=g) * 10) / 10
    mask = torch.tensor([[False] * n_real + [True] * n_pads])
    pooled = float(mean_pool(hidden[None], mask)[0, 0])
    with_pads = float(hidden[:, 0].mean())
    for _ in range(20):  # keep the answer away from 0 so two decimals read it
        if abs(pooled) >= 0.05:
            break
        hidden[0, 0] += 0.3
        pooled, with_pads = float(mean_pool(hidden[None], mask)[0, 0]), float(hidden[:, 0].mean())
    rows = tuple(
        (i, "[PAD]" if i >= n_real else "real", f"{float(hidden[i, 0]):.1f}", f"{float(hidden[i, 1]):.1f}")
        for i in range(n_real + n_pads)
    )
    return numeric_question(
        prompt=(
            f"The encoder's output for one padded row (D = 2) is in the table: {count_of(n_real, 'real token')}, "
            f"then {count_of(n_pads, 'pad')}. What is the first coordinate of its masked mean-pooled sentence "
            "vector?"
        ),
        answer=pooled,
        mistakes=(
            Mistake(with_pads, "That mean includes the pads: a masked mean divides by the real tokens only."),
            Mistake(float(hidden[0, 0]), "That is position 0, the [CLS] vector, not the mean."),
        ),
        explanation=(
            f"Average the first coordinate over the {n_real} real rows: {fmt_list(hidden[:n_real, 0], 1)} -> "
            f"{pooled:.3f}. With the pads it would be {with_pads:.3f}, and would change with the batch's width."
        ),
        table=(("position", "kind", "coordinate 1", "coordinate 2"), rows),
        inputs={"hidden": hidden.tolist(), "n_real": n_real},
    )


@generator("outputs")
def outputs_majority_baseline(r: random.Random, g: torch.Generator) -> Question:
    data = make_task("tagging", 0)
    picked = r.sample(range(len(data.held_out)), 3)
    examples = [data.held_out[i] for i in picked]
    tags = [t for ex in examples for t in ex.tags]
    other = tags.count(TAGS.index("other"))
    answer = other / len(tags)
    listed = "; ".join(f"'{ex.text_a}'" for ex in examples)
    return numeric_question(
        prompt=(
            f"A tagger labels each word person, animal, object, place, verb or other. 'other' (the, a, on, ...) is "
            f"the commonest tag. On these three held-out sentences, {listed}, what accuracy does the baseline that "
            "always answers 'other' get, over the words? Give it as a fraction, e.g. 0.5."
        ),
        answer=answer,
        mistakes=(Mistake(1 / len(TAGS), "That is a random guess among six tags, not the majority baseline."),),
        explanation=(
            f"{len(tags)} words, {other} of them tagged 'other' by the grammar's word lists: {other}/{len(tags)} = "
            f"{answer:.3f}. A trained head is only worth its training if it beats this."
        ),
        inputs={"held_out": picked, "texts": [ex.text_a for ex in examples]},
    )


@generator("outputs")
def outputs_probe_parameters(r: random.Random, g: torch.Generator) -> Question:
    task = r.choice(("sentence", "tagging", "qa"))
    D = r.choice((64, 128, 256, 384, 768))
    C = r.randint(2, 9) if task != "qa" else 2
    config = EncoderConfig(vocab_size=10, max_positions=4, d_model=D, n_heads=4, n_layers=1)
    with torch.random.fork_rng(devices=[]):  # the head's random init must not move the global stream
        model = TaskModel(build_encoder(config), task, C)
    n = sum(p.numel() for p in model.head.parameters())
    head = {"sentence": f"a {C}-class classifier on [CLS]", "tagging": f"a {C}-tag tagging head", "qa": "a span head"}
    return count_question(
        prompt=(
            f"A linear probe: the encoder (width {D}) is frozen and only {head[task]} learns"
            f"{' (a start and an end score per token)' if task == 'qa' else ''}. How many parameters learn? "
            "(a whole number)"
        ),
        answer=n,
        mistakes=(
            Mistake(D * C, "That forgets the biases: one per output."),
            Mistake(D, "That is one output's weights: there is one row of D weights per output."),
        ),
        explanation=(
            f"One linear layer from {D} to {C}: {D} x {C} weights + {C} biases = {n:,}. Counted from the head "
            "PyTorch builds. Everything below it stays as pre-trained."
        ),
        inputs={"task": task, "D": D, "C": C},
    )


@generator("outputs")
def outputs_segment_of(r: random.Random, g: torch.Generator) -> Question:
    a, b = sentence(r, r.randint(2, 5)), sentence(r, r.randint(2, 5))
    enc = tokenizer().encode(a, b)
    first_b = enc.segments.index(1)
    return position_question(
        kind="choice",
        prompt=(
            f"A sentence-pair input, positions counted from 0: {' '.join(enc.tokens)}. Segment ids are 0 for A and "
            "1 for B. Which is the first position with segment id 1?"
        ),
        tokens=enc.tokens,
        answer=first_b,
        mistakes=(
            (first_b - 1, "The [SEP] after A still belongs to segment A (0)."),
            (1, "Position 1 is A's first word: [CLS] and A are both segment 0."),
        ),
        explanation=(
            f"[CLS], sentence A and the first [SEP] are segment 0; sentence B and the last [SEP] are segment 1. "
            f"The segment ids read {''.join(str(s) for s in enc.segments)}: B starts at position {first_b}."
        ),
        inputs={"a": a, "b": b},
    )


PROBE_TAGS = ("person", "animal", "object", "place")
PROBE_CHOICES = {
    "pre-trained": "the lab's pre-trained MLM, frozen",
    "random": "the same architecture with random weights, frozen",
    "same": "about the same (within 10 points)",
}
PROBE_SAME = 0.1  # held-out accuracies within this count as about the same


@generator("outputs", idea="frozen-probe-vs-random")
def outputs_probe_features(r: random.Random, g: torch.Generator) -> Question:
    model, tok = lab_mlm()
    tags = sorted(r.sample(PROBE_TAGS, 2))
    words = sorted(w for w, t in TAG_OF.items() if t in tags and w in tok.token_to_id)
    r.shuffle(words)
    train = {w: TAG_OF[w] for w in words[: len(words) // 2]}
    test = {w: TAG_OF[w] for w in words[len(words) // 2 :]}
    if set(train.values()) != set(tags):  # both tags must be learnt: move one word of the missing tag over
        missing = next(w for w in test if test[w] not in train.values())
        train[missing] = test.pop(missing)
    seed = r.randint(0, 3)
    acc = {
        "pre-trained": centroid_probe(model.bert, tok, train, test),
        "random": centroid_probe(small_model(seed), tok, train, test),
    }
    gap = acc["pre-trained"] - acc["random"]
    answer = "same" if abs(gap) <= PROBE_SAME else "pre-trained" if gap > 0 else "random"
    wrong = {
        "pre-trained": "Pre-trained vectors are not always better: here they separate these tags no better.",
        "random": "Random vectors give each word a vector unrelated to its meaning: a word never trained on lands "
        "anywhere.",
        "same": f"The gap is {abs(gap) * 100:.0f} points: the starting weights decide what a frozen probe can read.",
    }
    shown = lambda ws: ", ".join(list(ws)[:6]) + (", ..." if len(ws) > 6 else "")  # noqa: E731
    return choice_question(
        r,
        prompt=(
            f"A probe learns on frozen vectors only: it keeps the mean vector of each tag's training words, and a "
            f"new word gets the tag whose mean is nearest. Each word is read in “the ___ was there”. It learns "
            f"{tags[0]} against {tags[1]} from {len(train)} words ({shown(train)}) and is tested on {len(test)} "
            f"words it never saw ({shown(test)}). Whose frozen vectors give the higher held-out accuracy?"
        ),
        correct=PROBE_CHOICES[answer],
        candidates=list(PROBE_CHOICES.values()),
        mistakes=tuple(Mistake(PROBE_CHOICES[k], v) for k, v in wrong.items() if k != answer),
        explanation=(
            f"Measured: {acc['pre-trained']:.0%} held-out accuracy on the pre-trained MLM's vectors, "
            f"{acc['random']:.0%} on random weights' (small model, seed {seed}). Masked-word training put words "
            "that are used alike close together, so a new word lands near its kind; random vectors hold no such "
            "thing. Trained end to end, random weights can learn it, but only from the task's own examples."
        ),
        inputs={"train": train, "test": test, "seed": seed, "accuracy": acc},
    )


@generator("outputs", idea="closest-pooled-sentence")
def outputs_closest_pooled(r: random.Random, g: torch.Generator) -> Question:
    names = ("A", "B", "C", "D")
    anchor = r.choice(names)
    others = [n for n in names if n != anchor]
    cos = torch.nn.functional.cosine_similarity
    for _ in range(100):  # a clear winner: its cosine ahead of the others by 0.05 at least
        vectors = {n: torch.round(torch.randn(r.randint(2, 4), 2, generator=g) * 10) / 10 for n in names}
        pooled = {n: v.mean(0) for n, v in vectors.items()}
        cosine = {n: float(cos(pooled[anchor], pooled[n], dim=0)) for n in others}
        ranked = sorted(cosine, key=cosine.get, reverse=True)
        if cosine[ranked[0]] - cosine[ranked[1]] >= 0.05 and float(pooled[anchor].norm()) > 0.1:
            break
    best = ranked[0]
    first = max(others, key=lambda n: float(cos(vectors[anchor][0], vectors[n][0], dim=0)))
    nearest = min(others, key=lambda n: float((pooled[n] - pooled[anchor]).norm()))
    rows = tuple(
        (n, i, f"{float(v[i, 0]):.1f}", f"{float(v[i, 1]):.1f}") for n, v in vectors.items() for i in range(len(v))
    )
    why = {first: "That compares position 0 (the [CLS] vector) only: mean pooling averages all."}
    why.setdefault(nearest, "That is the nearest by distance; cosine compares directions only.")
    mistakes = [
        Mistake(n, why.get(n, f"Its mean points further from {anchor}'s: cosine {cosine[n]:.3f}, not the highest."))
        for n in ranked[1:]
    ]
    return choice_question(
        r,
        prompt=(
            "An encoder's output vectors (D = 2) for four sentences are in the table, one row per token, positions "
            "counted from 0. Each sentence's vector is the mean of its tokens' vectors. Whose sentence vector is "
            f"closest to {anchor}'s by cosine similarity?"
        ),
        correct=best,
        candidates=others,
        mistakes=tuple(mistakes),
        explanation=(
            f"Means: {'; '.join(f'{n} {fmt_list(p, 2)}' for n, p in pooled.items())}. Cosine with {anchor}'s: "
            f"{', '.join(f'{n} {cosine[n]:.3f}' for n in others)}: {best} is closest. Sentence encoders such as "
            "all-MiniLM-L6-v2 are trained so that this cosine is high for sentences that mean the same."
        ),
        table=(("sentence", "position", "coordinate 1", "coordinate 2"), rows),
        inputs={"vectors": {n: v.tolist() for n, v in vectors.items()}, "anchor": anchor},
    )
