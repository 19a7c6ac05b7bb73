"""Questions for the masking lesson: 15% and 80/10/10, labels of -100, the loss and the MLM shapes, where the
loss is largest, and a word's rank at a [MASK]."""

from __future__ import annotations

import functools
import math
import random
from fractions import Fraction
from math import floor as floor_of

import torch

from ..model.config import EncoderConfig
from ..model.output_heads import MaskedLanguageModel
from ..objectives.loss import loss_breakdown
from ..objectives.mlm_masking import (
    IGNORE_INDEX,
    KEPT,
    MASKED,
    NOT_CHOSEN,
    RANDOM,
    MaskingResult,
    exact_counts,
    mask_tokens,
    round_half_up,
)
from .attention_inputs import drop_last_gaps, random_qkv
from .base import Mistake, Question, count_of, generator, sentence, tokenizer
from .forms import choice_question, count_question, numeric_question
from .inside import cloze_from, lab_mlm

ROUNDING = "Counts are rounded half up (2.5 → 3)"


def framed_ids(g: torch.Generator, B: int, T: int) -> torch.Tensor:
    """(B, T) ids: [CLS], then random ordinary words (never a special token), then [SEP]."""
    tok = tokenizer()
    words = torch.randint(len(tok.special_ids), tok.vocab_size, (B, T - 2), generator=g)
    return torch.cat([torch.full((B, 1), tok.cls_id), words, torch.full((B, 1), tok.sep_id)], dim=1)


def mask(ids: torch.Tensor, g: torch.Generator, rate: float = 0.15) -> MaskingResult:
    """mask_tokens with the quiz tokenizer's special tokens and vocabulary."""
    tok = tokenizer()
    return mask_tokens(
        ids, mask_id=tok.mask_id, special_ids=tok.special_ids, vocab_size=tok.vocab_size, rate=rate, generator=g
    )


@generator("masking")
def masking_chosen_count(r: random.Random, g: torch.Generator) -> Question:
    N = r.randint(10, 90)
    c = mask(framed_ids(g, 1, N), g).counts()
    mistakes = (
        Mistake(round_half_up(0.15 * N), "[CLS] and [SEP] were counted, but they are never chosen."),
        Mistake(floor_of(Fraction(15, 100) * c.eligible), "The count was rounded down; the rule rounds half up."),
        Mistake(round_half_up(0.15 * (N - 1)), "Only one of [CLS] and [SEP] was left out: neither may be chosen."),
        Mistake(c.masked, "That is how many become [MASK]; the chosen also include the random and kept ones."),
    )
    return count_question(
        prompt=(
            f"A single sentence is tokenized into {N} tokens, [CLS] and [SEP] included. The exact rule chooses 15% "
            f"of the positions that may be chosen. {ROUNDING}. How many positions are chosen? (a whole number)"
        ),
        answer=c.chosen,
        mistakes=mistakes,
        explanation=(
            f"[CLS] and [SEP] are never chosen, so {c.eligible} positions are eligible: 0.15 × {c.eligible} = "
            f"{0.15 * c.eligible:.2f} → {c.chosen}. Counting the two special tokens as well would give "
            f"0.15 × {N} = {0.15 * N:.2f} → {round_half_up(0.15 * N)}."
        ),
        inputs={"N": N},
    )


