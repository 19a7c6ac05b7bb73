"""How well the small model fills in a hidden word it has never seen in that sentence.

    python -m scripts.evaluate

Every held-out sentence (none of them in the training set) gets ONE content word - a
noun, verb or adjective - replaced by [MASK]. Top-1 / top-5 accuracy: is the original
word the model's first choice / among its five best? The baseline ignores the sentence
and always answers with the most frequent training words; the model's lead over it is
what the context is worth.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import torch

from ..data.corpus import CONTENT_WORDS, DEFAULT_SEED, corpus_and_split
from ..data.wordnet import FUNCTION_WORDS, hide_one_word
from ..model.output_heads import MaskedLanguageModel
from ..model.tokenizer import MASK
from .checkpoint import DEFAULT_DIR, load_small_mlm


@dataclass(frozen=True)
class MaskedExample:
    text: str  # the sentence with one word replaced by [MASK]
    answer: str
    part_of_speech: str  # noun / verb / adjective


def masked_examples(sentences: list[str], seed: int = DEFAULT_SEED, content_only: bool = True) -> list[MaskedExample]:
    """One example per sentence: one word, chosen at random among its content words (or among all
    its words with content_only=False), replaced by [MASK]."""
    rng = random.Random(seed)
    examples = []
    for sentence in sentences:
        words = sentence.split()
        candidates = [i for i, w in enumerate(words) if not content_only or w in CONTENT_WORDS]
        if not candidates:
            continue
        i = rng.choice(candidates)
        text = " ".join(words[:i] + [MASK] + words[i + 1 :])
        examples.append(MaskedExample(text, words[i], CONTENT_WORDS.get(words[i], "function word")))
    return examples


def predict_top_k(
    model: MaskedLanguageModel, tokenizer, texts: list[str], k: int = 5, batch_size: int = 256
) -> list[list[str]]:
    """The k best tokens at the first [MASK] of each text."""
    out = []
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            for start in range(0, len(texts), batch_size):
                encs = [tokenizer.encode(t) for t in texts[start : start + batch_size]]
                batch = tokenizer.pad(encs)
                logits, _ = model(batch.ids, batch.segments, batch.key_padding_mask, need_weights=False)
                where = (batch.ids == tokenizer.mask_id).int().argmax(dim=1)  # first [MASK] per row
                rows = logits[torch.arange(len(encs)), where]  # (b, V)
                for idx in rows.topk(k, dim=-1).indices.tolist():
                    out.append([tokenizer.vocab[i] for i in idx])
    finally:
        model.train(was_training)
    return out


def _accuracy(examples: list[MaskedExample], guesses: list[list[str]], k: int) -> float:
    if not examples:
        return float("nan")
    return sum(ex.answer in g[:k] for ex, g in zip(examples, guesses)) / len(examples)


def unigram_ranking(sentences: list[str], content_only: bool = True) -> list[str]:
    """Training words from most to least frequent (ties by first appearance)."""
    counts = Counter(w for s in sentences for w in s.split() if not content_only or w in CONTENT_WORDS)
    return [w for w, _ in counts.most_common()]


def evaluate_model(
    model: MaskedLanguageModel,
    tokenizer,
    train_sentences: list[str],
    held_out: list[str],
    seed: int = DEFAULT_SEED,
) -> dict:
    """Top-1 / top-5 on held-out sentences with one content word masked, next to unigram baselines."""
    examples = masked_examples(held_out, seed)
    guesses = predict_top_k(model, tokenizer, [ex.text for ex in examples], k=5)
    content = unigram_ranking(train_sentences, content_only=True)[:5]
    every = unigram_ranking(train_sentences, content_only=False)[:5]
    result = {
        "n_examples": len(examples),
        "top1": round(_accuracy(examples, guesses, 1), 4),
        "top5": round(_accuracy(examples, guesses, 5), 4),
        # The fair baseline: the most frequent content words (a masked word here is always one).
        "baseline_top1": round(_accuracy(examples, [content] * len(examples), 1), 4),
        "baseline_top5": round(_accuracy(examples, [content] * len(examples), 5), 4),
        "baseline_words": content,
        # The literal one: the most frequent tokens of all ("the", "a", ...), which never win here.
        "all_tokens_baseline_top1": round(_accuracy(examples, [every] * len(examples), 1), 4),
        "all_tokens_baseline_top5": round(_accuracy(examples, [every] * len(examples), 5), 4),
        "all_tokens_baseline_words": every,
        "by_part_of_speech": {},
    }
    for pos in ("noun", "verb", "adjective"):
        idx = [i for i, ex in enumerate(examples) if ex.part_of_speech == pos]
        sub, sub_guess = [examples[i] for i in idx], [guesses[i] for i in idx]
        result["by_part_of_speech"][pos] = {
            "n": len(idx),
            "top1": round(_accuracy(sub, sub_guess, 1), 4),
            "top5": round(_accuracy(sub, sub_guess, 5), 4),
        }
    return result


def content_word_ranking(texts: list[str], tokenizer) -> list[str]:
    """The words hide_one_word may hide (content words that are one vocabulary piece), most frequent first."""
    counts = Counter(
        w.lower()
        for text in texts
        for w in text.split()
        if w.isalpha() and w.lower() not in FUNCTION_WORDS and w.lower() in tokenizer.token_to_id
    )
    return [w for w, _ in counts.most_common()]


def evaluate_real(model: MaskedLanguageModel, tokenizer, train_texts: list[str], held_out: list[str], seed: int = 0):
    """Top-1 / top-5 on held-out real sentences (WordNet examples) with one content word hidden,
    against the unigram baseline: the five most frequent such words of the training text."""
    examples = hide_one_word(held_out, tokenizer, seed)
    guesses = predict_top_k(model, tokenizer, [ex.text for ex in examples], k=5)
    baseline = content_word_ranking(train_texts, tokenizer)[:5]
    hits = [[ex.answer in g[:k] for ex, g in zip(examples, guesses)] for k in (1, 5)]
    base = [[ex.answer in baseline[:k] for ex in examples] for k in (1, 5)]
    return {
        "n_examples": len(examples),
        "top1": round(sum(hits[0]) / len(examples), 4),
        "top5": round(sum(hits[1]) / len(examples), 4),
        "baseline_top1": round(sum(base[0]) / len(examples), 4),
        "baseline_top5": round(sum(base[1]) / len(examples), 4),
        "baseline_words": baseline,
    }


def evaluate_checkpoint(path: Path | str = DEFAULT_DIR) -> dict:
    """Load the checkpoint and evaluate it on the held-out split its training run used."""
    model, tokenizer, meta = load_small_mlm(path)
    s = meta["settings"]
    train_sentences, held_out = corpus_and_split(s["corpus_size"], s["corpus_seed"], s["held_out_fraction"])
    return evaluate_model(model, tokenizer, train_sentences, held_out, seed=s["corpus_seed"])


def format_table(m: dict) -> str:
    rows = [
        ("small MLM (held-out)", m["top1"], m["top5"]),
        *[(f"  {pos}s (n={v['n']})", v["top1"], v["top5"]) for pos, v in m["by_part_of_speech"].items()],
        ("unigram, content words", m["baseline_top1"], m["baseline_top5"]),
        ("unigram, all tokens", m["all_tokens_baseline_top1"], m["all_tokens_baseline_top5"]),
    ]
    lines = [f"{'predictor':<26}{'top-1':>8}{'top-5':>8}", "-" * 42]
    lines += [f"{name:<26}{t1:>8.3f}{t5:>8.3f}" for name, t1, t5 in rows]
    lines.append(f"{m['n_examples']} held-out sentences, one content word masked in each")
    return "\n".join(lines)
