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

import websockets
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


def connect(host: str, open_timeout: float = 60, from_address: str | None = None):
    """A WebSocket to the app's stream at host ("127.0.0.1:8501"), as its front end opens one.

    from_address: a loopback address of the client's own (127.0.x.y), so that nginx's ip_hash, which
    hashes an address's first three bytes, spreads simulated students over the app processes as a
    class's own laptops would be spread."""
    return websockets.connect(
        f"ws://{host}/_stcore/stream",
        subprotocols=["streamlit"],
        max_size=None,
        open_timeout=open_timeout,
        local_addr=(from_address, 0) if from_address else None,
    )


def run_coroutine(coro):
    """asyncio.run(coro) on a thread of its own: callers may already hold a running event loop
    (playwright's sync API keeps one on the main thread), where asyncio.run refuses to start."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


def shown_value(element) -> WidgetState | None:
    """The state a browser would send for this widget as drawn (its value, else its default); None for a
    kind of widget the load generator and the warm-up never use (buttons carry no state)."""
    kind = element.WhichOneof("type")
    if kind not in ("slider", "text_input", "text_area", "checkbox", "number_input"):
        return None
    widget = getattr(element, kind)
    if kind == "slider" and widget.options:  # a select_slider: its state is its labels, not kept here
        return None
    value = widget.value if widget.set_value else widget.default
    state = WidgetState(id=widget.id)
    if kind == "slider":
        state.double_array_value.data.extend(value)
    elif kind in ("text_input", "text_area"):
        state.string_value = value
    elif kind == "checkbox":
        state.bool_value = value
    elif kind == "number_input":
        if widget.data_type == widget.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    else:
        return None
    return state


class Session:
    """One WebSocket session, as Streamlit's front end holds it."""

    def __init__(self, ws, lesson: str, query: str):
        self.ws, self.lesson, self.query = ws, lesson, query
        self.widget_ids: dict[str, tuple[str, str]] = {}  # key -> (widget id, element type)
        self.plain_texts: list[str] = []  # every code block and plain text of the last run (the token strip)
        self.exceptions: list[str] = []  # the messages of any exception the last run showed
        self.elements: list = []  # every element the last run drew (a radio's options, a page's own html)
        self.fragment_of: dict[str, str] = {}  # key -> the fragment (a section) that drew the widget; "": the page
        # The page's script hash once the server has named it: a browser sends it with every rerun, and a rerun
        # a callback asks for (st.rerun) runs the page it names, not the one `page_name` names.
        self.page_hash = ""
        # Every widget's current value, as the front end keeps it: a browser sends all of them with each
        # rerun, and a section's own rerun (a fragment) reads page-level widgets it does not redraw.
        self.values: dict[str, WidgetState] = {}

    async def run(self, states: list[WidgetState], fragment: str = "") -> bool:
        """Ask for a rerun with these widget states; wait for its script_finished.

        fragment: the fragment that drew the changed widget (`fragment_of[key]`), as a browser sends it: that
        section reruns alone, unless a callback asks for the whole page.
        True if the run finished and showed no exception (a page's uncaught error is drawn as an
        element and the run still ends "successfully")."""
        for state in states:
            self.values[state.id] = state
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = self.lesson
        msg.rerun_script.page_script_hash = self.page_hash
        if fragment:
            msg.rerun_script.fragment_id = fragment
        msg.rerun_script.widget_states.widgets.extend(self.values.values())
        await self.ws.send(msg.SerializeToString())
        for state in states:  # a button's trigger is sent once, as a browser resets it after the click
            if state.WhichOneof("value") == "trigger_value":
                self.values.pop(state.id, None)
        self.plain_texts, self.exceptions, self.elements = [], [], []
        while True:
            fwd = ForwardMsg.FromString(await self.ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "navigation":
                self.page_hash = fwd.navigation.page_script_hash
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                widget = getattr(element, element.WhichOneof("type") or "", None)
                widget_id = getattr(widget, "id", "")
                if element.WhichOneof("type") == "code":
                    self.plain_texts.append(element.code.code_text)
                if element.WhichOneof("type") == "text":
                    self.plain_texts.append(element.text.body)
                if element.WhichOneof("type") == "exception":
                    self.exceptions.append(f"{element.exception.type}: {element.exception.message}")
                if widget_id and widget_id not in self.values and (state := shown_value(element)) is not None:
                    self.values[widget_id] = state
                self.elements.append(element)
                if widget_id.startswith("$$ID"):  # "$$ID-<hash>-<key>", and a key may hold "-" itself
                    key = widget_id.split("-", 2)[-1]
                    self.widget_ids[key] = (widget_id, element.WhichOneof("type"))
                    self.fragment_of[key] = fwd.delta.fragment_id
            elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                # a run that ended early for a rerun (the app's own st.rerun) is followed by that rerun
                # (a control that reruns one section alone ends with its fragment run's own status)
                done = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
                return fwd.script_finished in done and not self.exceptions
