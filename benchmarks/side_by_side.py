"""Change -> chart time of this checkout against an earlier commit, measured side by side.

    .venv/bin/python -m benchmarks.side_by_side REF [--changes 20] [--query model=minilm] [lesson ...]

On a shared machine the same benchmark moves by a third from one hour to the next, so two
separate runs cannot show a 5% change. This starts two servers, one from a temporary checkout of
REF and one from this folder, and makes the same edits on both in turn (ABBA order), so that
both see the same machine. Prints each version's p50 and p95 and the ratio of the p50s.
--query adds URL parameters to this checkout's pages only: e.g. this checkout on another model
against REF on its default one.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.browser import SENTENCES, change_and_wait, lessons, open_warm, pct
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, serving
from tests.browser.driver import wait_idle


@contextmanager
def checkout(ref: str):
    """A temporary git worktree of ref, removed afterwards."""
    where = Path(tempfile.mkdtemp(prefix="encoder-lab-ref-")) / "app"
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(where), ref], cwd=ROOT, check=True)
    bundle = ROOT / "static" / "plotly.min.js"  # what make setup puts beside a commit that loads it
    if (where / "scripts" / "plotly_bundle.py").exists() and bundle.exists():
        shutil.copyfile(bundle, where / "static" / "plotly.min.js")
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, check=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("ref", help="the commit to compare with, e.g. HEAD~1")
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--query", default="", help="URL parameters for this checkout's pages, e.g. model=mlm")
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_intermixed_args()
    with checkout(args.ref) as ref_root, ExitStack() as servers:
        urls = {
            args.ref: servers.enter_context(serving(ref_root)),
            "this checkout": servers.enter_context(serving()),
        }
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            this = f"this ({args.query})" if args.query else "this"
            print(f"| lesson | {args.ref} p50 (ms) | {this} p50 (ms) | ratio | {args.ref} p95 | this p95 |")
            print("|---|---|---|---|---|---|")
            for lesson in args.lessons or lessons():
                query = {args.ref: "", "this checkout": f"?{args.query}" if args.query else ""}
                pages = {name: open_warm(browser, f"{url}/{lesson}{query[name]}") for name, url in urls.items()}
                ms: dict[str, list[float]] = {name: [] for name in urls}
                names = list(urls)
                for i in range(args.changes):
                    text = SENTENCES[i % len(SENTENCES)] + ("" if i % 2 else " today")
                    for name in names if i % 2 == 0 else names[::-1]:
                        ms[name].append(change_and_wait(pages[name], text) * 1000)
                        wait_idle(pages[name])
                before, after = (ms[name] for name in names)
                p_before, p_after = statistics.median(before), statistics.median(after)
                print(
                    f"| {lesson} | {p_before:.0f} | {p_after:.0f} | {p_after / p_before:.2f} "
                    f"| {pct(before, 0.95):.0f} | {pct(after, 0.95):.0f} |",
                    flush=True,
                )
                for page in pages.values():
                    page.context.close()
            browser.close()


if __name__ == "__main__":
    main()
