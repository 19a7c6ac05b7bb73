"""Server-side script run time per lesson, from Streamlit's AppTest (no browser): separates
the model and page compute from the browser's rendering. Prints medians; not a test.

    .venv/bin/python -m benchmarks.apptest_runtime [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.browser import lessons
from tests.apptest_helpers import open_page


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    print("| lesson | first run (s) | rerun median (ms) | rerun max (ms) |")
    print("|---|---|---|---|")
    for lesson in lessons():
        t0 = time.perf_counter()
        at = open_page(lesson, timeout=120)
        first = time.perf_counter() - t0
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            at.run()
            times.append((time.perf_counter() - t) * 1000)
        assert not at.exception, at.exception
        print(f"| {lesson} | {first:.2f} | {statistics.median(times):.0f} | {max(times):.0f} |")


if __name__ == "__main__":
    main()
