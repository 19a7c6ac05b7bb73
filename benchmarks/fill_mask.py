"""The masking lesson before and after its fill-in-the-blank moved to MiniLM: no slower, no hungrier.

    .venv/bin/python -m benchmarks.fill_mask --before ../main [--visits 5] [--changes 10]

For each checkout (--before, another checkout of the app, e.g. main's; and this one), on a server of
its own started from that checkout:

  cold visit     a browser's first visit to /masking on a server that has just started: its models
                 load during this visit (ms to the first chart, on the page's clock)
  warm visit     first visits from new browser profiles once the server is warm (median)
  change         type a new sentence in the lesson's first box, Enter -> a chart redrawn with the new
                 data (median and p95 over --changes, timed in the page)
  RSS            the server's resident memory after those visits (the masking lesson's models loaded),
                 and after `make run`'s warm-up has run every page once (every model loaded)
  200 blanks     one fill-in-the-blank over "the [MASK] " * 200 on MiniLM with the lab's head, in a
                 child process of that checkout: what a student who types 200 blanks costs the server

Not a test: the machine is shared and noisy; compare the two columns of one run.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser import SENTENCES, change_and_wait, open_warm, pct, rss_mb
from benchmarks.first_visit import CLOCK, visit
from scripts.warm_up import warm_up
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, wait_healthy
from tests.browser.driver import wait_idle

HERE = Path(__file__).resolve().parent.parent

# Run inside the checkout measured: its own lesson code on MiniLM under the lab's head.
BLANKS = """
import time, torch
torch.set_num_threads(1)
from encoder_core.lessons import masking as lesson
from encoder_core.pretrained.minilm_mlm import load_minilm_mlm
model, tok, _ = load_minilm_mlm()
text = "the [MASK] " * 200
lesson.fill_mask_view(model, tok, "the [MASK] sat")
t = time.perf_counter()
view = lesson.fill_mask_view(model, tok, text)
print(time.perf_counter() - t, len(view.predictions))
"""


def blanks_seconds(root: Path) -> tuple[float, int]:
    out = subprocess.run([sys.executable, "-c", BLANKS], cwd=root, capture_output=True, text=True, check=True)
    seconds, ranked = out.stdout.split()[-2:]
    return float(seconds), int(ranked)


def measure(root: Path, visits: int, changes: int) -> dict[str, float]:
    port = free_port()
    server = start_server(port, root=root)
    url = f"http://127.0.0.1:{port}/masking"
    out: dict[str, float] = {}
    try:
        wait_healthy(port)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            firsts = []
            for _ in range(visits + 1):  # the first meets the cold server
                ctx = browser.new_context(viewport={"width": 1440, "height": 900})
                ctx.add_init_script(CLOCK)
                firsts.append(visit(ctx.new_page(), url)["chart"])
                ctx.close()
            out["cold visit (ms)"] = firsts[0]
            out["warm visit (ms)"] = statistics.median(firsts[1:])
            page = open_warm(browser, url, {"width": 1440, "height": 900})
            ms = []
            for i in range(changes):
                ms.append(1000 * change_and_wait(page, SENTENCES[i % len(SENTENCES)] + ("" if i % 2 else " today")))
                wait_idle(page)
            out["change -> chart p50 (ms)"] = statistics.median(ms)
            out["change -> chart p95 (ms)"] = pct(ms, 0.95)
            out["RSS, masking visited (MB)"] = rss_mb(server.pid)
            browser.close()
        assert all(r.ok for r in warm_up(port)), "a page failed in the warm-up"
        out["RSS, every page run (MB)"] = rss_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=10)
    seconds, ranked = blanks_seconds(root)
    out["200 blanks: server time (ms)"] = 1000 * seconds
    out["200 blanks: ranked"] = ranked
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, required=True, help="the checkout to compare with (e.g. main's)")
    ap.add_argument("--visits", type=int, default=5)
    ap.add_argument("--changes", type=int, default=10)
    args = ap.parse_args()
    t0 = time.perf_counter()
    runs = {"before": measure(args.before.resolve(), args.visits, args.changes)}
    runs["after"] = measure(HERE, args.visits, args.changes)
    print("| masking lesson | before | after |")
    print("|---|---|---|")
    for key in runs["before"]:
        print(f"| {key} | {runs['before'][key]:,.0f} | {runs['after'][key]:,.0f} |")
    print(f"\n({time.perf_counter() - t0:.0f} s in all; {args.visits} warm visits, {args.changes} changes each)")


if __name__ == "__main__":
    main()
