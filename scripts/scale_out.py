"""Two Encoder Lab processes behind nginx on loopback, and one student session driven through it.

    .venv/bin/python scripts/scale_out.py        (needs Debian's nginx and chromium)

Prints which upstream served the session's requests: with ip_hash they all go to one
process, which is what keeps a Streamlit session (its state lives in one process) intact.
tests/browser/test_scale_out.py runs the same thing in the test suite.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, wait_healthy  # noqa: E402
from tests.browser.driver import assert_no_exception, chart_data, wait_chart_change, wait_charts  # noqa: E402

# A process that refuses a connection is left out for FAIL_TIMEOUT, and its students are sent to another:
# a killed process's pages reconnect to a live one while the box replaces it (scripts/serve_box.py).
FAIL_TIMEOUT = "3s"


def render_config(
    prefix: Path, port: int, upstreams: list[int | str], host: str = "127.0.0.1", root: Path = ROOT
) -> Path:
    """deploy/nginx.conf for these upstreams (a loopback port, or "host:port" of a process on another box),
    listening on host:port (loopback by default; a hall's proxy listens on 0.0.0.0). root: the checkout whose
    deploy/ and static/ are used (another one, for side-by-side benchmarks)."""
    text = (root / "deploy" / "nginx.conf").read_text()
    streamlit_static = Path(importlib.util.find_spec("streamlit").origin).parent / "static"
    text = text.replace("{{STREAMLIT_STATIC}}", str(streamlit_static)).replace("{{APP_STATIC}}", str(root / "static"))
    addresses = [f"127.0.0.1:{u}" if isinstance(u, int) else u for u in upstreams]
    upstreams = "\n        ".join(f"server {a} max_fails=1 fail_timeout={FAIL_TIMEOUT};" for a in addresses)
    # nginx started as root runs its workers as `nobody`: they must reach the prefix to buffer
    # a large response (the plotly.js chunk) to tmp/proxy, and mkdtemp makes it 0700.
    prefix.chmod(0o755)
    conf = prefix / "nginx.conf"
    conf.write_text(text.replace("{{UPSTREAMS}}", upstreams).replace("{{LISTEN}}", f"{host}:{port}"))
    if (root / "deploy" / "static_files.conf").exists():  # an older checkout (benchmarks' --before) has none
        shutil.copy(root / "deploy" / "static_files.conf", prefix)
    (prefix / "tmp").mkdir()
    return conf


def wait_port(port: int, timeout: float = 20.0) -> None:
    import socket

    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listening on {port}")


# Two cold processes on two cores: the first page of each loads its model while the other starts.
FIRST_CHART_TIMEOUT_MS = 180_000
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def drive_session(url: str, browser=None) -> None:
    """Open the attention lesson through the proxy, type a sentence, see the chart change.

    browser: a Playwright browser to use (the test suite passes its own); else one is launched.
    """
    if browser is None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            drive_session(url, launched)
            launched.close()
        return
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + "/attention")
    wait_charts(page, 1, timeout_ms=FIRST_CHART_TIMEOUT_MS)
    before = chart_data(page, 0)
    box = page.get_by_role("textbox", name="Sentence", exact=True).first
    box.fill("the dog ran to the park")
    box.press("Enter")
    wait_chart_change(page, before, timeout_s=60)
    assert_no_exception(page)
    context.close()


def nginx_errors(prefix: Path) -> str:
    log = prefix / "error.log"
    return log.read_text()[-4000:] if log.exists() else "(none)"


@dataclass
class ScaleOutRun:
    app_ports: list[int]
    proxy_port: int
    seconds: float  # open the lesson, type, see the chart change
    served: dict[str, int]  # requests per upstream, from nginx's access log
    nginx_problems: list[str]  # error.log lines at level error or worse
    files: dict[str, list[str]]  # static files asked for, by who sent them (files_sent)

    @property
    def affinity_kept(self) -> bool:
        return len(self.served) == 1


def app_port(app: subprocess.Popen) -> int:
    """The loopback port an app process started by start_server listens on."""
    return int(app.args[app.args.index("--server.port") + 1])


@contextmanager
def nginx_in_front(upstreams: list[int | str], root: Path = ROOT):
    """nginx on a free loopback port in front of these upstreams: yields (its URL, its prefix folder).
    root: the checkout whose deploy/nginx.conf is used."""
    prefix = Path(tempfile.mkdtemp(prefix="encoder-lab-nginx-"))
    proxy_port = free_port()
    proxy = None
    try:
        conf = render_config(prefix, proxy_port, upstreams, root=root)
        proxy = subprocess.Popen([NGINX, "-p", str(prefix), "-c", str(conf)])
        wait_port(proxy_port)
        yield f"http://127.0.0.1:{proxy_port}", prefix
    finally:
        if proxy:
            proxy.terminate()
            proxy.wait(timeout=10)
        shutil.rmtree(prefix, ignore_errors=True)


@contextmanager
def behind_nginx(n_apps: int = 2, env: dict | None = None, root: Path = ROOT):
    """n app processes (with `env` added to their environment; the app from `root`) and nginx in front of
    them, on loopback: yields (the proxy's URL, the app processes, nginx's prefix folder with its logs);
    stops them all after."""
    app_ports = [free_port() for _ in range(n_apps)]
    apps = [start_server(p, env, root) for p in app_ports]
    try:
        for p in app_ports:
            wait_healthy(p)
        with nginx_in_front(app_ports) as (url, prefix):
            yield url, apps, prefix
    finally:
        for a in apps:
            a.terminate()
            a.wait(timeout=10)


def served_and_problems(prefix: Path) -> tuple[dict[str, int], list[str]]:
    """Requests per upstream (from nginx's access log; not the files nginx sent itself), and error.log lines
    at level error or worse."""
    log = (prefix / "access.log").read_text()
    served = dict(Counter(u for u in re.findall(r"upstream=(\S+)", log) if u != "-"))
    problems = [ln for ln in nginx_errors(prefix).splitlines() if re.search(r"\[(error|crit|alert|emerg)\]", ln)]
    return served, problems


def files_sent(prefix: Path) -> dict[str, list[str]]:
    """The paths of the static files asked for (Streamlit's /static/, the lab's /app/static/), by who sent
    them: "nginx" (from disk) or "app" (an app process), from nginx's access log."""
    log = (prefix / "access.log").read_text()
    sent: dict[str, list[str]] = {"nginx": [], "app": []}
    for path, upstream in re.findall(r'"GET (/(?:app/)?static/\S+) [^"]*" \d+ upstream=(\S+)', log):
        sent["nginx" if upstream == "-" else "app"].append(path)
    return sent


def run_scale_out(browser=None) -> ScaleOutRun:
    """Start two app processes and nginx in front of them, drive one session through nginx, stop all."""
    with behind_nginx(2) as (url, apps, prefix):
        t0 = time.perf_counter()
        try:
            drive_session(url, browser)
        except Exception as err:
            raise RuntimeError(f"session through nginx failed; nginx error.log:\n{nginx_errors(prefix)}") from err
        elapsed = time.perf_counter() - t0
        served, problems = served_and_problems(prefix)
        ports = [app_port(a) for a in apps]
        return ScaleOutRun(ports, int(url.rsplit(":", 1)[1]), elapsed, served, problems, files_sent(prefix))


def main() -> int:
    if not Path(NGINX).exists():
        print("nginx is not installed (apt-get install nginx)")
        return 2
    run = run_scale_out()
    print(f"app processes on {run.app_ports}, nginx on {run.proxy_port}")
    print(f"session through the proxy: opened, typed, chart updated in {run.seconds:.1f} s")
    print("requests per upstream:", run.served)
    print("nginx errors:", run.nginx_problems or "none")
    print(f"static files sent by nginx: {len(run.files['nginx'])}, by an app process: {len(run.files['app'])}")
    print("session affinity:", "kept (one upstream served the whole session)" if run.affinity_kept else "BROKEN")
    return 0 if run.affinity_kept and not run.nginx_problems else 1


if __name__ == "__main__":
    sys.exit(main())
