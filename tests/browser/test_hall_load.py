"""The hall load generator speaks Streamlit's protocol: its changes reach the page and rerun it, and
30 sessions at once through nginx (two app processes) all finish their reruns: none lost, no error."""

import random
from pathlib import Path

import websockets

from benchmarks.hall_load import LESSON_WIDGETS, Session, change, level
from scripts.scale_out import NGINX, behind_nginx, served_and_problems
from scripts.streamlit_protocol import run_coroutine
from tests.needs import missing


async def typed_sentence_is_drawn(url: str) -> tuple[str, list[str]]:
    host = url.split("//", 1)[1]
    async with websockets.connect(f"ws://{host}/_stcore/stream", subprotocols=["streamlit"], max_size=None) as ws:
        session = Session(ws, "attention", "")
        assert await session.run([])
        text_key, slider_key = LESSON_WIDGETS["attention"]
        assert {text_key, slider_key} <= set(session.widget_ids)
        r = random.Random(5)
        states = change(session, r)
        while not states[0].id.endswith(f"-{text_key}"):
            states = change(session, r)
        assert await session.run(states)
        return states[0].string_value, session.plain_texts


def test_a_typed_sentence_reruns_the_lesson_on_it(app_url):
    typed, drawn = run_coroutine(typed_sentence_is_drawn(app_url))
    assert f"[CLS] {typed} [SEP]" in drawn  # the token strip shows the sentence the student typed


def test_a_short_level_runs_every_student_without_errors(app_url):
    students = run_coroutine(level(app_url, "attention", 3, seconds=4.0, think_s=0.5))
    assert all(s.errors == 0 and s.first_run is not None for s in students)
    assert sum(len(s.changes) for s in students) >= 3


def test_thirty_protocol_sessions_through_nginx_all_finish_their_reruns():
    if not Path(NGINX).exists():
        missing("nginx")
    with behind_nginx(2) as (url, _, prefix):
        run_coroutine(level(url, "attention", 1, seconds=2.0, think_s=0.5))  # warm: the model loaded
        students = run_coroutine(level(url, "attention", 30, seconds=15.0, think_s=3.0))
        served, problems = served_and_problems(prefix)
    lost = [i for i, s in enumerate(students) if s.errors or s.first_run is None or not s.changes]
    assert lost == [], f"sessions with an error, no first run or no change: {lost}"
    assert not problems, problems
    assert served  # the sessions went through nginx
