"""Browser tests: a real app server started here, driven in Debian's headless chromium.

Playwright cannot download its own browser on these machines, so chromium is launched
by path. Without chromium the tests skip, except in CI (CI=true), where they fail.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from scripts.serve_box import app_command
from scripts.streamlit_protocol import wait_healthy
from tests.needs import missing

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session", autouse=True)
def _require_chromium():
    if not Path(CHROMIUM).exists():
        missing(f"chromium (looked for {CHROMIUM})")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, extra_env: dict | None = None, root: Path = ROOT) -> subprocess.Popen:
    """The app from `root` (another checkout, for side-by-side benchmarks) on a loopback port."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(extra_env or {})}
    return subprocess.Popen(
        app_command(port, root), cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@contextmanager
def serving(root: Path = ROOT, extra_env: dict | None = None):
    """The app from `root` (with extra_env in its environment) on a free loopback port, healthy: yields its URL."""
    port = free_port()
    proc = start_server(port, extra_env, root=root)
    try:
        wait_healthy(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def app_url():
    with serving() as url:
        yield url


@pytest.fixture(scope="session")
def screenshots_dir() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
