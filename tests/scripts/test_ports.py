"""`make run` on a busy port stops at once and says how to pick another; the warm-up warms only the
server `make run` started, never another program that answers on the same port."""

from __future__ import annotations

import http.server
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from scripts import ports, warm_up

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def impostor():
    """Another program's server on a free port that answers Streamlit's health check: what a busy port
    looks like to a warm-up that only asks for /_stcore/health."""

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_busy_port_is_seen_and_a_free_one_is_not(impostor):
    assert not ports.port_is_free(impostor)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    assert ports.port_is_free(free)


def test_the_check_on_a_busy_port_fails_fast_with_one_line_naming_the_port_and_the_way_out(impostor):
    run = subprocess.run(
        [sys.executable, "-m", "scripts.ports", "--check", str(impostor)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 1 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and f"port {impostor} is busy" in lines[0] and "make run PORT=" in lines[0]


def test_the_owner_of_a_listening_port_is_found(impostor):
    assert ports.listens_on(os.getpid(), impostor) is True
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert ports.listens_on(child.pid, impostor) is False
    finally:
        child.kill()
        child.wait()


def test_the_warm_up_never_reports_another_server_as_ready(impostor):
    """make run's own shape, with a server that cannot start (its port is busy): the warm-up names the
    process exec hands its pid to, sees it stop, and says nothing was warmed."""
    script = (
        f"{sys.executable} -m scripts.warm_up --port {impostor} --timeout 20 --server-pid $$ & "
        f'exec {sys.executable} -c "import time, sys; time.sleep(1); sys.exit(1)"'
    )
    shell = subprocess.Popen(["sh", "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    out, _ = shell.communicate(timeout=60)
    assert "ready" not in out
    assert f"warm-up: nothing warmed: the server started on port {impostor} has stopped" in out


def test_a_live_server_that_does_not_hold_the_port_is_not_warmed(impostor):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        with pytest.raises(warm_up.NotOurServer, match="does not hold it"):
            warm_up.wait_for_own_server(impostor, child.pid, timeout=1)
    finally:
        child.kill()
        child.wait()
