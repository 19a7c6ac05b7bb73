"""Where a first visit spends its time, from the page's own clock, with the server cold and warm.

    .venv/bin/python -m benchmarks.first_visit [--visits 5] [--warm-up] [--nginx] [--before REF] [lesson ...]

For each lesson: one visit to a freshly started server (its models not loaded yet: "cold"), then
`--visits` first visits from new browser profiles (nothing cached) to the now warm server, then
as many reloads of one tab (the app's scripts cached). With --warm-up, the server is first warmed
as `make run` warms it (scripts/warm_up.py: every page run once over the protocol), and the first
visit meets a server that has just started and been warmed, instead of a cold one. With --nginx, every
visit goes through nginx in front of the server, configured by the checkout's own deploy/nginx.conf, as in
a hall. Every time is read in the page, in ms from the start of navigation (performance.now()):

  html      the page's HTML has arrived
  socket    the app has booted: it opens its WebSocket to the server
  message   the server's first message has arrived
  big asked the largest script (plotly.js, loaded only once a chart is to be drawn) was asked for:
            about when the server's first chart reached the page
  big in    ... and has arrived
  scripts   the last of the app's JavaScript files has arrived
  chart     the first frame that shows a chart with data (after parsing plotly.js and drawing)

Medians over the visits; the cold row is one visit. With --before REF, a temporary checkout of REF is measured
the same way right after this one, lesson by lesson, so that both meet the same machine. Not a test: the
machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import ExitStack
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.side_by_side import checkout
from scripts.scale_out import nginx_in_front
from scripts.warm_up import warm_up
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, serving

# Before the app's own scripts: note when the socket opens, when its first message arrives, and
# the first animation frame in which a plotly chart holds data.
CLOCK = """(() => {
  const t = (window.__visit = {});
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      if (t.socket === undefined) t.socket = performance.now();
      this.addEventListener('message', () => { if (t.message === undefined) t.message = performance.now(); });
    }
  };
  const look = () => {
    const g = document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot');
    if (g && g.data && g.data.length) { t.chart = performance.now(); return; }
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
})()"""

READ = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const js = performance.getEntriesByType('resource').filter(r => r.name.split('?')[0].endsWith('.js'));
  const size = r => r.decodedBodySize || r.encodedBodySize || 0;
  const big = js.reduce((a, r) => (size(r) > size(a) ? r : a), js[0]);
  return {html: nav.responseEnd, scripts: Math.max(0, ...js.map(r => r.responseEnd)),
          big_asked: big.startTime, big_in: big.responseEnd, big_kb: size(big) / 1024,
          kb: js.reduce((s, r) => s + (r.encodedBodySize || 0), 0) / 1024,
          cached: js.every(r => r.transferSize < 1024), ...window.__visit};  // from the cache, or a 304
}"""
STAGES = ("html", "socket", "message", "big_asked", "big_in", "scripts", "chart")


def visit(page, url: str, reload: bool = False) -> dict:
    if reload:
        page.reload()
    else:
        page.goto(url)
    page.wait_for_function("() => window.__visit && window.__visit.chart !== undefined", timeout=120_000)
    return page.evaluate(READ)


def row(name: str, visits: list[dict]) -> str:
    cells = [f"{statistics.median(v[s] for v in visits):.0f}" for s in STAGES]
    return f"| {name} | {len(visits)} | " + " | ".join(cells) + " |"


def measure(browser, root: Path, name: str, lesson: str, args, sizes: set) -> None:
    """One lesson of one checkout: a first visit to a new server, then warm first visits and reloads."""
    t0 = time.perf_counter()
    with serving(root) as server, ExitStack() as proxy:
        port = int(server.rsplit(":", 1)[1])
        base = proxy.enter_context(nginx_in_front([port], root))[0] if args.nginx else server
        started = time.perf_counter() - t0
        first_state = "server cold"
        if args.warm_up:
            w0 = time.perf_counter()
            assert all(r.ok for r in warm_up(port)), "a page failed in the warm-up"
            first_state = f"server just warmed (warm-up {time.perf_counter() - w0:.1f} s)"
        firsts, reloads = [], []
        for i in range(args.visits + 1):  # the first one meets a cold (or just warmed) server
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            ctx.add_init_script(CLOCK)
            page = ctx.new_page()
            firsts.append(visit(page, f"{base}/{lesson}"))
            sizes.add((name, round(firsts[-1]["kb"]), round(firsts[-1]["big_kb"])))
            if i == args.visits:
                reloads = [visit(page, f"{base}/{lesson}", reload=True) for _ in range(args.visits)]
            ctx.close()
    print(row(f"{name}, {lesson}: {first_state} (started in {started:.1f} s)", firsts[:1]))
    print(row(f"{name}, {lesson}: first visit, server warm", firsts[1:]))
    print(row(f"{name}, {lesson}: reload", reloads))
    if not all(v["cached"] for v in reloads):
        print(f"({name}, {lesson}: a reload downloaded a script again)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--visits", type=int, default=5)
    ap.add_argument("--warm-up", action="store_true", help="warm the server as `make run` does first")
    ap.add_argument("--nginx", action="store_true", help="visit through nginx (deploy/nginx.conf), as in a hall")
    ap.add_argument("--before", help="also measure this commit, from a temporary checkout")
    ap.add_argument("lessons", nargs="*", default=["attention", "padding", "masking"])
    args = ap.parse_intermixed_args()
    print("| visit | n | html | socket (app booted) | first message | largest asked | in | all scripts in | chart |")
    print("|---|---|---|---|---|---|---|---|---|")
    sizes: set = set()
    with ExitStack() as stack, sync_playwright() as p:
        roots = {"this": ROOT}
        if args.before:
            roots[args.before] = stack.enter_context(checkout(args.before))
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for lesson in args.lessons:
            for name, root in roots.items():
                measure(browser, root, name, lesson, args, sizes)
        browser.close()
    for name, kb, big in sorted(sizes):
        print(f"\n{name}: scripts downloaded on a first visit: {kb:,} KB encoded; the largest {big:,} KB decoded")


if __name__ == "__main__":
    main()