@generator("masking")
def masking_split(r: random.Random, g: torch.Generator) -> Question:
    n = 200 if r.random() < 0.15 else r.randint(20, 400)
    c = exact_counts(n)
    answer = f"({c.masked}, {c.random}, {c.kept})"
    all_masked = round_half_up(0.8 * n)  # 80/10/10 of all n tokens, as if every one were chosen
    all_random = min(round_half_up(0.1 * n), n - all_masked)
    floor_masked = floor_of(Fraction(8, 10) * c.chosen)
    floor_random = min(floor_of(Fraction(1, 10) * c.chosen), c.chosen - floor_masked)
    mistakes = (
        Mistake(
            f"({all_masked}, {all_random}, {n - all_masked - all_random})",
            f"80/10/10 was applied to all {n} tokens; it applies to the 15% chosen.",
        ),
        Mistake(
            f"({floor_masked}, {floor_random}, {c.chosen - floor_masked - floor_random})",
            "The counts were rounded down; the rule rounds half up.",
        ),
        Mistake(
            f"({c.masked}, {c.chosen - c.masked}, 0)",
            "The kept 10% were forgotten: the rest after [MASK] and random stay unchanged, and they are chosen too.",
        ),
    )
    return Question(
        kind="exact",
        prompt=(
            f"A sequence has {n} eligible tokens (special tokens already left out). 15% are chosen; of the chosen "
            "ones 80% become [MASK], 10% a random token, and the rest stay as they are. "
            f"{ROUNDING}; the random count is capped so the three add up. Give three whole numbers: "
            "[MASK], random, kept (for example 8, 1, 1)."
        ),
        answer=answer,
        mistakes=mistakes,
        explanation=(
            f"Chosen: 0.15 × {n} = {0.15 * n:.2f} → {c.chosen}. [MASK]: 0.8 × {c.chosen} = {0.8 * c.chosen:.2f} → "
            f"{c.masked}. Random: 0.1 × {c.chosen} = {0.1 * c.chosen:.2f} → {c.random}. Kept: the rest, "
            f"{c.chosen} − {c.masked} − {c.random} = {c.kept}. All {c.chosen} chosen positions carry a loss, the "
            "kept ones too."
        ),
        inputs={"n": n},
    )


