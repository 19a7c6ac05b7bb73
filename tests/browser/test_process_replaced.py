"""A process killed mid-lecture: the box replaces it, and a student's page reconnects through nginx to a
live process and shows the same view again (its link holds every control), with no traceback."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from scripts.scale_out import NGINX, nginx_in_front, served_and_problems
from scripts.serve_box import Box, supervised
from scripts.streamlit_protocol import wait_healthy
from tests.browser.conftest import free_port
from tests.needs import missing

from .driver import assert_no_exception, chart_data, wait_charts, wait_idle

SENTENCE = "the dog ran home"
LOAD_MS = 180_000


def test_a_killed_process_is_replaced_and_the_page_comes_back_with_the_same_view(browser):
    if not Path(NGINX).exists():
        missing("nginx")
    box = Box([free_port(), free_port()], warm=False)
    with supervised(box):
        box.wait_healthy()
        with nginx_in_front(box.ports) as (url, prefix):
            page = browser.new_page()
            sockets: list = []
            page.on("websocket", lambda ws: sockets.append(ws.url))
            page.goto(f"{url}/attention?sentence={SENTENCE.replace(' ', '%20')}&head=1", timeout=LOAD_MS)
            wait_charts(page, 1, LOAD_MS)
            wait_idle(page, LOAD_MS)
            before = chart_data(page, 0)
            served = served_and_problems(prefix)[0]
            (upstream,) = served  # ip_hash: one process served this student
            port = int(upstream.rsplit(":", 1)[1])
            killed = box.processes[port]
            os.kill(killed.pid, signal.SIGKILL)
            # The page notices, opens a new WebSocket (nginx sends it to a live process) and runs anew.
            deadline = time.monotonic() + 60
            while len(sockets) < 2 and time.monotonic() < deadline:
                page.wait_for_timeout(200)
            assert len(sockets) >= 2, "the page did not reconnect"
            wait_charts(page, 1, LOAD_MS)
            wait_idle(page, LOAD_MS)
            assert_no_exception(page)
            assert chart_data(page, 0) == before  # the same view, rebuilt from the link
            assert "head=1" in page.url and "sentence=" in page.url
            deadline = time.monotonic() + 60
            while box.restarts == 0 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert box.restarts == 1 and box.processes[port] is not killed
            wait_healthy(port, 120)  # the replacement serves on the same port
            page.close()
