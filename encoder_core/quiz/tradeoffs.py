"""Questions for the trade-offs lesson: reuse, length, sample efficiency, dynamic masking, the loss's mean."""

from __future__ import annotations

import math
import random

import torch

from ..lessons.attention import ROUNDING
from ..lessons.tradeoffs import (
    CASES,
    MISMATCH_MARGIN,
    append_one_token,
    attention_scaling,
    case_margins,
    eligible_positions,
    expected_distinct,
    first_cut,
    likeliest_case,
    mask_mismatch,
    rtd_labels,
)
from ..model.config import EncoderConfig
from ..model.costs import append_flops_closed_form, split_windows
from ..objectives.loss import loss_breakdown
from ..objectives.mlm_masking import IGNORE_INDEX, exact_counts
from .base import Mistake, Question, count_of, generator, sentence, small_model, tokenizer
from .forms import choice_question, count_question, numeric_question, position_question
from .inside import lab_mlm

MB = 1024 * 1024


@generator("tradeoffs", idea="cache-saving")
def tradeoffs_append_flops(r: random.Random, g: torch.Generator) -> Question:
    d = r.choice([64, 128, 256])
    cfg = EncoderConfig(vocab_size=100, d_model=d, n_heads=4, n_layers=r.randint(1, 4))
    prefix, n = r.randint(4, 20), r.randint(2, 12)
    bi, cached = append_flops_closed_form(cfg, prefix, n)
    ratio = bi / cached
    rows = sum(prefix + k for k in range(1, n + 1))
    return numeric_question(
        prompt=(
            f"An encoder and a causal model with a KV cache, both with D = {d}, d_ff = {cfg.d_ff} and "
            f"{count_of(cfg.n_layers, 'layer')}, read a prefix of {prefix} tokens and then get {n} more, one at a "
            "time. After each new token the encoder reruns the whole sequence (T rows over T keys); the causal "
            "model runs only the new row over the T cached keys. A layer costs T_q(8D² + 4D·d_ff) + 4·T_q·T_k·D "
            f"FLOPs for T_q rows over T_k keys. How many times more FLOPs does the encoder spend on the {n} "
            "appends?"
        ),
        answer=ratio,
        mistakes=(
            Mistake(rows / n, "That counts rows only: the encoder's rows also attend over more keys each step."),
            Mistake(float(prefix + n), "That is the final length: the steps before it were shorter."),
        ),
        explanation=(
            f"Encoder: sum over T = {prefix + 1}…{prefix + n} of L[T(8D² + 4D·d_ff) + 4DT²] = {bi:,}. Cached: "
            f"L[(8D² + 4D·d_ff) + 4DT] per step, {cached:,} in all. Ratio {bi:,} / {cached:,} = {ratio:.2f}."
        ),
        inputs={"d": d, "layers": cfg.n_layers, "prefix": prefix, "n": n},
    )


@generator("tradeoffs")
def tradeoffs_attention_megabytes(r: random.Random, g: torch.Generator) -> Question:
    heads, layers = r.choice([(4, 2), (8, 4), (12, 6), (12, 12)])
    t, batch = r.choice([128, 256, 384, 512]), r.choice([1, 2, 8])
    cfg = EncoderConfig(vocab_size=100, d_model=heads * 16, n_heads=heads, n_layers=layers)
    megabytes = batch * attention_scaling(cfg, (t,)).weights_bytes[0] / MB
    return numeric_question(
        prompt=(
            f"A batch of {count_of(batch, 'sequence')} of {t} tokens goes through an encoder with {layers} layers of "
            f"{heads} heads, and every layer keeps its (B, H, T, T) attention weights in float32 (4 bytes each). "
            "How many MB (1 MB = 1,048,576 bytes) do the weights of all layers take?"
        ),
        answer=megabytes,
        min_decimals=1,
        mistakes=(
            Mistake(megabytes / layers, "That is one layer's weights: every layer keeps its own."),
            Mistake(megabytes / t, "That is (B, H, T) per layer: each query row holds T weights, T² per head."),
            Mistake(megabytes * MB / 1e6, "That uses 1 MB = 1,000,000 bytes; the question counts 1,048,576."),
        ),
        explanation=(
            f"{batch} × {heads} × {t}² × 4 bytes × {layers} layers = {megabytes * MB:,.0f} bytes = "
            f"{megabytes:.1f} MB. Double T and it becomes four times as much."
        ),
        inputs={"heads": heads, "layers": layers, "t": t, "batch": batch},
    )


