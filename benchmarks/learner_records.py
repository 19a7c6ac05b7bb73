"""Learner records under load: 200 learners commit a prediction at once, over Streamlit's own protocol.

    .venv/bin/python -m benchmarks.learner_records [--learners 200] [--window 10] [--processes 1|2]

No browser: each simulated learner opens a WebSocket to `/_stcore/stream` and asks for the attention
lesson (a first visit: no cookie, no record yet), as benchmarks.hall_load's students do. Once every
learner has the page, the window opens, and at a random moment in it each learner commits the
prediction "attention-rows" as a browser would send it: it picks an option of the first radio, then
"sure" or "a guess" on the second (each a rerun of the lesson's section, which drew them), then
clicks "Commit my prediction". The click's callback reruns the whole page, whose reveal records the
answer (ui/frame/predict.py) and whose end writes the record's cookie (ui/frame/learner.py). Commit ->
recorded is the time from sending the click to that rerun's `script_finished`: by then the row is
written, and the learner has been told its record's id (the cookie).

The same load runs twice, with the same seeds: records on, then records off
(ENCODER_LAB_LEARNER_RECORDS=off on the app processes, which store nothing), each on a fresh app and
database. "Added" is the difference of the two p95s. Afterwards the database is read: an answer is
lost when its commit was answered (the rerun finished and showed the verdict) and the id the learner
was told holds no row; each learner's record should hold exactly one.

With --processes 2, two app processes run behind nginx (deploy/nginx.conf) and share a throwaway
PostgreSQL server; with 1, one process and a SQLite file (benchmarks/room_votes.py does the same).
Loopback only; at most 300 learners and a 60 s window; every learner stops by itself.
"""

from __future__ import annotations

import asyncio
import random
import re
import statistics
import tempfile
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import websockets
from sqlalchemy import func, select
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.browser import cpu_seconds, pct
from benchmarks.hall_load import LOOPBACK, app_processes
from benchmarks.room_votes import Crowd, crowd_arguments
from classroom.schema import learner_events
from classroom.store import DATABASE_URL_VAR, RoomStore
from scripts.streamlit_protocol import Session, connect
from ui.frame.learner import COOKIE, RECORDS_VAR
from ui.frame.predict import CONFIDENCE

MAX_LEARNERS = 300
MAX_WINDOW_S = 60.0
FIRST_VISIT_TIMEOUT_S = 300.0  # 200 first visits at once queue on two cores
RUN_TIMEOUT_S = 120.0  # any later rerun
WARM_UP = 8  # learners before the load: with two processes, nginx's ip_hash sends some to each
GUESS, SURE, COMMIT = (f"_predict_{part}_attention-rows" for part in ("guess", "sure", "commit"))
COOKIE_ID = re.compile(rf"{COOKIE}=([0-9a-f]{{32}})\.")
VERDICTS = ("Right", "Not quite")  # how the reveal's first line starts (predict.judge)


@dataclass
class Learner:
    first_visit: float | None = None  # seconds, the lesson asked for -> script_finished
    commit: float | None = None  # seconds, commit sent -> script_finished of the rerun it caused; None: no answer
    revealed: bool = False  # that rerun drew the verdict on the guess: the commit was taken
    learner_id: str | None = None  # the record's id the app's cookie carries after that rerun (records on)
    errors: int = 0


def options(session: Session, key: str) -> list[str]:
    """The options of this radio as the last run drew them, without their letters."""
    widget_id = session.widget_ids[key][0]
    radio = next(e.radio for e in session.elements if e.WhichOneof("type") == "radio" and e.radio.id == widget_id)
    return [o.split(". ", 1)[1] if o[1:3] == ". " else o for o in radio.options]


def choose(session: Session, key: str, label: str) -> WidgetState:
    """The state a browser sends when this radio's option is clicked: the option as shown ("B. the last row";
    the options are lettered in an order drawn per visit)."""
    widget_id = session.widget_ids[key][0]
    radio = next(e.radio for e in session.elements if e.WhichOneof("type") == "radio" and e.radio.id == widget_id)
    shown = next(o for o in radio.options if o == label or o.endswith(f". {label}"))
    return WidgetState(id=widget_id, string_value=shown)


