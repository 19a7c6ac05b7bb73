"""The heads lesson's costs: MiniLM's forward pass, the all-heads figure, the small model's mechanics
figures, and whole-page reruns.
Prints medians; not a test (the machines are shared and noisy).

    .venv/bin/python -m benchmarks.heads_page [--repeats 30] [--reruns 8]

One thread, as the app's cached models use. The page reruns are AppTest runs (server side,
no browser): "change head" reuses the cached MiniLM run, "change sentence" computes a new one.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from encoder_core import teaching_model
from encoder_core.lessons.heads import head_mechanics, run_encoder
from encoder_core.model.head_patterns import label_heads
from encoder_core.model.tokenizer import english_tokenizer
from encoder_core.pretrained.minilm import load_minilm
from ui.views import heads as view
from ui.views.heads import head_grid

SENTENCE_16 = "the quick brown fox jumps over the lazy dog near the old river bank"  # 16 tokens with [CLS]/[SEP]


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def mechanics_figures(mech) -> None:
    """The figures of the first two steps: Q, K, V of one head, its weights, the concatenation, W_O."""
    for name in mech.slices():
        view.slice_figure(mech, name).to_json()
    for build in (view.own_weights_figure, view.concatenation_figure, view.w_o_figure):
        build(mech).to_json()


def page_reruns(reruns: int) -> tuple[float, float, float]:
    from streamlit.testing.v1 import AppTest

    from tests.apptest_helpers import APP

    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/heads.py")
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    head_times, sentence_times = [], []
    for i in range(reruns):
        t = time.perf_counter()
        at.slider(key="heads_head").set_value((i + 3) % 12).run()
        head_times.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        at.text_input(key="heads.heads_sentence").input(f"the cat number {i} sat on the mat").run()
        sentence_times.append((time.perf_counter() - t) * 1000)
    assert not at.exception, at.exception
    return first, statistics.median(head_times), statistics.median(sentence_times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--reruns", type=int, default=8)
    args = ap.parse_args()
    torch.set_num_threads(1)

    t0 = time.perf_counter()
    pre = load_minilm()
    load_s = time.perf_counter() - t0
    enc = pre.tokenizer.encode(SENTENCE_16)
    assert len(enc) == 16, enc.tokens
    ids, seg = torch.tensor([enc.ids]), torch.tensor([enc.segments])

    def forward(need_weights: bool):
        with torch.inference_mode():
            pre.model(ids, seg, need_weights=need_weights)

    run = run_encoder(pre.model, enc)
    labels = label_heads(run.attentions, run.tokens)
    rows = [
        ("load all-MiniLM-L6-v2 (with SHA-256 checks)", load_s * 1000),
        ("MiniLM forward, 16 tokens, no weights", median_ms(lambda: forward(False), args.repeats)),
        ("MiniLM forward, 16 tokens, all 72 attention maps", median_ms(lambda: forward(True), args.repeats)),
        ("run_encoder + label_heads, 16 tokens", median_ms(lambda: label_heads(*_run(pre, enc)), args.repeats)),
        (
            "all-heads figure build (6 x 12 x 16 x 16)",
            median_ms(lambda: head_grid(run.attentions, labels, (0, 2)), args.repeats),
        ),
        (
            "all-heads figure to JSON",
            median_ms(lambda: head_grid(run.attentions, labels, (0, 2)).to_json(), args.repeats),
        ),
    ]
    long_enc = pre.tokenizer.encode("word " * 38)  # 40 tokens: the most the thumbnails show
    long_run = run_encoder(pre.model, long_enc)
    long_labels = label_heads(long_run.attentions, long_run.tokens)
    rows.append(
        (
            "all-heads figure build (6 x 12 x 40 x 40)",
            median_ms(lambda: head_grid(long_run.attentions, long_labels, (0, 2)), args.repeats),
        )
    )
    mech = head_mechanics(teaching_model(0), english_tokenizer().encode("the cat sat on the mat", "it was happy"), 1, 2)
    mechanics_ms = median_ms(lambda: mechanics_figures(mech), args.repeats)
    rows.append(("mechanics figures build + JSON (small model, 12 tokens)", mechanics_ms))
    print("| what | median (ms) |")
    print("|---|---|")
    for name, ms in rows:
        print(f"| {name} | {ms:.1f} |")
    first, head_ms, sentence_ms = page_reruns(args.reruns)
    print(f"| page, first run (AppTest, includes model loads) | {first * 1000:.0f} |")
    print(f"| page rerun: change head (MiniLM run cached) | {head_ms:.0f} |")
    print(f"| page rerun: change sentence (new MiniLM run) | {sentence_ms:.0f} |")


def _run(pre, enc):
    run = run_encoder(pre.model, enc)
    return run.attentions, run.tokens


if __name__ == "__main__":
    main()
