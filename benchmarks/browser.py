"""Browser-side figures: cold start, warm page load, widget change -> chart updated, memory,
and concurrent sessions. Prints tables; not a test (these machines are shared and noisy).

    .venv/bin/python -m benchmarks.browser [--changes 20] [--sessions 20]

Each lesson is driven the way a student would: type a sentence into the lesson's first text
box, press Enter, and wait until a chart's drawn data differs (timed inside the page, from the
key press to the frame that shows the new chart: see benchmarks/page_clock.py). "First visit" is a new browser
context (nothing cached); "reload" is the same tab reloaded, as a returning student.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright

from benchmarks import page_clock
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, wait_healthy
from tests.browser.driver import wait_charts, wait_idle

SENTENCES = [
    "the cat sat on the mat",
    "the dog ran to the park",
    "a bird sang in the garden",
    "the old man read a book",
    "she sat on the bank of the river",
]
MAIN_INPUT = '[data-testid="stMain"] [data-testid="stTextInput"] input, [data-testid="stMain"] textarea'


# The text box whose change redraws the open section's chart, where it is not the page's first.
TEXT_BOX = {
    "outputs": "Sentence to tag",  # the first tab draws the tagging labels of that sentence
    "padding": "Single sentence",  # the padded row every section draws
}


def text_box(page):
    path = urlparse(page.url).path.strip("/")
    label = TEXT_BOX.get(path)
    return page.get_by_role("textbox", name=label, exact=True) if label else page.locator(MAIN_INPUT).first


def lessons() -> list[str]:
    """url paths of the lessons (every one has charts), in the navigation's order."""
    from encoder_core.lessons import LESSON_IDS

    return list(LESSON_IDS)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def press_enter(box) -> None:
    box.press("Enter") if box.evaluate("e => e.tagName") == "INPUT" else box.press("Control+Enter")


def change_and_time(page, text: str, timeout_s: float = 30.0) -> tuple[float, float]:
    """Type text + Enter in the lesson's first text box: (when Enter was pressed on
    time.perf_counter's clock, seconds from the key press to a chart redrawn with new data, timed
    inside the page)."""
    box = text_box(page)
    box.fill(text)
    page_clock.arm(page)
    t0 = time.perf_counter()
    press_enter(box)
    return t0, page_clock.latency_s(page_clock.wait_drawn(page, timeout_s))


def change_and_wait(page, text: str, timeout_s: float = 30.0) -> float:
    return change_and_time(page, text, timeout_s)[1]


def slide_and_wait(page, slider: str, step: int, timeout_s: float = 30.0) -> float:
    """Move the slider named `slider` one step (right if step > 0, else left) with the keyboard: seconds from
    the key press to a chart redrawn with new data, timed inside the page."""
    page.get_by_role("slider", name=slider).first.focus()
    key = "ArrowRight" if step > 0 else "ArrowLeft"
    page_clock.arm(page, (key,))
    page.keyboard.press(key)
    return page_clock.latency_s(page_clock.wait_drawn(page, timeout_s))


def open_warm(browser, url: str, viewport: dict | None = None):
    """A new browser context on url, its chart drawn and one change made (a session's first
    change is slower than the rest): the page, ready to be timed."""
    page = browser.new_context(viewport=viewport or {"width": 1400, "height": 1000}).new_page()
    page.goto(url)
    wait_charts(page, 1, timeout_ms=120_000)
    wait_idle(page)
    change_and_wait(page, "warm up the caches please")
    wait_idle(page)
    return page


