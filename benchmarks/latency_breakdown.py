"""Where a change's time goes: server run vs browser drawing, read from the WebSocket.

    .venv/bin/python -m benchmarks.latency_breakdown [--changes 10] [lesson ...]

For each change (type a sentence + Enter) it records, from the Enter key's keydown in the page:
when the page sends the change, when the server's first message, first chart and "script
finished" message arrive, and the frame in which a chart on the page shows new data. Every time
is taken inside the page on its own clock (benchmarks/page_clock.py); Python only reads which
kind each message was, matched to the page's arrival times by order.
"""

from __future__ import annotations

import argparse
import statistics
import time

from playwright.sync_api import sync_playwright
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import page_clock
from benchmarks.browser import MAIN_INPUT, SENTENCES, lessons, press_enter
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, serving
from tests.browser.driver import wait_charts, wait_idle


class Frames:
    """Arrival times of the server's messages on the page's WebSocket."""

    def __init__(self) -> None:
        self.events: list[tuple[float, str]] = []

    def attach(self, page) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", self._received))

    def _received(self, payload) -> None:
        now = time.perf_counter()
        if isinstance(payload, str):
            return
        try:
            msg = ForwardMsg.FromString(payload)
            kind = msg.WhichOneof("type") or "?"
            if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                kind = msg.delta.new_element.WhichOneof("type") or kind
        except Exception:  # noqa: BLE001 - a frame we cannot read is simply not timed
            kind = "?"
        self.events.append((now, kind))

    def since(self, t0: float, kind: str | None = None) -> list[float]:
        return [t - t0 for t, k in self.events if t >= t0 and (kind is None or k == kind)]


def open_watched(browser, url: str, timeout_ms: int = 120_000):
    """A new browser context on url with its WebSocket timed: (context, page, frames), once the
    first chart is drawn and the run has finished."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(page_clock.RECORD_SOCKET)
    page = context.new_page()
    frames = Frames()
    frames.attach(page)
    page.goto(url)
    wait_charts(page, 1, timeout_ms=timeout_ms)
    wait_idle(page)
    return context, page, frames


def measure(page, frames: Frames, text: str, timeout_s: float = 30.0) -> tuple[float, ...]:
    """One change: seconds from Enter to (change sent, first message, first chart, script
    finished, chart redrawn), and the same change as timed from Python."""
    box = page.locator(MAIN_INPUT).first
    box.fill(text)
    page_clock.arm(page)
    started = time.perf_counter()
    press_enter(box)
    page_clock.wait_drawn(page, timeout_s)
    from_python = time.perf_counter() - started  # includes Playwright's round trips, for comparison
    wait_idle(page)
    page.wait_for_timeout(50)  # let Playwright deliver the last WebSocket events
    t = page.evaluate(page_clock.READ)
    kinds = [k for _, k in frames.events][t["firstReceived"] :]
    arrived = list(zip(t["received"], kinds, strict=False))

    def first(*kinds: str) -> float:
        return next(((at - t["key"]) / 1000 for at, k in arrived if not kinds or k in kinds), float("nan"))

    sent = (t["sent"] - t["key"]) / 1000
    chart = first("plotly_chart", "bidi_component")  # Streamlit's chart element, or our own chart component
    return sent, first(), chart, first("script_finished"), page_clock.latency_s(t), from_python


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--changes", type=int, default=10)
    ap.add_argument("lessons", nargs="*")
    args = ap.parse_args()
    with serving() as url:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            print(
                "| lesson | change sent (ms) | first message (ms) | first chart arrives (ms) "
                "| script finished (ms) | chart redrawn (ms) | timed from Python (ms) |"
            )
            print("|---|---|---|---|---|---|---|")
            for lesson in args.lessons or lessons():
                ctx, page, frames = open_watched(browser, f"{url}/{lesson}")
                rows = [
                    measure(page, frames, SENTENCES[i % len(SENTENCES)] + ("" if i % 2 else " today"))
                    for i in range(args.changes)
                ]
                med = [statistics.median(r[j] for r in rows) * 1000 for j in range(6)]
                print(f"| {lesson} | " + " | ".join(f"{m:.0f}" for m in med) + " |")
                ctx.close()
            browser.close()


if __name__ == "__main__":
    main()
