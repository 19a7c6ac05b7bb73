"""The server's memory as the sidebar's three models are loaded one after another.

    .venv/bin/python -m benchmarks.model_memory

One server, one browser session: the attention lesson on the small model, then on the lab's
trained MLM, then on all-MiniLM-L6-v2, then the heads and masking lessons (which load what they
use; masking on MiniLM loads the lab's MLM head over the published layers). The server's RSS is
read once the server is healthy and after each page has drawn its first chart, so each row shows
what that model (or lesson) added. Memory does not depend on the other
load on the machine, so this figure is steadier than the timing benchmarks.
"""

from __future__ import annotations

from playwright.sync_api import sync_playwright

from benchmarks.browser import rss_mb
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, wait_healthy
from tests.browser.driver import wait_charts, wait_idle

STEPS = (
    ("attention", "small"),
    ("attention", "mlm"),
    ("attention", "minilm"),
    ("padding", "minilm"),
    ("heads", "minilm"),
    ("masking", "mlm"),
    ("masking", "minilm"),  # MiniLM under the lab's MLM head: shares the published layers
)


def main() -> None:
    port = free_port()
    server = start_server(port)
    try:
        wait_healthy(port)
        rows = [("server started, nothing opened", rss_mb(server.pid))]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for lesson, model in STEPS:
                page.goto(f"http://localhost:{port}/{lesson}?model={model}", timeout=120_000)
                wait_charts(page, 1, timeout_ms=120_000)
                wait_idle(page, timeout_ms=120_000)
                rows.append((f"/{lesson}?model={model}", rss_mb(server.pid)))
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    print("| after | server RSS | added |")
    print("|---|---|---|")
    previous = rows[0][1]
    for name, rss in rows:
        print(f"| {name} | {rss:.0f} MB | {rss - previous:+.0f} MB |")
        previous = rss
    print(f"\nall three models loaded: {rows[-1][1]:.0f} MB")


if __name__ == "__main__":
    main()
