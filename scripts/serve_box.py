"""One box of a lecture hall: K app processes on consecutive ports, each warmed up, and each replaced
within about a second if it dies (a crash, the out-of-memory killer, a `kill`).

    .venv/bin/python -m scripts.serve_box [--processes 2] [--first-port 8601] [--cpus 0,1]

A box is one machine. A hall larger than one box runs this on every box, one PostgreSQL for the class
room (ENCODER_LAB_DATABASE_URL, the same on every box), and one nginx in front of all of them
(`python -m scripts.serve_proxy --upstream <box>:<port> ...`, deploy/nginx.conf): docs/deploy.md.

Streamlit keeps a session in the process that opened its WebSocket. When a process dies, its students'
pages lose the connection and try again: nginx sends them to a live process (or to this one's
replacement), where the page runs anew from its link, which holds every control (ui.frame.state), so
the student sees the same view. What is lost is what only that session held: its answers and
predictions of this visit. The class room's votes are in the database and are not lost.

--cpus pins the box's processes to those CPUs (taskset): on one machine, that is how two boxes with a
core each are simulated for benchmarks.hall_load --boxes.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.streamlit_protocol import wait_healthy  # noqa: E402
from scripts.warm_up import warm_up  # noqa: E402

CHECK_EVERY_S = 0.5
TASKSET = shutil.which("taskset")


def app_command(port: int, root: Path = ROOT) -> list[str]:
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(root / "app.py"),
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]


@dataclass
class Box:
    ports: list[int]
    env: dict[str, str] = field(default_factory=dict)
    cpus: str | None = None  # "0" or "0,1": pin every process of the box to these CPUs
    warm: bool = True  # run every page once after a (re)start, before students arrive
    processes: dict[int, subprocess.Popen] = field(default_factory=dict)
    restarts: int = 0

    def _start(self, port: int) -> subprocess.Popen:
        cmd = app_command(port)
        if self.cpus is not None and TASKSET:
            cmd = [TASKSET, "-c", self.cpus, *cmd]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **self.env}
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.processes[port] = proc
        if self.warm:  # in the background: the supervisor goes on watching the other processes
            threading.Thread(target=_warm_quietly, args=(port,), daemon=True).start()
        return proc

    def start(self) -> None:
        for port in self.ports:
            self._start(port)

    def wait_healthy(self, timeout: float = 120.0) -> None:
        for port in self.ports:
            wait_healthy(port, timeout)

    def replace_dead(self) -> list[int]:
        """Start a new process on the port of every process that has exited; the ports replaced."""
        dead = [port for port, proc in self.processes.items() if proc.poll() is not None]
        for port in dead:
            self._start(port)
            self.restarts += 1
        return dead

    def stop(self) -> None:
        for proc in self.processes.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.processes.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def _warm_quietly(port: int) -> None:
    try:
        warm_up(port)
    except Exception:  # a box whose warm-up fails still serves; its first students wait a little longer
        pass


@contextmanager
def supervised(box: Box):
    """The box started and watched from a background thread; stopped on exit."""
    box.start()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(CHECK_EVERY_S):
            box.replace_dead()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield box
    finally:
        stop.set()
        watcher.join(timeout=5)
        box.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=2, help="app processes on this box (one per core)")
    ap.add_argument("--first-port", type=int, default=8601)
    ap.add_argument("--cpus", default=None, help="pin the box to these CPUs, e.g. 0 or 0,1 (needs taskset)")
    args = ap.parse_args()
    box = Box(list(range(args.first_port, args.first_port + args.processes)), cpus=args.cpus)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    with supervised(box):
        box.wait_healthy()
        print(f"serving on ports {box.ports}" + (f", CPUs {args.cpus}" if args.cpus else ""), flush=True)
        try:
            while not stopping.wait(1.0):
                pass
        except KeyboardInterrupt:
            pass
    print(f"stopped; {box.restarts} process(es) were replaced while it ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
