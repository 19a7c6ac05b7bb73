"""Two app processes behind nginx on loopback (deploy/nginx.conf), one session driven through it:
the page works through the proxy, every request of the session that reaches a process reaches the same
one, and the static files (Streamlit's scripts, plotly.js) come from nginx itself."""

from __future__ import annotations

from pathlib import Path

from scripts.scale_out import NGINX, run_scale_out
from tests.needs import missing


def test_a_session_through_nginx_stays_on_one_process(browser):
    if not Path(NGINX).exists():
        missing("nginx")
    run = run_scale_out(browser)
    assert sum(run.served.values()) > 5  # the page, its scripts and the WebSocket all went through nginx
    assert run.affinity_kept, run.served
    assert not run.nginx_problems, run.nginx_problems  # e.g. a response cut short by a temp file it could not write
    assert set(run.served) <= {f"127.0.0.1:{p}" for p in run.app_ports}
    sent = run.files
    assert sent["app"] == [], sent["app"]  # nginx found every file on disk
    assert any(p.startswith("/static/js/") for p in sent["nginx"]), sent["nginx"]  # Streamlit's scripts
    assert "/app/static/plotly.min.js" in sent["nginx"]  # the charts' plotly.js
