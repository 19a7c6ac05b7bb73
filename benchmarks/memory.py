"""Does the server's memory stay flat? N reruns of one lesson in one browser session.

    .venv/bin/python -m benchmarks.memory [--reruns 500] [--lesson heads] [--all]

Each rerun types a different sentence and presses Enter, then waits for the run to finish,
so every cache on the way (tokenizer, model runs, figures) sees new input. The server's RSS is
read after a warm-up of 20 reruns and then every 100; the growth from the warm-up is the figure
to watch (target: under 20 MB for 500 reruns of the heaviest lesson).
"""

from __future__ import annotations

import argparse
import itertools
import time

from playwright.sync_api import sync_playwright

from benchmarks.browser import MAIN_INPUT, press_enter, rss_mb
from benchmarks.latency_breakdown import Frames
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, wait_healthy
from tests.browser.driver import wait_charts, wait_idle

WORDS = "the a cat dog bird man woman sat ran sang read on in to park river book garden old small".split()
WARM_UP = 20


def sentences():
    """Endless distinct short sentences from everyday words (so caches keep seeing new keys)."""
    for n in itertools.count(3):
        for combo in itertools.permutations(WORDS, 4):
            yield " ".join(combo[: 3 + n % 3])


def finish_run(page, frames: Frames, started: float, timeout_s: float = 120.0) -> None:
    """Wait for the server's "script finished" message of the run this change started."""
    deadline = started + timeout_s
    while not frames.since(started, "script_finished"):
        if time.perf_counter() > deadline:
            raise TimeoutError("the run did not finish")
        page.wait_for_timeout(10)  # Playwright delivers WebSocket events while it waits
    wait_idle(page)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reruns", type=int, default=500)
    ap.add_argument("--lesson", default="heads")
    ap.add_argument("--all", action="store_true", help="every section on one page (the heaviest view)")
    args = ap.parse_args()
    port = free_port()
    server = start_server(port)
    try:
        wait_healthy(port)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            frames = Frames()
            frames.attach(page)
            page.goto(f"http://127.0.0.1:{port}/{args.lesson}{'?all=1' if args.all else ''}")
            wait_charts(page, 1, timeout_ms=120_000)
            wait_idle(page)
            rss_start = rss_mb(server.pid)
            text = sentences()
            t0 = time.perf_counter()
            print(f"/{args.lesson}{' (every section)' if args.all else ''}: RSS after first load {rss_start:.1f} MB")
            base = None
            for i in range(1, args.reruns + 1):
                box = page.locator(MAIN_INPUT).first
                box.fill(next(text))
                started = time.perf_counter()
                press_enter(box)
                finish_run(page, frames, started)
                if i == WARM_UP:
                    base = rss_mb(server.pid)
                    print(f"after {i} reruns (warm-up): {base:.1f} MB")
                elif i % 100 == 0 or i == args.reruns:
                    now = rss_mb(server.pid)
                    print(f"after {i} reruns: {now:.1f} MB ({now - base:+.1f} MB since warm-up)", flush=True)
            errors = page.locator('[data-testid="stException"]').count()
            browser.close()
        print(f"{args.reruns} reruns in {time.perf_counter() - t0:.0f} s; error elements on the page: {errors}")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