def changes_in_turn(
    targets: dict[str, str], changes: int, sliders: dict[str, str] | None = None
) -> dict[str, list[float]]:
    """The same edits on every page in turn (the order alternating, so each sees the same machine):
    each page's change -> chart times in ms, timed in the page. A page named in `sliders` is changed by
    moving that slider one step (right, then back left) instead of typing a sentence."""
    sliders = sliders or {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pages = {name: open_warm(browser, url) for name, url in targets.items()}
        ms: dict[str, list[float]] = {name: [] for name in targets}
        for i in range(changes):
            text = SENTENCES[i % len(SENTENCES)] + ("" if i % 2 else " today")
            for name in targets if i % 2 == 0 else reversed(targets):
                if name in sliders:
                    ms[name].append(slide_and_wait(pages[name], sliders[name], 1 if i % 2 == 0 else -1) * 1000)
                else:
                    ms[name].append(change_and_wait(pages[name], text) * 1000)
                wait_idle(pages[name])
        browser.close()
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--session-changes", type=int, default=10)
    args = ap.parse_args()
    port = free_port()
    t_start = time.perf_counter()
    server = start_server(port)
    url = f"http://127.0.0.1:{port}"
    pages = lessons()
    try:
        wait_healthy(port)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{url}/{pages[0]}")
            wait_charts(page, 1, timeout_ms=120_000)
            cold = time.perf_counter() - t_start
            rss_idle_after_first = rss_mb(server.pid)
            print(f"cold start (server start -> first chart on /{pages[0]}): {cold:.2f} s")
            print(
                "\n| lesson | first visit -> first chart (s) | reload -> first chart (s) "
                "| change -> chart p50 (ms) | p95 (ms) |"
            )
            print("|---|---|---|---|---|")
            for lesson in pages:
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                pg = ctx.new_page()
                t0 = time.perf_counter()
                pg.goto(f"{url}/{lesson}")
                wait_charts(pg, 1, timeout_ms=60_000)
                warm = time.perf_counter() - t0
                wait_idle(pg)
                times = []
                for i in range(args.changes):
                    times.append(change_and_wait(pg, SENTENCES[i % len(SENTENCES)] + ("" if i % 2 else " today")))
                    wait_idle(pg)
                ms = [t * 1000 for t in times]
                # A returning student: the browser has the app's scripts cached; the server is warm.
                t0 = time.perf_counter()
                pg.reload()
                wait_charts(pg, 1, timeout_ms=60_000)
                reload = time.perf_counter() - t0
                print(f"| {lesson} | {warm:.2f} | {reload:.2f} | {statistics.median(ms):.0f} | {pct(ms, 0.95):.0f} |")
                ctx.close()
            rss_one = rss_mb(server.pid)
            browser.close()
        concurrency(url, pages[0], args.sessions, args.session_changes, server.pid, rss_one, rss_idle_after_first)
    finally:
        server.terminate()
        server.wait(timeout=10)


def concurrency(url: str, lesson: str, n: int, changes: int, pid: int, rss_one: float, rss_first: float) -> None:
    """n browser contexts at once on one lesson, each making `changes` edits."""
    latencies: list[float] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        rss_before = rss_mb(pid)
        contexts = [browser.new_context(viewport={"width": 1200, "height": 900}) for _ in range(n)]
        pages = [c.new_page() for c in contexts]
        for pg in pages:
            pg.goto(f"{url}/{lesson}")
        for pg in pages:
            wait_charts(pg, 1, timeout_ms=180_000)
            wait_idle(pg, timeout_ms=180_000)
        rss_n = rss_mb(pid)
        # Playwright's sync API is single-threaded: fire every session's edit, then watch them all
        # round-robin (a cheap check inside each page), so the server sees the edits concurrently.
        # Each page times its own edit on its own clock, so the round-robin adds nothing to it.
        for round_ in range(changes):
            waiting = set()
            for i, pg in enumerate(pages):
                try:
                    box = pg.locator(MAIN_INPUT).first
                    box.fill(SENTENCES[(round_ + i) % len(SENTENCES)] + f" {'today' if round_ % 2 else ''}")
                    page_clock.arm(pg)
                    press_enter(box)
                    waiting.add(i)
                except Exception as exc:  # noqa: BLE001 - count and report every failure
                    errors.append(repr(exc))
            deadline = time.perf_counter() + 120
            while waiting and time.perf_counter() < deadline:
                for i in list(waiting):
                    try:
                        if pages[i].evaluate(page_clock.DRAWN):
                            latencies.append(page_clock.latency_s(pages[i].evaluate(page_clock.READ)))
                            waiting.discard(i)
                    except Exception as exc:  # noqa: BLE001
                        errors.append(repr(exc))
                        waiting.discard(i)
            errors += ["timeout"] * len(waiting)
            for pg in pages:
                wait_idle(pg, timeout_ms=120_000)
                if pg.locator('[data-testid="stException"]').count():
                    errors.append("stException")
        rss_after = rss_mb(pid)
        browser.close()
    ms = [t * 1000 for t in latencies]
    print(
        f"\n{n} concurrent sessions on /{lesson}, {changes} changes each: "
        f"p50 {statistics.median(ms):.0f} ms, p95 {pct(ms, 0.95):.0f} ms, errors {len(errors)}"
    )
    print(
        f"server RSS: after the first session {rss_first:.0f} MB, after every lesson once {rss_one:.0f} MB, "
        f"before the {n} sessions {rss_before:.0f} MB, with them open {rss_n:.0f} MB, after their edits "
        f"{rss_after:.0f} MB; marginal per session {(rss_n - rss_before) / n:.2f} MB"
    )


if __name__ == "__main__":
    main()
