"""Two app processes behind nginx on one PostgreSQL, split as a lecture hall splits: the lecturer through
nginx (which pins a client to one process), the phones straight to the other process."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from classroom.store import DATABASE_URL_VAR
from scripts.scale_out import NGINX, app_port, behind_nginx, served_and_problems
from tests.needs import missing
from tests.room_postgres import postgres_server


@contextmanager
def lecturer_and_phone_processes(browser) -> Iterator[tuple[str, str, Callable[[], bool]]]:
    """(the lecturer's address through nginx, the other process's address for phones, a function that
    says whether every request nginx served so far went to the lecturer's process)."""
    if not Path(NGINX).exists():
        missing("nginx")
    with postgres_server() as database, behind_nginx(2, {DATABASE_URL_VAR: database}) as (proxy_url, apps, prefix):
        page = browser.new_page()
        page.goto(f"{proxy_url}/_stcore/health")  # which process nginx gives this client
        page.close()
        for _ in range(50):  # nginx writes its access log a moment after answering
            served = Counter(served_and_problems(prefix)[0])  # {"127.0.0.1:port": requests}
            if served:
                break
            time.sleep(0.1)
        lecturer_port = int(served.most_common(1)[0][0].rsplit(":", 1)[1])
        phone_port = next(app_port(a) for a in apps if app_port(a) != lecturer_port)

        def lecturer_stayed() -> bool:
            return set(served_and_problems(prefix)[0]) == {f"127.0.0.1:{lecturer_port}"}

        yield proxy_url, f"http://127.0.0.1:{phone_port}", lecturer_stayed
