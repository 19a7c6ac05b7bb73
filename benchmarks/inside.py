"""Speed of the "Looking inside" lesson on all-MiniLM-L6-v2 under the lab's MLM head, wall clock, medians.

    python -m benchmarks.inside [--threads N] [--repeats N] [--sweep]

For the 12-token default sentence (encoder_core.lessons.inside.DEFAULT_SENTENCE), with the model loaded:
- first chart: what the page computes before its first chart (the cloze, every head and token knocked
  out, the attention maps and the logit lens);
- full knockout sweep: the 72 heads and every token knocked out, one at a time;
- explanations: the five explanations, integrated gradients at 64 steps;
and, with --sweep, the scores over the fixed sentences once. The page runs with one thread (ui.models sets
it), so one thread is the default here too. The machine is shared: read the medians, not a single run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from encoder_core.lessons import inside as core
from encoder_core.pretrained.minilm_mlm import load_minilm_mlm


def median_seconds(fn, repeats: int) -> tuple[float, float, float]:
    """(median, fastest, slowest) wall-clock seconds of fn() over repeats runs."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sweep", action="store_true", help="also time the fixed sentences' scores, once")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, tokenizer, _ = load_minilm_mlm()
    cloze = core.prepare_cloze(tokenizer, core.DEFAULT_SENTENCE)
    answer, f = core.clean_answer(model, cloze)
    L, H = model.config.n_layers, model.config.n_heads

    def first_chart():
        c = core.prepare_cloze(tokenizer, core.DEFAULT_SENTENCE)
        core.knockouts(model, tokenizer, c)
        core.attention_maps(model, c)
        core.logit_lens(model, tokenizer, c)

    def full_sweep():
        core.head_knockouts(model, cloze)
        core.token_knockouts(model, cloze, answer, f)

    rows = {
        "first chart (cloze, all knockouts, attention, logit lens)": first_chart,
        f"full knockout sweep ({L * H} heads + {len(cloze.ids)} tokens)": full_sweep,
        "five explanations (integrated gradients, 64 steps)": lambda: core.explanations(
            model, tokenizer, cloze, answer, "[PAD]", 64
        ),
    }
    print(f"{len(cloze.ids)} tokens, {args.threads} thread(s), {args.repeats} runs each")
    print("| what | median s | fastest s | slowest s |")
    print("|---|---|---|---|")
    for name, fn in rows.items():
        fn()  # warm up: first calls allocate
        med, lo, hi = median_seconds(fn, args.repeats)
        print(f"| {name} | {med:.2f} | {lo:.2f} | {hi:.2f} |", flush=True)
    if args.sweep:
        n = len(core.CLOZE_SENTENCES)
        start = time.perf_counter()
        core.sweep(model, tokenizer, core.CLOZE_SENTENCES, "[PAD]", 64)
        print(f"| scores over the {n} fixed sentences (64 steps), once | {time.perf_counter() - start:.1f} | | |")


if __name__ == "__main__":
    main()
