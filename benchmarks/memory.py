"""Does the server's memory stay flat? N reruns of one lesson in one session.

    .venv/bin/python -m benchmarks.memory [--reruns 500] [--lesson heads] [--all]

Each rerun sends a different sentence and waits for the run to finish, so every cache on the way
(tokenizer, model runs, figures) sees new input. The session is held over Streamlit's own protocol
(scripts.streamlit_protocol), as a browser holds it, without drawing the charts: the server does
the same work, at less than half the wall time of typing into a browser. The server's RSS is
read after a warm-up of 20 reruns and then every 100; the growth from the warm-up is the figure
to watch (target: under 20 MB for 500 reruns of the heaviest lesson).
"""

from __future__ import annotations

import argparse
import itertools
import time
from dataclasses import dataclass

import websockets
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.browser import rss_mb
from benchmarks.hall_load import LESSON_WIDGETS
from scripts.streamlit_protocol import Session, run_coroutine
from tests.browser.conftest import free_port, start_server, wait_healthy

WORDS = "the a cat dog bird man woman sat ran sang read on in to park river book garden old small".split()
WARM_UP = 20


def sentences():
    """Distinct short sentences from everyday words (so caches keep seeing new keys; a repeat would
    not even rerun). 20 words give 116,280 four-word orders."""
    for words in itertools.permutations(WORDS, 4):
        yield " ".join(words)


@dataclass
class Growth:
    rss_first_load: float  # MB, after the page first drew
    rss_warm: float  # MB, after WARM_UP reruns
    rss_final: float  # MB, after every rerun
    seconds: float
    errors: int  # runs that did not finish or showed an exception

    @property
    def grown(self) -> float:
        return self.rss_final - self.rss_warm


def rerun_growth(lesson: str, reruns: int, every_section: bool = False, report=lambda line: None) -> Growth:
    """A fresh server, one session on `lesson`, `reruns` new sentences; the server's RSS along the way."""
    port = free_port()
    server = start_server(port)
    query = "all=1" if every_section else ""

    async def drive() -> Growth:
        async with websockets.connect(
            f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"], max_size=None, open_timeout=60
        ) as ws:
            session = Session(ws, lesson, query)
            errors = 0 if await session.run([]) else 1
            first = base = rss_mb(server.pid)
            report(f"/{lesson}{' (every section)' if every_section else ''}: RSS after first load {first:.1f} MB")
            text, t0 = sentences(), time.perf_counter()
            for i in range(1, reruns + 1):
                state = WidgetState(id=session.widget_ids[LESSON_WIDGETS[lesson][0]][0], string_value=next(text))
                errors += not await session.run([state])
                if i == min(WARM_UP, reruns):
                    base = rss_mb(server.pid)
                    report(f"after {i} reruns (warm-up): {base:.1f} MB")
                elif i % 100 == 0 or i == reruns:
                    now = rss_mb(server.pid)
                    report(f"after {i} reruns: {now:.1f} MB ({now - base:+.1f} MB since warm-up)")
            return Growth(first, base, rss_mb(server.pid), time.perf_counter() - t0, errors)

    try:
        wait_healthy(port)
        return run_coroutine(drive())
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reruns", type=int, default=500)
    ap.add_argument("--lesson", default="heads")
    ap.add_argument("--all", action="store_true", help="every section on one page (the heaviest view)")
    args = ap.parse_args()
    g = rerun_growth(args.lesson, args.reruns, args.all, report=lambda line: print(line, flush=True))
    summary = f"{args.reruns} reruns in {g.seconds:.0f} s; grown {g.grown:+.1f} MB since warm-up"
    print(f"{summary}; runs with an error: {g.errors}")


if __name__ == "__main__":
    main()
