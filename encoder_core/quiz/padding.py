"""Questions for the padding lesson: batches, the key padding mask, and what a pad does without it."""

from __future__ import annotations

import random

import torch

from ..model.output_heads import mean_pool
from ..model.self_attention import additive_mask, attention
from .attention_inputs import random_qkv, scores_to_qk
from .base import Mistake, Question, fmt_list, generator, grid, label, sentence, signed_sum, small_model, tokenizer
from .forms import attention_figure, choice_question, count_question, numeric_question


@generator("padding", idea="unmasked-pads-take-attention")
def padding_pad_weight(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    for _ in range(30):  # the chart's table shows 3 decimals: ask about a row whose pads take at least 0.1
        model_seed, head = r.randint(0, 3), r.randint(0, 3)
        n_words, n_pads = r.randint(2, 5), r.randint(2, 4)
        text = sentence(r, n_words)
        batch = tok.pad([tok.encode(text)], extra_pads=n_pads)
        model = small_model(model_seed)
        with torch.inference_mode():
            unmasked = model(batch.ids).attentions[0][0, head]
            masked = model(batch.ids, key_padding_mask=batch.key_padding_mask).attentions[0][0, head]
        tokens = batch.tokens[0]
        pads = [t for t in range(len(tokens)) if tokens[t] == "[PAD]"]
        words = range(1, n_words + 1)  # a word, not [CLS] or [SEP]
        rows = [i for i in words if float(unmasked[i, pads].sum()) >= 0.1]
        if rows:
            break
    row = r.choice(rows) if rows else max(words, key=lambda i: float(unmasked[i, pads].sum()))
    taken = float(unmasked[row, pads].sum())
    parts = " + ".join(f"{float(unmasked[row, t]):.3f}" for t in pads)
    return numeric_question(
        prompt=(
            f"The small model (seed {model_seed}) reads '{text}' followed by {n_pads} [PAD] tokens, and nobody passed "
            f"the key padding mask. The chart shows layer 0, head {head}: rows are queries, columns keys, both "
            f"numbered from 0 with [CLS] at 0. How much weight, in total, does the query "
            f"'{label(row, tokens[row])}' put on the {n_pads} pads?"
        ),
        answer=taken,
        mistakes=(
            Mistake(0.0, "Zero is what the mask would give, but nobody passed it: the pads still take weight."),
            Mistake(float(unmasked[row, pads[0]]), "That is one pad's weight: the question asks for all of them."),
            Mistake(float(unmasked[pads, row].sum()), "That is the column: the pads' queries looking at this word."),
        ),
        explanation=(
            f"Read row {row} in the pad columns {pads}: {parts} = {taken:.3f}. That is attention the word wastes on "
            f"filler, and its output moves with the number of pads. With the mask the same row gives the pads "
            f"{float(masked[row, pads].sum()):.3f} and shares its weight among the real tokens only. The pads' own "
            "rows (their queries) are a different matter: they are computed either way and must never be read."
        ),
        figure=attention_figure(
            unmasked,
            tokens,
            f"Layer 0, head {head}, no padding mask",
            f"Attention grid of layer 0, head {head} without the padding mask: {len(tokens)} query rows by "
            f"{len(tokens)} key columns, the last {n_pads} of them pads; the numbers are in the table below the chart.",
            in_prompt=True,
        ),
        inputs={"model_seed": model_seed, "head": head, "text": text, "n_pads": n_pads, "row": row},
    )


@generator("padding")
def padding_batch_shape(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    n_seq = r.randint(2, 4)
    texts: list[tuple[str, str | None]] = []
    for _ in range(n_seq):
        a = sentence(r, r.randint(2, 8))
        b = sentence(r, r.randint(2, 6)) if r.random() < 0.35 else None
        texts.append((a, b))
    encodings = [tok.encode(a, b) for a, b in texts]
    batch = tok.pad(encodings)
    shape = tuple(batch.ids.shape)
    words_only = max(len(a.split()) + (len(b.split()) if b else 0) for a, b in texts)
    one_sep = max(len(e.ids) - (b is not None) for e, (_, b) in zip(encodings, texts))
    mistakes = (
        Mistake(str((shape[1], shape[0])), "B and T are swapped: the batch comes first, then the positions."),
        Mistake(str((shape[0], words_only)), "Only the words were counted: [CLS] and every [SEP] are tokens too."),
        Mistake(str((shape[0], one_sep)), "A pair has two [SEP]s, one after each sentence."),
    )
    listed = "; ".join(f"'{a}'" if b is None else f"the pair '{a}' + '{b}'" for a, b in texts)
    counts = ", ".join(
        f"{len(e.ids) - (2 if b is None else 3)} words + {2 if b is None else 3} special = {len(e.ids)}"
        for e, (_, b) in zip(encodings, texts)
    )
    return Question(
        kind="exact",
        prompt=(
            f"These {n_seq} inputs are tokenized BERT-style ([CLS] first, [SEP] after each sentence, one token per "
            f"word) and padded at the end into one batch: {listed}. What is the shape (B, T) of the batch's ids "
            "and of its key padding mask?"
        ),
        answer=str(shape),
        mistakes=mistakes,
        explanation=(
            f"Token counts: {counts}. Every row is padded to the longest, so T = {shape[1]}, and B = {shape[0]} "
            f"sequences: ({shape[0]}, {shape[1]}). The key padding mask has the same shape: True where a row holds "
            "a [PAD]."
        ),
        inputs={"texts": texts},
    )


@generator("padding", idea="pad-count")
def padding_pad_count(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    a, b = sentence(r, r.randint(2, 6)), sentence(r, r.randint(2, 6))
    n_pair = len(a.split()) + len(b.split())
    single = sentence(r, r.randint(1, min(n_pair, 6)))
    pair, one = tok.encode(a, b), tok.encode(single)
    batch = tok.pad([pair, one])
    pads = int(batch.key_padding_mask[1].sum())
    mistakes = (
        Mistake(pads - 1, "The pair has two [SEP]s, one after each sentence: one was left out."),
        Mistake(len(pair), "That is the padded length of the row, not the number of pads in it."),
        Mistake(pads + 1, "The single sentence has a [SEP] too: it was left out."),
    )
    return count_question(
        prompt=(
            f"A batch holds the sentence pair '{a}' + '{b}' and the single sentence '{single}', tokenized "
            "BERT-style (one token per word, [CLS] at the front, [SEP] after each sentence) and padded at the end. "
            "How many [PAD] tokens does the single sentence's row get? (a whole number)"
        ),
        answer=pads,
        mistakes=mistakes,
        explanation=(
            f"The pair is {len(pair)} tokens ({n_pair} words + [CLS] + two [SEP]); the single sentence is {len(one)} "
            f"({len(single.split())} words + [CLS] + [SEP]). Its row is filled up to {len(pair)}: "
            f"{len(pair)} − {len(one)} = {pads} pads."
        ),
        inputs={"pair": [a, b], "single": single},
    )


@generator("padding")
def padding_true_means(r: random.Random, g: torch.Generator) -> Question:
    tok = tokenizer()
    long_text, short_text = sentence(r, r.randint(5, 8)), sentence(r, r.randint(1, 3))
    batch = tok.pad([tok.encode(long_text), tok.encode(short_text)])
    T = batch.ids.shape[1]
    mask = additive_mask(T, key_padding_mask=batch.key_padding_mask)  # (B, 1, 1, T)
    t = r.choice([i for i in range(T) if bool(batch.key_padding_mask[1, i])])
    statements = {
        "key": f"Every query of that sequence gives key {t} a weight of exactly 0: its score becomes −∞.",
        "query": f"Query row {t} is skipped: that position attends to nothing, but the others still see it.",
        "loss": f"Position {t} is left out of the MLM loss: its label becomes −100.",
        "keep": f"Position {t} is a real token that must be kept.",
    }
    applies_to_all_queries = mask.shape[-2] == 1
    blocked = bool(torch.isinf(mask[1, 0, 0, t])) and applies_to_all_queries
    correct = statements["key" if blocked else "keep"]
    mistakes = (
        Mistake(
            statements["query"], "The mask hides keys (columns), not queries: the pad's own row is still computed."
        ),
        Mistake(
            statements["keep"],
            "That is Hugging Face's attention_mask, where 1 means keep; PyTorch's True means ignore.",
        ),
        Mistake(statements["loss"], "Leaving a position out of the loss is the labels' job (−100), not this mask's."),
    )
    row = ["True" if bool(x) else "False" for x in batch.key_padding_mask[1]]
    added = ["0" if float(x) == 0 else "−∞" for x in mask[1, 0, 0]]
    return choice_question(
        r,
        prompt=(
            f"A batch holds '{long_text}' and '{short_text}'. The short one's row of key_padding_mask is "
            f"[{', '.join(row)}], positions numbered from 0. What does True at position {t} tell attention?"
        ),
        correct=correct,
        candidates=statements.values(),
        mistakes=mistakes,
        explanation=(
            f"The mask becomes additive: row 1 adds [{', '.join(added)}] to "
            f"every query's scores (one row, shared by all {T} queries). True means 'ignore this key' (PyTorch's "
            "convention, the opposite of Hugging Face's attention_mask where 1 means keep). The pad's own query row "
            "is still computed; it is the loss labels, not this mask, that leave positions out of the MLM loss."
        ),
        inputs={"texts": [long_text, short_text], "position": t},
    )


@generator("padding")
def padding_zero_key_weight(r: random.Random, g: torch.Generator) -> Question:
    s = [round(r.uniform(-1.5, 2.0), 1) for _ in range(3)]
    q, k = scores_to_qk(s + [0.0])  # the pad's key is the zero vector: it scores 0
    pad = torch.tensor([[False, False, False, True]])
    _, unmasked = attention(q, k, k)
    _, masked = attention(q[None], k[None], k[None], key_padding_mask=pad)
    w = float(unmasked[0, 3])
    total = " + ".join(f"e^{x}" for x in s)
    exp_sum = float(torch.tensor(s, dtype=torch.float64).exp().sum())
    return numeric_question(
        prompt=(
            f"Three real tokens are followed by one pad whose key and value vectors are all zeros. A real query's "
            f"scaled scores against the three real keys are {s}. Without the key padding mask, what weight does "
            "this query give the pad?"
        ),
        answer=w,
        mistakes=(
            Mistake(0.0, "A zero key scores 0, not −∞: e^0 = 1 still competes in the softmax."),
            Mistake(0.25, "The four positions do not share equally: the real keys' scores decide the split."),
            Mistake(1 / exp_sum, "The pad's own e^0 = 1 belongs in the denominator too."),
        ),
        explanation=(
            f"A zero key scores q·0 = 0, and 0 is not −∞: e^0 = 1 competes in the softmax. "
            f"Weight = 1 / ({total} + 1) = {w:.3f}. With the mask the pad's score is −∞ and its weight is "
            f"{float(masked[0, 0, 3]):.3f}."
        ),
        inputs={"scores": s},
    )


@generator("padding")
def padding_mean_pool(r: random.Random, g: torch.Generator) -> Question:
    n_words, n_pads = r.randint(2, 4), r.randint(2, 4)
    words = sentence(r, n_words).split()
    tokens = ["[CLS]"] + words + ["[SEP]"] + ["[PAD]"] * n_pads
    pad = torch.tensor([[t == "[PAD]" for t in tokens]])
    while True:  # a pool that comes out (nearly) 0 would need more digits than the table's: draw again
        values = [round(r.uniform(-2.0, 2.0), 1) for _ in range(n_words + 2)]
        values += [round(r.uniform(0.5, 2.5), 1)] * n_pads
        hidden = torch.tensor(values, dtype=torch.float64)[None, :, None]  # (1, T, 1)
        pooled = float(mean_pool(hidden, pad)[0, 0])
        if abs(pooled) >= 0.05:
            break
    everything = float(mean_pool(hidden)[0, 0])
    n_real = n_words + 2
    words_mean = sum(values[1 : n_words + 1]) / n_words
    return numeric_question(
        prompt=(
            "The table lists one feature of the encoder's output vectors for a padded sentence. The masked mean "
            "pool (the sentence embedding) averages every position the key padding mask keeps: the words, [CLS] "
            "and [SEP] count, the [PAD]s do not. What does it give for this feature?"
        ),
        answer=pooled,
        mistakes=(
            Mistake(everything, "The pads were averaged in: the mask leaves them out."),
            Mistake(words_mean, "[CLS] and [SEP] were left out, but the mask keeps them: only pads are dropped."),
            Mistake(
                sum(values[:n_real]) / len(tokens),
                "The real positions' sum was divided by every position, pads included.",
            ),
        ),
        table=(("position", "token", "feature"), tuple((i, t, v) for i, (t, v) in enumerate(zip(tokens, values)))),
        explanation=(
            f"Average the {n_real} non-pad positions ([CLS] and [SEP] included, pads left out): "
            f"{signed_sum(values[:n_real])} = {sum(values[:n_real]):.2f}, / {n_real} = {pooled:.3f}. "
            f"Averaging all {len(tokens)} positions, pads included, would give {everything:.3f}, a value that "
            "depends on how long the batch-mates were."
        ),
        inputs={"tokens": tokens, "values": values},
    )


@generator("padding")
def padding_masked_gap(r: random.Random, g: torch.Generator) -> Question:
    q, k, v = random_qkv(g, 3)
    zero = torch.zeros(1, 4, dtype=torch.float64)
    q4 = torch.cat([q, torch.randn(1, 4, generator=g, dtype=torch.float64)])  # the pad's query: anything
    k4, v4 = torch.cat([k, zero]), torch.cat([v, zero])
    alone, _ = attention(q, k, v)
    pad = torch.tensor([[False, False, False, True]])
    with_mask, _ = attention(q4[None], k4[None], v4[None], key_padding_mask=pad)
    without_mask, w = attention(q4, k4, v4)
    gap_masked = float((with_mask[0, :3] - alone).abs().max())
    gap_unmasked = float((without_mask[:3] - alone).abs().max())
    statements = {
        (True, False): "With the mask they are identical; without it they move.",
        (False, True): "Without the mask they are identical; with it they move.",
        (True, True): "Identical either way: a zero key and a zero value add nothing.",
        (False, False): "They move either way: one extra position always changes the softmax.",
    }
    outcome = (gap_masked < 1e-9, gap_unmasked < 1e-9)
    correct = statements[outcome]
    words = sentence(r, 3).split()
    mistakes = (
        Mistake(
            statements[(True, True)],
            "A zero value adds nothing, but a zero key scores 0, not −∞: the pad still "
            "takes weight from the real tokens.",
        ),
        Mistake(
            statements[(outcome[1], outcome[0])], "With and without are swapped: the mask is what removes the pad."
        ),
    )
    return choice_question(
        r,
        prompt=(
            f"Take the three tokens '{' '.join(words)}' and append one pad whose key and value are zero vectors. "
            "Compare the three real tokens' attention outputs with those of the three tokens alone: with the key "
            "padding mask, and without it."
        ),
        correct=correct,
        candidates=statements.values(),
        mistakes=mistakes,
        explanation=(
            f"Largest change in the real outputs: with the mask {gap_masked:.3f}, without it {gap_unmasked:.3f}. "
            f"A zero value adds nothing to the sum, but a zero key scores 0, not −∞, so the pad still takes weight "
            f"({fmt_list(w[:3, 3])} from the three real rows) and every real row's other weights shrink."
        ),
        figure=attention_figure(
            w,
            words + ["[PAD]"],
            "No mask: the pad column still gets weight",
            f"Without the mask the pad column takes {fmt_list(w[:3, 3], 2)} from the three real rows.",
        ),
        inputs={"q": grid(q, 6), "k": grid(k, 6), "v": grid(v, 6)},
    )


LEAK_PAD_COUNTS = (1, 2, 4, 8)  # pads appended, one run each


@generator("padding", idea="unmasked-leak-with-more-pads")
def padding_leak_trend(r: random.Random, g: torch.Generator) -> Question:
    def output(s: list[float], values: list[float], pads: int) -> float:
        """The query's output with `pads` zero-key, zero-value pads appended and no mask."""
        q, k = scores_to_qk(s + [0.0] * pads)  # each pad's key is the zero vector: it scores 0
        v = torch.tensor(values + [0.0] * pads, dtype=torch.float64)[:, None]
        out, _ = attention(q[:1], k, v)  # no mask: the pads are ordinary keys
        return float(out[0, 0])

    while True:  # an output far enough from 0 that its change can be read
        s = [round(r.uniform(-1.5, 2.0), 1) for _ in range(3)]
        values = [float(r.randint(-4, 6)) for _ in range(3)]
        alone = output(s, values, 0)
        if abs(alone) >= 0.5:
            break
    changes = [abs(output(s, values, p) - alone) for p in LEAK_PAD_COUNTS]
    statements = {
        "grows": "It changes, and further with every pad added.",
        "same": "It changes by the same amount, however many pads.",
        "still": "It does not change: a zero key and a zero value add nothing.",
        "shrinks": "It changes less as more pads are added: they cancel out.",
    }
    first, last = changes[0], changes[-1]
    trend = "still" if last < 1e-12 else "grows" if last > first * 1.1 else "shrinks" if last < first / 1.1 else "same"
    return choice_question(
        r,
        prompt=(
            f"A real query's scaled scores against three real keys are {s}, and their values have a single "
            f"feature: {[int(x) for x in values]}. Pads whose keys and values are zero vectors are appended and "
            f"nobody passes the mask: {', '.join(map(str, LEAK_PAD_COUNTS[:-1]))}, then {LEAK_PAD_COUNTS[-1]} of "
            "them. Compared with the three tokens alone, what happens to the query's output?"
        ),
        correct=statements[trend],
        candidates=statements.values(),
        mistakes=(
            Mistake(
                statements["still"],
                "A zero value adds nothing, but a zero key scores 0, not −∞: every pad "
                "puts e^0 = 1 in the softmax's denominator and takes weight from the real keys.",
            ),
            Mistake(
                statements["same"],
                "Each pad adds another e^0 = 1 to the denominator: more pads take a larger share of the weight.",
            ),
            Mistake(
                statements["shrinks"],
                "Pads do not cancel out: each adds to the denominator, so together they take more of the weight.",
            ),
        ),
        explanation=(
            f"Alone the output is {alone:.3f}. Without the mask each pad scores 0 and puts e^0 = 1 in the "
            f"denominator while adding nothing to the sum of values, so the output shrinks towards 0: it moves by "
            + ", ".join(f"{c:.3f} with {p}" for c, p in zip(changes, LEAK_PAD_COUNTS))
            + " pads. With the mask every pad's weight is 0 and the output stays at "
            f"{alone:.3f}, however many there are."
        ),
        inputs={"scores": s, "values": values, "pads": list(LEAK_PAD_COUNTS)},
    )