@generator("tradeoffs")
def tradeoffs_rtd_count(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    words = sentence(r, r.randint(6, 10)).split()
    chosen = sorted(r.sample(range(len(words)), r.randint(2, 3)))
    same = r.choice(chosen)  # the generator happens to sample the original word here
    corrupted = list(words)
    pool = [w for w in ("river", "table", "happy", "quickly", "green", "music", "stone") if w not in words]
    for i in chosen:
        if i != same:
            corrupted[i] = r.choice(pool)
    replaced = sum(rtd_labels([tok.token_to_id[w] for w in words], [tok.token_to_id[w] for w in corrupted]))
    table = (
        ("position", "original", "after the generator"),
        tuple((i, a, b) for i, (a, b) in enumerate(zip(words, corrupted))),
    )
    return count_question(
        prompt=(
            f"ELECTRA's generator was asked to fill the positions {chosen} of this sentence (shown to it as [MASK]) "
            "and wrote the words in the table. How many positions does the discriminator label 'replaced'? "
            "(a whole number)"
        ),
        answer=replaced,
        table=table,
        mistakes=(
            Mistake(
                len(chosen), f"Position {same}: the generator wrote the original word back, so it is labelled original."
            ),
            Mistake(len(words), "That is how many positions carry a label; most of them say 'original'."),
        ),
        explanation=(
            f"A position is 'replaced' only when its token differs from the original. Of the {len(chosen)} "
            f"positions the generator filled, position {same} got its own word back: {replaced} replaced. All "
            f"{len(words)} positions still carry a label, so all of them carry a loss, against "
            f"{len(chosen)} under MLM."
        ),
        inputs={"words": words, "corrupted": corrupted},
    )


@generator("tradeoffs")
def tradeoffs_dynamic_views(r: random.Random, g: torch.Generator) -> Question:
    n = r.randint(5, 12)
    k = exact_counts(n).chosen
    epochs = r.randint(5, 30)
    patterns = math.comb(n, k)
    expected = expected_distinct(patterns, epochs)
    return numeric_question(
        prompt=(
            f"A sentence has {n} positions masking may choose, and exact 15% masking chooses {k} of them, each set "
            f"of {k} equally likely. With dynamic masking a new set is drawn each epoch. How many distinct sets "
            f"should the model expect to see in {epochs} epochs? (Static masking would show it 1.)"
        ),
        answer=expected,
        mistakes=(
            Mistake(float(epochs), "That assumes every draw is new: some sets come up twice."),
            Mistake(
                float(patterns), f"That is how many sets exist, C({n}, {k}); {epochs} draws do not reach them all."
            ),
            Mistake(1.0, "That is static masking: one pattern fixed once."),
        ),
        explanation=(
            f"There are C({n}, {k}) = {patterns} sets. Each is missed by all {epochs} draws with probability "
            f"(1 − 1/{patterns})^{epochs}, so the expected number seen is {patterns}(1 − (1 − 1/{patterns})^{epochs})"
            f" = {expected:.2f}."
        ),
        inputs={"n": n, "k": k, "epochs": epochs},
    )


@generator("tradeoffs")
def tradeoffs_windows(r: random.Random, g: torch.Generator) -> Question:
    cap, overlap = r.choice([(512, 128), (512, 64), (256, 64), (128, 32)])
    size = cap - 2
    n = r.randint(size + 1, 6 * size)
    windows = len(split_windows(n, size, overlap).spans)
    return count_question(
        prompt=(
            f"A document of {n:,} word pieces must be read by an encoder of {cap} positions. Each window holds "
            f"[CLS], at most {size} of the document's pieces, and [SEP], and shares {overlap} pieces with the "
            "window before it. How many windows cover the document? (a whole number)"
        ),
        answer=windows,
        mistakes=(
            Mistake(
                math.ceil(n / size),
                f"That leaves no overlap: each window after the first adds only {size - overlap} new pieces.",
            ),
            Mistake(math.ceil(n / cap), f"That forgets [CLS] and [SEP]: a window holds {size} pieces, not {cap}."),
            Mistake(
                math.ceil(n / (size - overlap)),
                "That counts every window, the first too, as adding "
                f"only {size - overlap} new pieces: the first brings {size}.",
            ),
            Mistake(1, "One window is what truncation reads: everything after its end is lost."),
        ),
        explanation=(
            f"The first window takes {size} pieces; each further one adds {size} − {overlap} = {size - overlap} new "
            f"ones. 1 + ⌈({n:,} − {size}) / {size - overlap}⌉ = {windows}. Truncation would keep only the first "
            f"{size} pieces and drop {n - size:,}."
        ),
        inputs={"n": n, "cap": cap, "overlap": overlap},
    )


@generator("tradeoffs")
def tradeoffs_wrong_mean(r: random.Random, g: torch.Generator) -> Question:
    T, V = r.randint(6, 10), 6
    logits = torch.randn(1, T, V, generator=g, dtype=torch.float64) * 1.5
    chosen = sorted(r.sample(range(1, T - 1), r.randint(1, 3)))
    labels = torch.full((1, T), IGNORE_INDEX)
    for i in chosen:
        labels[0, i] = r.randrange(V)
    b = loss_breakdown(logits, labels)
    per = [round(float(b.per_position[0, i]), 3) for i in chosen]
    rows = tuple(
        (i, "chosen" if i in chosen else "-100", f"{per[chosen.index(i)]:.3f}" if i in chosen else "—")
        for i in range(T)
    )
    return numeric_question(
        prompt=(
            f"A sequence of {T} positions has {count_of(len(chosen), 'chosen position')}; the table gives the "
            "cross-entropy at each chosen one (the others are labelled -100). A bug sums the chosen losses and "
            f"divides by all {T} positions. What loss does the buggy code report?"
        ),
        answer=b.wrong_mean_all_positions,
        table=(("position", "label", "loss"), rows),
        mistakes=(
            Mistake(b.mean, "That is the right mean, over the chosen positions: the question asks for the bug's."),
        ),
        explanation=(
            f"Sum of the chosen losses {sum(per):.3f}, divided by {T}: {b.wrong_mean_all_positions:.3f}. The right "
            f"mean divides by {len(chosen)}: {b.mean:.3f}. The bug scales the loss and its gradient by "
            f"{len(chosen)}/{T}, a factor that changes from batch to batch."
        ),
        inputs={"per": per, "T": T},
    )


@generator("tradeoffs")
def tradeoffs_append_moves(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    model_seed = r.randint(0, 3)
    text = sentence(r, r.randint(3, 6))
    extra = r.choice(["again", "today", "there", "slowly"])
    reuse = append_one_token(small_model(model_seed), tok.encode(text).ids, tok.token_to_id[extra])
    causal = "causal" if r.random() < 0.5 else "bidirectional"
    moved = reuse.max_causal > ROUNDING if causal == "causal" else reuse.max_bidirectional > ROUNDING
    statements = {
        "none": "None of them: every earlier vector stays exactly where it was.",
        "all": "Every one of them moves.",
        "last": "Only the vector just before the new token moves.",
        "first": "Only [CLS] moves.",
    }
    correct = statements["all" if moved else "none"]
    wrong = statements["none" if moved else "all"]
    return choice_question(
        r,
        prompt=(
            f"The small model (seed {model_seed}) reads '{text}', then '{text}' with “{extra}” appended after its "
            f"[SEP], with a {causal} attention mask. Which of the earlier tokens' final vectors move?"
        ),
        correct=correct,
        candidates=[wrong, *statements.values()],
        mistakes=(Mistake(wrong, "That is the other mask's behaviour."),),
        explanation=(
            f"Measured: earlier vectors move by at most {reuse.max_causal:.1e} with the causal mask and by up to "
            f"{reuse.max_bidirectional:.3f} without it. Under a causal mask no earlier token looks to its right, so "
            "its vector, keys and values can be kept (a KV cache); an encoder's every vector depends on the whole "
            "input, so appending one token means recomputing all of them."
        ),
        inputs={"model_seed": model_seed, "text": text, "extra": extra, "causal": causal},
    )


MISMATCH_CHOICES = {"masked": "[MASK] in its place", "random": "a random word in its place", "kept": "the word itself"}
MISMATCH_MISTAKES = {
    "masked": "Seeing [MASK] most often in training does not make it the best clue: the word itself is one.",
    "random": "A random word is no clue to the word that belongs there: the model has only the context left.",
    "kept": "The word itself is not always read as the answer: the 10% random case taught the model that a "
    "visible word can be wrong.",
}


@generator("tradeoffs", idea="mask-mismatch")
def tradeoffs_mask_mismatch(r: random.Random, g: torch.Generator) -> Question:
    model, tok = lab_mlm()
    for _ in range(50):  # a word where one input wins by the lesson's margin
        text = sentence(r, r.randint(4, 8))
        ids = tok.encode(text).ids
        seed = r.randrange(1000)
        mm = mask_mismatch(model, tok, ids, eligible_positions(tok, ids)[0], seed)
        clear = [p for p, m in case_margins(mm).items() if m >= MISMATCH_MARGIN]
        if clear:
            break
    position = r.choice(clear)
    mm = mask_mismatch(model, tok, ids, position, seed)
    answer = likeliest_case(mm)
    word = mm.original
    shown = ", ".join(f"{MISMATCH_CHOICES[c.case]} {c.p_original:.3f}" for c in mm.cases)
    return choice_question(
        r,
        prompt=(
            f"The lab's trained MLM reads “{text}” three times: with “{word}” (position {position}, counted from 0) "
            f"replaced by [MASK], replaced by a random word, or left as it is. Under which input does it give "
            f"“{word}” the highest probability at that position?"
        ),
        correct=MISMATCH_CHOICES[answer],
        candidates=list(MISMATCH_CHOICES.values()),
        mistakes=tuple(Mistake(MISMATCH_CHOICES[c], MISMATCH_MISTAKES[c]) for c in CASES if c != answer),
        explanation=(
            f"Measured, p(“{word}”): {shown}. BERT shows the model [MASK] at 80% of its chosen positions, a random "
            "word at 10% and the word itself at 10%: fine-tuning inputs never hold [MASK], so the model must also "
            "make good use of a visible word, and not trust it blindly."
        ),
        inputs={"text": text, "position": position, "seed": seed},
    )


CUT_MISTAKES = {
    "specials": "That forgets [CLS] and [SEP]: they take two of the positions, so fewer of the text's pieces fit.",
    "sep": "That keeps [CLS] but not [SEP]: truncation cuts the text, then still closes it with [SEP].",
    "last": "That is the last piece the encoder still sees: the first one it never sees comes right after it.",
    "words": "That counts words: the cap counts word pieces, and a long word is several.",
}


@generator("tradeoffs", idea="truncation-cap")
def tradeoffs_first_cut(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    for _ in range(50):
        text = sentence(r, r.randint(3, 9))
        cap = r.choice((32, 64, 128, 512))
        k = len(tok.encode(text).ids) - 2
        copies = cap // k + r.randint(1, 3)
        cut = first_cut(tok, text, copies, cap)
        if cut is not None and cut.misread:
            break
    mistakes = [(i, CUT_MISTAKES[name]) for name, i in cut.misread.items()]
    return position_question(
        kind="token",
        prompt=(
            f"A document is “{text}” written {copies} times in a row. An encoder with {cap} positions reads it, "
            "truncated as BERT's tokenizer does: [CLS], as many of the text's pieces as fit, [SEP]. Which piece of "
            "the sentence (counted from 0, as below) is the first one the encoder never sees?"
        ),
        tokens=cut.pieces,
        answer=cut.index,
        mistakes=mistakes,
        explanation=(
            f"{cap} positions less [CLS] and [SEP] leave {cut.kept} for the text. The sentence is {len(cut.pieces)} "
            f"pieces, so {cut.kept} = {cut.kept // len(cut.pieces)} × {len(cut.pieces)} + "
            f"{cut.kept % len(cut.pieces)}: the first piece cut is piece {cut.index}, “{cut.pieces[cut.index]}”."
        ),
        inputs={"text": text, "copies": copies, "cap": cap},
    )
