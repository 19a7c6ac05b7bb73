"""Warm a freshly started app server, so that its first student does not wait for the first run.

    .venv/bin/python -m scripts.warm_up [--port 8501] [--timeout 180] [--server-pid PID]

A server's very first run imports torch and plotly and builds the models, about 2 s that the first
visitor would otherwise wait on top of a normal first visit. This waits for the server's health
check, then opens one session over Streamlit's own protocol (no browser) and runs the home page and
every lesson once with its defaults: the imports, the models and the default pages' caches are then
ready for everyone. `make run` starts it beside the server, with --server-pid naming that server: it
then warms only a server that this process holds the port of, and says so if that server stopped (its
port was busy, say) instead of warming whatever else answers there. Loopback only; it gives up, saying
so, after --timeout seconds, and it never changes anything a student sees.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from encoder_core.lessons import LESSON_IDS  # noqa: E402
from scripts.ports import is_alive, listens_on  # noqa: E402
from scripts.streamlit_protocol import Session, connect, run_coroutine, wait_healthy  # noqa: E402

PAGES = ("", *LESSON_IDS)  # "" is the home page


@dataclass
class PageRun:
    page: str
    seconds: float
    ok: bool
    exceptions: list[str]


async def run_pages(port: int, pages: tuple[str, ...]) -> list[PageRun]:
    """One session that runs each page once, in order, with its defaults."""
    runs = []
    async with connect(f"127.0.0.1:{port}") as ws:
        for page in pages:
            session = Session(ws, page, "")
            started = time.perf_counter()
            ok = await session.run([])
            runs.append(PageRun(page or "home", time.perf_counter() - started, ok, session.exceptions))
    return runs


class NotOurServer(Exception):
    """The server the warm-up was started for is gone, or another program holds its port."""


def wait_for_own_server(port: int, pid: int, timeout: float) -> None:
    """Return once process pid listens on port; NotOurServer as soon as pid has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_alive(pid):
            raise NotOurServer(f"the server started on port {port} has stopped")
        if listens_on(pid, port) is not False:  # True, or None where it cannot be read
            return
        time.sleep(0.25)
    raise NotOurServer(f"the server started for port {port} does not hold it after {timeout:.0f} s")


def warm_up(
    port: int, timeout: float = 180.0, pages: tuple[str, ...] = PAGES, server_pid: int | None = None
) -> list[PageRun]:
    """Wait for the server on this loopback port (process server_pid, if given), then run every page
    once. Raises TimeoutError, or NotOurServer."""
    deadline = time.monotonic() + timeout
    if server_pid is not None:
        wait_for_own_server(port, server_pid, timeout)
    wait_healthy(port, timeout)
    return run_coroutine(asyncio.wait_for(run_pages(port, pages), max(1.0, deadline - time.monotonic())))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8501)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the server and the runs")
    ap.add_argument("--server-pid", type=int, help="the process of the server to warm: no other is warmed")
    args = ap.parse_args()
    try:
        runs = warm_up(args.port, args.timeout, server_pid=args.server_pid)
    except NotOurServer as e:
        print(f"warm-up: nothing warmed: {e}")
        return 1
    except (TimeoutError, OSError, websockets.WebSocketException) as e:
        print(f"warm-up: skipped ({e or type(e).__name__}); the first visitor will wait for the first run")
        return 1
    total = sum(r.seconds for r in runs)
    failed = [r for r in runs if not r.ok]
    print(f"warm-up: {len(runs) - len(failed)} of {len(runs)} pages run in {total:.1f} s; the server is ready")
    for r in failed:
        print(f"warm-up: {r.page} did not finish cleanly: {'; '.join(r.exceptions) or 'the run failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
