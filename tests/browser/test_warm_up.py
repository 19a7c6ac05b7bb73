"""The warm-up `make run` starts beside the server: every page runs once over Streamlit's protocol."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from encoder_core.lessons import LESSON_IDS
from scripts import warm_up as warm
from scripts.streamlit_protocol import Session, run_coroutine
from tests.browser.conftest import free_port


def test_the_warm_up_runs_the_home_page_and_every_lesson_without_an_exception(app_url):
    runs = warm.warm_up(urlparse(app_url).port, timeout=300)
    assert [r.page for r in runs] == ["home", *LESSON_IDS]
    assert [r for r in runs if not r.ok or r.exceptions] == []


def test_the_warm_up_gives_up_by_itself_and_says_so_when_no_server_answers(monkeypatch, capsys):
    port = free_port()  # nothing listens there
    with pytest.raises(TimeoutError, match=f"port {port}"):
        warm.warm_up(port, timeout=1)
    monkeypatch.setattr("sys.argv", ["warm_up", "--port", str(port), "--timeout", "1"])
    assert warm.main() == 1
    assert "skipped" in capsys.readouterr().out


class ScriptedSocket:
    """A WebSocket that answers any request with the given ForwardMsgs."""

    def __init__(self, replies):
        self.replies, self.sent = [m.SerializeToString() for m in replies], []

    async def send(self, data):
        self.sent.append(BackMsg.FromString(data))

    async def recv(self):
        return self.replies.pop(0)


def finished(status=ForwardMsg.FINISHED_SUCCESSFULLY) -> ForwardMsg:
    msg = ForwardMsg()
    msg.script_finished = status
    return msg


def shown_exception() -> ForwardMsg:
    msg = ForwardMsg()
    msg.delta.new_element.exception.type = "ValueError"
    msg.delta.new_element.exception.message = "bad"
    return msg


def test_a_run_that_shows_an_exception_is_not_counted_as_a_clean_run():
    # Streamlit draws a page's uncaught error as an element and still ends the run "successfully"
    clean, failing = ScriptedSocket([finished()]), ScriptedSocket([shown_exception(), finished()])
    assert run_coroutine(Session(clean, "padding", "").run([])) is True
    session = Session(failing, "padding", "")
    assert run_coroutine(session.run([])) is False
    assert session.exceptions == ["ValueError: bad"]
    assert failing.sent[0].rerun_script.page_name == "padding"


def test_a_run_ended_early_for_a_rerun_waits_for_that_rerun():
    socket = ScriptedSocket([finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN), shown_exception(), finished()])
    assert run_coroutine(Session(socket, "block", "").run([])) is False
    assert socket.replies == []


def test_make_run_warms_the_server_it_starts_on_the_same_port():
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    recipe = makefile.split("\nrun: setup\n", 1)[1].split("\n\n", 1)[0]
    assert recipe.index("-m scripts.ports --check $(PORT)") < recipe.index("scripts.warm_up")  # a busy port stops first
    # in the background, for the shell's own pid, which exec hands to the server
    assert "-m scripts.warm_up --port $(PORT) --server-pid $$$$ & \\\n\texec " in recipe
    assert "streamlit run app.py --server.port $(PORT)" in recipe
