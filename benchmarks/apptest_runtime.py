"""Server-side script run time per lesson, from Streamlit's AppTest (no browser): separates
the model and page compute from the browser's rendering. Prints medians for the default view
(the first tab) and for every section on one page; not a test.

    .venv/bin/python -m benchmarks.apptest_runtime [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.browser import lessons
from tests.apptest_helpers import open_page


def rerun_times(lesson: str, runs: int, every_section: bool) -> tuple[float, list[float]]:
    t0 = time.perf_counter()
    at = open_page(lesson, timeout=120, every_section=every_section)
    first = time.perf_counter() - t0
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - t) * 1000)
    assert not at.exception, at.exception
    return first, times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    print("| lesson | first run (s) | rerun median, open tab (ms) | rerun median, every section (ms) |")
    print("|---|---|---|---|")
    for lesson in lessons():
        first, tab = rerun_times(lesson, args.runs, every_section=False)
        _, every = rerun_times(lesson, args.runs, every_section=True)
        print(f"| {lesson} | {first:.2f} | {statistics.median(tab):.0f} | {statistics.median(every):.0f} |")


if __name__ == "__main__":
    main()
