"""A throwaway PostgreSQL server for the class room's tests: Debian's binaries, a temporary data
directory, a loopback port, trust auth. PostgreSQL refuses to run as root, so as root it runs as
`nobody` (through runuser). Without the binaries it skips, except in CI, where it fails."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from tests.needs import missing

UNPRIVILEGED = "nobody"


def pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_owner(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", UNPRIVILEGED, "--", *cmd] if os.geteuid() == 0 else cmd


def _wait_ready(bindir: Path, port: int, timeout: float = 30.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        ok = subprocess.run(
            [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True
        ).returncode
        if ok == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"PostgreSQL on port {port} not ready after {timeout:.0f} s")


@contextmanager
def postgres_server():
    """Yields a SQLAlchemy URL of a fresh, empty database; stops the server and deletes its files after."""
    bindir = pg_bin()
    if bindir is None:
        missing(
            "PostgreSQL",
            "scripts/ensure_test_packages.sh installs it (or: bash scripts/ensure_test_packages.sh postgresql)",
        )
    root = Path(tempfile.mkdtemp(prefix="encoder-lab-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        shutil.chown(root, UNPRIVILEGED)
    port = _free_port()
    run = dict(check=True, capture_output=True, text=True)
    subprocess.run(_as_owner([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]), **run)
    options = f"-h 127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=120"
    log = root / "server.log"
    subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "start"]), **run)
    try:
        _wait_ready(bindir, port)
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "stop"]), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
