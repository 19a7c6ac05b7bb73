"""One session of Streamlit's own protocol, as its front end holds it, without a browser.

The client opens a WebSocket to the server's `/_stcore/stream`, asks for a run of a page with a
`BackMsg` (protobuf) and reads the `ForwardMsg`s that come back until the run's `script_finished`.
Used by the warm-up after the server starts (scripts/warm_up.py) and by the hall's load generator
(benchmarks/hall_load.py).
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState


def wait_healthy(port: int, timeout: float = 60.0) -> None:
    """Return once the app server on this loopback port answers its health check; TimeoutError if not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return
        except OSError:
            pass
        time.sleep(0.25)
    raise TimeoutError(f"no app server answered on port {port} within {timeout:.0f} s")


def run_coroutine(coro):
    """asyncio.run(coro) on a thread of its own: callers may already hold a running event loop
    (playwright's sync API keeps one on the main thread), where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class Session:
    """One WebSocket session, as Streamlit's front end holds it."""

    def __init__(self, ws, lesson: str, query: str):
        self.ws, self.lesson, self.query = ws, lesson, query
        self.widget_ids: dict[str, tuple[str, str]] = {}  # key -> (widget id, element type)
        self.code_texts: list[str] = []  # every code block of the last run (the token strip is one)
        self.exceptions: list[str] = []  # the messages of any exception the last run showed

    async def run(self, states: list[WidgetState]) -> bool:
        """Ask for a rerun with these widget states; wait for its script_finished.

        True if the run finished and showed no exception (a page's uncaught error is drawn as an
        element and the run still ends "successfully")."""
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = self.lesson
        msg.rerun_script.widget_states.widgets.extend(states)
        await self.ws.send(msg.SerializeToString())
        self.code_texts, self.exceptions = [], []
        while True:
            fwd = ForwardMsg.FromString(await self.ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                widget = getattr(element, element.WhichOneof("type") or "", None)
                widget_id = getattr(widget, "id", "")
                if element.WhichOneof("type") == "code":
                    self.code_texts.append(element.code.code_text)
                if element.WhichOneof("type") == "exception":
                    self.exceptions.append(f"{element.exception.type}: {element.exception.message}")
                if widget_id.startswith("$$ID"):
                    self.widget_ids[widget_id.rsplit("-", 1)[-1]] = (widget_id, element.WhichOneof("type"))
            elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                # a run that ended early for a rerun (the app's own st.rerun) is followed by that rerun
                return fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY and not self.exceptions