def told_id(session: Session) -> str | None:
    """The record's id in the cookie the last run wrote, if it wrote one."""
    for element in session.elements:
        if element.WhichOneof("type") == "html" and (found := COOKIE_ID.search(element.html.body)):
            return found.group(1)
    return None


async def learner(url: str, i: int, window: float, crowd: Crowd) -> Learner:
    r = random.Random(i)  # the same choices and moments with records on and off
    out = Learner()
    joined = False
    try:
        async with connect(urlparse(url).netloc, open_timeout=120, from_address=f"127.0.{1 + i % 250}.4") as ws:
            session = Session(ws, "attention", "")
            started = time.perf_counter()
            out.errors += not await asyncio.wait_for(session.run([]), FIRST_VISIT_TIMEOUT_S)
            out.first_visit = time.perf_counter() - started
            guess = choose(session, GUESS, r.choice(sorted(options(session, GUESS))))
            sure = choose(session, SURE, r.choice(CONFIDENCE))
            joined = True
            crowd.join()
            await crowd.opened.wait()  # every learner has the lesson open; the answers are what is timed
            at = r.uniform(0, window)  # the commit's moment; the two radios are clicked on the way to it
            clicks = ((at * r.uniform(0.2, 0.6), guess, GUESS), (at * r.uniform(0.7, 0.95), sure, SURE))
            for moment, state, key in clicks:
                await asyncio.sleep(max(0.0, crowd.start + moment - time.perf_counter()))
                out.errors += not await asyncio.wait_for(session.run([state], session.fragment_of[key]), RUN_TIMEOUT_S)
            await asyncio.sleep(max(0.0, crowd.start + at - time.perf_counter()))
            click = WidgetState(id=session.widget_ids[COMMIT][0], trigger_value=True)
            sent = time.perf_counter()
            ok = await asyncio.wait_for(session.run([click], session.fragment_of[COMMIT]), RUN_TIMEOUT_S)
            elapsed = time.perf_counter() - sent
            out.revealed = any(
                e.WhichOneof("type") == "alert" and e.alert.body.startswith(VERDICTS) for e in session.elements
            )
            if ok and out.revealed:
                out.commit = elapsed
            else:
                out.errors += 1
            out.learner_id = told_id(session)
    except (TimeoutError, OSError, KeyError, StopIteration, websockets.WebSocketException):
        out.errors += 1
        if not joined:
            crowd.join()  # a learner that never had the page must not hold the window shut
    return out


async def answering(url: str, n: int, window: float) -> list[Learner]:
    """n learners on the attention lesson, each committing its prediction once within `window` seconds."""
    if urlparse(url).hostname not in LOOPBACK:
        raise ValueError("this load generator only targets a server on this machine (loopback)")
    crowd = Crowd(n)
    return await asyncio.gather(*(learner(url, i, window, crowd) for i in range(n)))


def stored_rows(url_db: str) -> Counter:
    """learner_event rows per learner id, as the database holds them."""
    store = RoomStore(url_db)
    store.ensure_schema()
    try:
        with store.engine.connect() as conn:
            q = select(learner_events.c.learner_id, func.count()).group_by(learner_events.c.learner_id)
            return Counter(dict(conn.execute(q).all()))
    finally:
        store.engine.dispose()


@dataclass
class Tally:
    answered: int  # commits whose rerun finished and showed the verdict
    rows: int  # learner_event rows written during the load, whoever's
    lost: int  # answered commits whose learner holds no row (or was told no id)
    per_learner: Counter  # {rows a learner holds: how many learners}, over the answered ones


def tally(learners: list[Learner], rows: Counter) -> Tally:
    """What the learners were told against what the database holds (rows: written during the load)."""
    answered = [le for le in learners if le.commit is not None]
    held = [rows.get(le.learner_id, 0) if le.learner_id else 0 for le in answered]
    return Tally(len(answered), sum(rows.values()), sum(h == 0 for h in held), Counter(held))


