"""Change -> chart time of this checkout against an earlier commit, measured side by side.

    .venv/bin/python -m benchmarks.side_by_side REF [--changes 20] [lesson ...]

On a shared machine the same benchmark moves by a third from one hour to the next, so two
separate runs cannot show a 5% change. This starts two servers, one from a temporary checkout of
REF and one from this folder, and makes the same edits on both in turn (ABBA order), so that
both see the same machine. Prints each version's p50 and p95 and the ratio of the p50s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser import SENTENCES, change_and_wait, lessons, pct
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, free_port, start_server, wait_healthy
from tests.browser.driver import wait_charts, wait_idle


@contextmanager
def checkout(ref: str):
    """A temporary git worktree of ref, removed afterwards."""
    where = Path(tempfile.mkdtemp(prefix="encoder-lab-ref-")) / "app"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), ref], cwd=ROOT, check=True)
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, check=False)


def open_lesson(browser, url: str):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(url)
    wait_charts(page, 1, timeout_ms=120_000)
    wait_idle(page)
    change_and_wait(page, "warm up the caches please")  # the first change of a session is slower
    wait_idle(page)
    return context, page


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ref", help="the commit to compare with, e.g. HEAD~1")
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_intermixed_args()
    with checkout(args.ref) as ref_root:
        roots = {args.ref: ref_root, "this checkout": ROOT}
        ports = {name: free_port() for name in roots}
        servers = [start_server(ports[name], root=root) for name, root in roots.items()]
        try:
            for port in ports.values():
                wait_healthy(port)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                print(f"| lesson | {args.ref} p50 (ms) | this p50 (ms) | ratio | {args.ref} p95 | this p95 |")
                print("|---|---|---|---|---|---|")
                for lesson in args.lessons or lessons():
                    opened = {name: open_lesson(browser, f"http://127.0.0.1:{ports[name]}/{lesson}") for name in roots}
                    ms: dict[str, list[float]] = {name: [] for name in roots}
                    names = list(roots)
                    for i in range(args.changes):
                        text = SENTENCES[i % len(SENTENCES)] + ("" if i % 2 else " today")
                        for name in names if i % 2 == 0 else names[::-1]:
                            page = opened[name][1]
                            ms[name].append(change_and_wait(page, text) * 1000)
                            wait_idle(page)
                    before, after = (ms[name] for name in names)
                    p_before, p_after = statistics.median(before), statistics.median(after)
                    print(
                        f"| {lesson} | {p_before:.0f} | {p_after:.0f} | {p_after / p_before:.2f} "
                        f"| {pct(before, 0.95):.0f} | {pct(after, 0.95):.0f} |",
                        flush=True,
                    )
                    for context, _ in opened.values():
                        context.close()
                browser.close()
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=10)


if __name__ == "__main__":
    main()