@generator("masking")
def masking_never_chosen(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    variant = r.choice(["single", "pair", "padded"])
    a = sentence(r, r.randint(3, 6))
    if variant == "pair":
        b = sentence(r, r.randint(2, 5))
        enc = tok.encode(a, b)
        batch = tok.pad([enc])
        shown = f"the sentence pair '{a}' + '{b}'"
    else:
        enc = tok.encode(a)
        batch = tok.pad([enc], extra_pads=r.randint(2, 4) if variant == "padded" else 0)
        shown = f"'{a}'" + (" padded at the end" if variant == "padded" else "")
    # rate 1.0: every position that may be chosen is chosen, so what is left never can be
    result = mask(batch.ids, g, rate=1.0)
    tokens = batch.tokens[0]
    left = sorted(tokens[i] for i in range(len(tokens)) if not bool(result.chosen[0, i]))
    n_pad = tokens.count("[PAD]")
    claims = {  # each statement and the tokens it says are left
        "[CLS] and every [SEP] (and any [PAD]): the special tokens": sorted(
            ["[CLS]"] + ["[SEP]"] * tokens.count("[SEP]") + ["[PAD]"] * n_pad
        ),
        "Only [CLS]: it stands for the whole input": ["[CLS]"],
        "Only the [PAD] tokens": ["[PAD]"] * n_pad if n_pad else ["[PAD]"],
        "None: with a rate of 100% every position is chosen": [],
        "The first and the last word": sorted([tokens[1], tokens[enc.tokens.index("[SEP]") - 1]]),
    }
    if variant == "pair":
        claims["[CLS] and the first [SEP] only"] = ["[CLS]", "[SEP]"]
    correct = next(text for text, expected in claims.items() if expected == left)
    mistakes = (
        Mistake(
            "None: with a rate of 100% every position is chosen",
            "The rate applies to the eligible positions only; special tokens are never eligible.",
        ),
        Mistake(
            "Only [CLS]: it stands for the whole input", "[SEP] and [PAD] are special tokens too: none is ever chosen."
        ),
    )
    return choice_question(
        r,
        prompt=f"Masking is run on {shown} with the rate turned up to 100%. Which positions are still not chosen?",
        correct=correct,
        candidates=[m.answer for m in mistakes] + list(claims),
        n=5,
        mistakes=mistakes,
        explanation=(
            f"The model saw {' '.join(tokens)}. Left unchosen: {', '.join(left) or 'nothing'}. [CLS], [SEP] and "
            "[PAD] are never eligible: they are the same in every input, so predicting them teaches nothing, and a "
            "pad is not text at all."
        ),
        inputs={"tokens": tokens},
    )


@generator("masking")
def masking_loss_value(r: random.Random, g: torch.Generator) -> Question:
    T, V, n = r.randint(6, 8), r.randint(6, 10), r.randint(2, 3)
    logits = torch.randn(1, T, V, generator=g, dtype=torch.float64) * 1.5
    targets = torch.randint(0, V, (1, T), generator=g)
    chosen = sorted(r.sample(range(1, T - 1), n))
    labels = torch.full_like(targets, IGNORE_INDEX)
    labels[0, chosen] = targets[0, chosen]
    loss = loss_breakdown(logits, labels)
    every = loss_breakdown(logits, targets)  # as if every position had a label
    ce = [round(float(x), 3) for x in every.per_position[0]]
    rows = tuple((t, "yes" if t in chosen else "no", ce[t]) for t in range(T))
    return numeric_question(
        prompt=(
            f"A sequence of {T} positions has {n} chosen (masked) ones. The table gives the cross-entropy the model "
            "scores at every position against its original token. What MLM loss does "
            "F.cross_entropy(logits, labels) report, with −100 labels at the positions not chosen?"
        ),
        answer=loss.mean,
        mistakes=(
            Mistake(float(every.per_position.mean()), "All positions were averaged; a −100 label drops a position."),
            Mistake(
                loss.wrong_mean_all_positions,
                f"The chosen sum was divided by all {T} positions; the mean is over the {n} counted ones.",
            ),
            Mistake(float(loss.per_position.sum()), "That is the sum; F.cross_entropy reports the mean."),
        ),
        table=(("position", "chosen", "cross-entropy"), rows),
        explanation=(
            f"Only the {loss.n_counted} chosen positions count: ({' + '.join(f'{ce[t]:.3f}' for t in chosen)}) / "
            f"{loss.n_counted} = {loss.mean:.3f}. Averaging all {T} positions would give "
            f"{float(every.per_position.mean()):.3f}, and dividing the chosen sum by {T} would give "
            f"{loss.wrong_mean_all_positions:.3f}: both let positions with no answer to learn dilute the signal."
        ),
        inputs={"chosen": chosen, "cross_entropy": [float(x) for x in every.per_position[0]]},
    )


@generator("masking")
def masking_loss_denominator(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    B, T = r.randint(1, 3), r.randint(8, 16)
    result = mask(framed_ids(g, B, T), g, rate=0.25)
    logits = torch.randn(B, T, tok.vocab_size, generator=g)
    loss = loss_breakdown(logits, result.labels)
    V = tok.vocab_size
    n = loss.n_counted
    counts = {
        f"the {n} chosen positions (label not −100)": n,
        f"all {B * T} positions in the batch": B * T,
        f"the {B * (T - 2)} positions other than [CLS] and [SEP]": B * (T - 2),
        f"the {B * T - n} positions labelled −100": B * T - n,
        f"all {B * T} × {V:,} = {B * T * V:,} logits": B * T * V,
    }
    total = float(loss.per_position.sum())
    correct = next(text for text, c in counts.items() if abs(total / c - loss.mean) < 1e-9)
    texts = list(counts)
    mistakes = (
        Mistake(texts[1], "A −100 label removes a position from the count as well as from the sum."),
        Mistake(texts[2], "[CLS] and [SEP] are out, but so is every word that was not chosen (label −100)."),
    )
    return choice_question(
        r,
        prompt=(
            f"A batch of {count_of(B, 'sequence')} of {T} tokens, vocabulary {V:,}; {n} positions were chosen for "
            "the MLM loss and all the others are labelled −100. F.cross_entropy with its default ignore_index "
            "averages over…"
        ),
        correct=correct,
        candidates=counts,
        mistakes=mistakes,
        explanation=(
            f"Summed cross-entropy at the counted positions: {total:.3f}. The reported loss is {loss.mean:.3f} = "
            f"{total:.3f} / {n}: a −100 label drops that position from both the sum and the count. Dividing by all "
            f"{B * T} positions would give {loss.wrong_mean_all_positions:.3f}."
        ),
        inputs={"B": B, "T": T, "n_counted": n},
    )


@generator("masking", idea="mlm_labels")
def masking_label_of(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    text = sentence(r, r.randint(8, 12))
    enc = tok.encode(text)
    result = mask(torch.tensor([enc.ids]), g, rate=0.5)
    actions = result.actions[0]
    kind = r.choice([a for a in (NOT_CHOSEN, MASKED, RANDOM, KEPT) if bool((actions == a).any())])
    pos = r.choice([i for i in range(len(enc.ids)) if int(actions[i]) == kind and bool(result.eligible[0, i])])
    original, seen = enc.ids[pos], int(result.inputs[0, pos])
    word, seen_word = enc.tokens[pos], tok.vocab[seen]
    what = {
        NOT_CHOSEN: "was not chosen, so the model sees it unchanged",
        MASKED: "was chosen and replaced by [MASK]",
        RANDOM: f"was chosen and replaced by the random token '{seen_word}'",
        KEPT: "was chosen but kept unchanged (the 10% left as they are)",
    }[kind]
    by_value: dict[int, str] = {}
    for value, text_ in (
        (IGNORE_INDEX, "−100: no loss at this position"),
        (original, f"{original}: the id of the original word '{word}'"),
        (tok.mask_id, f"{tok.mask_id}: the id of [MASK]"),
        (seen, f"{seen}: the id the model now sees there ('{seen_word}')"),
        (tok.pad_id, f"{tok.pad_id}: the id of [PAD]"),
    ):
        by_value.setdefault(value, text_)
    correct = by_value[int(result.labels[0, pos])]
    if kind == NOT_CHOSEN:
        mistakes = (
            Mistake(by_value[original], "A position that was not chosen carries no loss: its label is −100."),
            Mistake(by_value[tok.mask_id], "Nothing was hidden here: a position that was not chosen gets −100."),
        )
    else:
        mistakes = (
            Mistake(
                by_value[IGNORE_INDEX],
                "Every chosen position, kept ones too, is labelled with its original id; "
                "only the positions not chosen get −100.",
            ),
            Mistake(by_value[seen], "The label is the word the model must recover, not what it now sees there."),
            Mistake(by_value[tok.mask_id], "[MASK] is what the model reads; the label is the original word's id."),
        )
    return choice_question(
        r,
        prompt=(
            f"'{text}' is prepared for MLM. Positions are numbered from 0, [CLS] at 0. Position {pos}, the word "
            f"'{word}' (id {original}), {what}. What label does position {pos} get?"
        ),
        correct=correct,
        candidates=by_value.values(),
        mistakes=mistakes,
        explanation=(
            f"Labels for this sentence: {[int(x) for x in result.labels[0]]}. A chosen position is labelled with its "
            "original id whatever happened to its input ([MASK], random or kept), so the model must recover the "
            "real word; every position not chosen gets −100 and carries no loss."
        ),
        inputs={"text": text, "position": pos, "action": int(kind)},
    )


@functools.lru_cache(maxsize=8)
def tiny_mlm(V: int, T: int, D: int) -> MaskedLanguageModel:
    """An encoder + MLM head of the asked sizes (one layer: the shapes do not depend on depth)."""
    config = EncoderConfig(vocab_size=V, max_positions=T, d_model=D, n_heads=4, n_layers=1)
    with torch.random.fork_rng():  # leave the caller's global random stream alone
        torch.manual_seed(0)
        return MaskedLanguageModel(config).eval()


@generator("masking")
def masking_shapes(r: random.Random, g: torch.Generator) -> Question:
    if r.random() < 0.2:
        B, T, D, V, n = 8, 20, 48, 1000, 12  # the "try it" exercise's own numbers
    else:
        B, T = r.randint(2, 8), r.randint(6, 24)
        D, V = r.choice([16, 24, 32, 48, 64]), r.choice([60, 120, 250, 500, 1000])
        n = r.randint(2, min(16, B * T))
    model = tiny_mlm(V, T, D)
    ids = torch.randint(0, V, (B, T), generator=g)
    labels = torch.full((B * T,), IGNORE_INDEX)
    labels[torch.randperm(B * T, generator=g)[:n]] = 0
    labels = labels.view(B, T)
    with torch.inference_mode():
        logits, out = model(ids)
    shapes = {
        "the encoder output": tuple(out.hidden.shape),
        "the MLM logits": tuple(logits.shape),
        "the logits selected at the masked positions": tuple(logits[labels != IGNORE_INDEX].shape),
    }
    asked = r.choice(list(shapes))
    answer = str(shapes[asked])
    mistakes = {
        "the encoder output": (
            Mistake(str((B, T, V)), f"The encoder gives {D}-wide vectors; the vocabulary only comes in with the head."),
        ),
        "the MLM logits": (
            Mistake(str((B, T, D)), f"That is the encoder output; the head turns each vector into {V} scores."),
            Mistake(str((n, V)), "The logits cover every position; picking the masked ones comes after."),
        ),
        "the logits selected at the masked positions": (
            Mistake(str((B, T, V)), "Indexing with the mask keeps only the masked positions."),
            Mistake(str((B, n, V)), f"The selection flattens batch and position: {n} rows in all, not per sequence."),
        ),
    }[asked]
    return Question(
        kind="exact",
        prompt=(
            f"A batch of {B} sequences of length {T}, model width {D}, vocabulary {V}; {n} positions are masked in "
            f"the whole batch. What is the shape of {asked}? (for example (2, 3, 4))"
        ),
        answer=answer,
        mistakes=mistakes,
        explanation=(
            f"Running an encoder with an MLM head of these sizes: ids {tuple(ids.shape)} → encoder output "
            f"{shapes['the encoder output']} (one {D}-vector per position) → logits {shapes['the MLM logits']} "
            f"(a score for each of the {V} tokens at every position). Picking the {n} masked positions with "
            f"logits[labels != −100] flattens batch and position: {shapes[list(shapes)[2]]}."
        ),
        inputs={"B": B, "T": T, "D": D, "V": V, "n": n, "asked": asked},
    )


@generator("masking")
def masking_cannot_generate(r: random.Random, g: torch.Generator) -> Question:
    T = r.randint(4, 6)
    gap = drop_last_gaps(*random_qkv(g, T, d=8))
    correct = (
        "Every output is built from the whole input, right side included: append a token and all earlier outputs "
        "change, and it was trained to fill gaps, not to predict the next token from the left alone."
    )
    wrong = [
        "It has no output layer over the vocabulary, so it cannot name a token.",
        "Its attention is causal, so it cannot see the text it is asked to continue.",
        "It can only hold 512 positions, too few for generated text.",
        "The [MASK] token may appear only once per input.",
    ]
    return choice_question(
        r,
        prompt="An MLM encoder predicts tokens. Why can it not write text left to right, one token at a time?",
        correct=correct,
        candidates=wrong,
        mistakes=(
            Mistake(wrong[1], "It is the other way round: an encoder's attention is bidirectional, not causal."),
            Mistake(wrong[0], "It has one: the MLM head gives a score for every token of the vocabulary."),
        ),
        explanation=(
            f"Appending a token to {T - 1} random ones and rerunning attention moves the earlier outputs by up to "
            f"{gap[False]:.3f} without a mask, and by {gap[True]:.3f} with a causal one. A decoder can keep its "
            "earlier work and was trained to predict the next token from the left only; the encoder has neither. "
            "It does have a head over the vocabulary: its MLM head gives one score per token at every position."
        ),
        inputs={"T": T},
    )


def position_name(position: int, word: str) -> str:
    return f"position {position} (“{word}”)"


@generator("masking", idea="position_loss")
def masking_hardest_position(r: random.Random, g: torch.Generator) -> Question:
    model, tok = lab_mlm()
    for _ in range(20):  # a sentence whose probabilities read apart at the digits shown
        text = sentence(r, r.randint(6, 9))
        enc = tok.encode(text)
        hidden = sorted(r.sample(range(1, len(enc.ids) - 1), r.randint(3, 4)))
        inputs = torch.tensor([enc.ids])
        inputs[0, hidden] = tok.mask_id
        with torch.inference_mode():
            logits, _ = model(inputs, need_weights=False)
        probs = torch.softmax(logits[0, hidden].double(), dim=-1)  # (n, V)
        p_word = [float(probs[i, enc.ids[t]]) for i, t in enumerate(hidden)]
        p_top, top = probs.max(dim=-1)
        shown = [f"{p:.3g}" for p in p_word] + [f"{float(p):.3g}" for p in p_top]
        if len(set(shown[: len(hidden)])) == len(hidden) and len(set(shown[len(hidden) :])) == len(hidden):
            break
    names = [position_name(t, enc.tokens[t]) for t in hidden]
    losses = [-math.log(p) for p in p_word]
    hardest = max(range(len(hidden)), key=losses.__getitem__)
    easiest = min(range(len(hidden)), key=losses.__getitem__)
    unsure = min(range(len(hidden)), key=lambda i: float(p_top[i]))
    rows = tuple(
        (names[i], tok.vocab[int(top[i])], f"{float(p_top[i]):.3g}", f"{p_word[i]:.3g}") for i in range(len(hidden))
    )
    masked = " ".join(tok.vocab[int(i)] for i in inputs[0, 1:-1])
    return choice_question(
        r,
        prompt=(
            f"The lab's small MLM reads “{masked}” (positions numbered from 0, [CLS] at 0). For each [MASK], the table "
            "gives the model's top guess with its probability, and the probability it gives the original word. "
            "Which position carries the largest MLM loss?"
        ),
        correct=names[hardest],
        candidates=names,
        mistakes=(
            Mistake(
                names[easiest],
                "That is the smallest loss: the loss is −log p(original word), so it is largest "
                "where that probability is smallest.",
            ),  # fmt: skip
            Mistake(
                names[unsure],
                "That is where the model is least sure of its own guess; the loss reads the "
                "probability of the original word, whatever the model guessed.",
            ),  # fmt: skip
        ),
        explanation=(
            "The loss at a position is −log p(original word): "
            + "; ".join(f"{names[i]}: −log {p_word[i]:.3g} = {losses[i]:.2f}" for i in range(len(hidden)))
            + f". The largest is at {names[hardest]}."
        ),
        table=(("position", "model's top guess", "p(top guess)", "p(original word)"), rows),
        inputs={"text": text, "hidden": hidden},
    )


@generator("masking", idea="fill_ranking")
def masking_fill_rank(r: random.Random, g: torch.Generator) -> Question:
    model, tok = lab_mlm()
    for _ in range(20):  # a blank whose probabilities read apart at the digits shown
        text, cloze = cloze_from(r)
        with torch.inference_mode():
            logits, _ = model(torch.tensor([cloze.ids]), need_weights=False)
        probs = torch.softmax(logits[0, cloze.position].double(), dim=-1)
        k = r.randint(3, 7)
        top = probs.topk(k)
        words = [tok.vocab[int(i)] for i in top.indices]
        shown = [f"{float(p):.4f}" for p in top.values]
        if len(set(shown)) == k and float(top.values[-1]) >= 1e-4:
            break
    word = words[-1]
    rows = sorted(zip(words, shown, strict=True))
    in_table = [w for w, _ in rows].index(word) + 1
    return count_question(
        prompt=(
            f"The lab's small MLM reads “{text}” and ranks all {tok.vocab_size:,} entries of its vocabulary at the "
            f"[MASK] by probability. The table lists “{word}” and every entry the model finds likelier, in "
            f"alphabetical order. What rank does the model give “{word}” (1 = its first choice)? (a whole number)"
        ),
        answer=k,
        mistakes=(
            Mistake(k - 1, "That counts the entries ranked above it; its rank is one more (1 is the first choice)."),
            Mistake(in_table, "That is its place in the table's alphabetical order; the rank orders by probability."),
            Mistake(1, "That counts from the least likely; rank 1 is the model's first choice."),
        ),
        explanation=(
            "Sorted by probability, most likely first: "
            + ", ".join(f"{i}. {w} ({p})" for i, (w, p) in enumerate(zip(words, shown, strict=True), start=1))
            + f". “{word}” is number {k}: a word's rank is 1 + how many entries the model finds likelier."
        ),
        table=(("vocabulary entry", "probability at the [MASK]"), tuple(rows)),
        inputs={"text": text, "word": word},
    )