@contextmanager
def hall(processes: int, records: bool):
    """The app on a fresh database, records on or off: one process on a SQLite file, or two behind nginx
    sharing a throwaway PostgreSQL server. Yields (the app's URL, the database's URL, the app processes)."""
    with ExitStack() as stack:
        if processes == 1:
            url_db = f"sqlite:///{Path(stack.enter_context(tempfile.TemporaryDirectory())) / 'lab.sqlite3'}"
        else:
            from tests.room_postgres import postgres_server

            url_db = stack.enter_context(postgres_server())
        env = {DATABASE_URL_VAR: url_db, RECORDS_VAR: "on" if records else "off"}
        url, apps = stack.enter_context(app_processes(processes, env=env))
        yield url, url_db, apps


@dataclass
class Busy:
    """CPU used during the load (the first visits included), as a share of one core (two cores: at most 200%)."""

    server: float  # the app processes
    learners: float  # this load generator, which shares the same cores


def measure(processes: int, records: bool, n: int, window: float) -> tuple[list[Learner], Tally, Busy]:
    """One load on a fresh hall: the learners, what the database holds of their answers, and the CPU used."""
    with hall(processes, records) as (url, url_db, apps):
        asyncio.run(answering(url, WARM_UP, 2.0))  # warm up: the lesson's imports, models and reveal
        before = stored_rows(url_db)
        cpu0, own0, t0 = sum(cpu_seconds(a.pid) for a in apps), time.process_time(), time.perf_counter()
        learners = asyncio.run(answering(url, n, window))
        elapsed = time.perf_counter() - t0
        busy = Busy((sum(cpu_seconds(a.pid) for a in apps) - cpu0) / elapsed, (time.process_time() - own0) / elapsed)
        return learners, tally(learners, stored_rows(url_db) - before), busy


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def row(records: bool, learners: list[Learner], t: Tally, busy: Busy) -> tuple[list[str], float | None]:
    times = [le.commit for le in learners if le.commit is not None]
    firsts = [le.first_visit for le in learners if le.first_visit is not None]
    p95 = pct(times, 0.95) if times else None
    per = ", ".join(f"{k}: {v}" for k, v in sorted(t.per_learner.items())) if records else "-"
    cells = [
        "on" if records else "off",
        f"{t.answered} / {len(learners)}",
        ms(statistics.median(times)) if times else "-",
        ms(p95) if p95 is not None else "-",
        ms(max(times)) if times else "-",
        f"{statistics.median(firsts):.1f} s" if firsts else "-",
        str(sum(le.errors for le in learners)),
        str(t.rows),
        str(t.lost) if records else "-",
        per,
        f"{busy.server:.0%} (learners {busy.learners:.0%})",
    ]
    return cells, p95


def main() -> None:
    args = crowd_arguments("learner", "commits")
    if not 1 <= args.learners <= MAX_LEARNERS or not 0 < args.window <= MAX_WINDOW_S:
        raise SystemExit(f"1 to {MAX_LEARNERS} learners, a window of at most {MAX_WINDOW_S:g} s")
    database = "PostgreSQL" if args.processes == 2 else "SQLite"
    print(f"{args.learners} learners, {args.window:g} s window, {args.processes} app process(es) on {database}")
    print(
        "| records | commits answered | commit -> recorded p50 | p95 | max | first visit p50 | errors "
        "| rows stored | answers lost | rows per learner (rows: learners) | CPU, app (load generator) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    p95s, lost = {}, 0
    for records in (True, False):
        learners, t, busy = measure(args.processes, records, args.learners, args.window)
        cells, p95s[records] = row(records, learners, t, busy)
        lost += t.lost if records else 0
        print("| " + " | ".join(cells) + " |", flush=True)
    if None not in p95s.values():
        print(f"\nadded (p95 on - p95 off): {(p95s[True] - p95s[False]) * 1000:+,.0f} ms (target <= 100 ms)")
    print(f"answers lost: {lost} (target 0)")


if __name__ == "__main__":
    main()
