"""How many students can one app process serve? A lecture hall simulated over Streamlit's own protocol.

    .venv/bin/python -m benchmarks.hall_load [--students 10 20 40] [--lesson attention | all] [--seconds 60]
        [--processes 2] [--boxes 2] [--room-phones 200]

No browser: each simulated student opens a WebSocket to the server's `/_stcore/stream`, asks for
a lesson with a `BackMsg` (its protobuf message, as Streamlit's front end sends it), reads the
`ForwardMsg`s that come back to learn the page's widget ids, and then, every few seconds (a random
think time), changes something as a student would: types a new sentence into the lesson's text box
or moves a slider. For each change it records the time from sending the `BackMsg` to the server's
`script_finished` message for that run, which is when the server has sent everything the change
redraws. A browser would add its own drawing time on top; that cost is the student's laptop's,
not the server's, and is measured by `benchmarks.browser`.

With --room-phones N, each level also runs a class-room vote through the same app processes (on PostgreSQL
behind nginx with --processes 2, on a SQLite file with one): N phones join the room's page while the students
work, then each taps within a 10 s window, as `benchmarks.room_votes` does, and the level reports tap -> recorded
beside the students' figures, with any vote lost.

Bounded: loopback addresses only, at most 300 students and 600 seconds per load level, and every
student stops by itself at the end of its level.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import websockets
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.browser import cpu_seconds, pct, rss_mb
from benchmarks.lesson_inputs import SENTENCE_BOXES, random_sentence
from benchmarks.room_votes import MAX_PHONES, QUESTION, Crowd, Phone, counted, phone
from benchmarks.side_by_side import checkout
from classroom.store import DATABASE_URL_VAR, RoomStore
from scripts.streamlit_protocol import Session, connect
from tests.browser.conftest import ROOT, free_port, start_server, wait_healthy

MAX_STUDENTS = 300
MAX_SECONDS = 600
LOOPBACK = {"localhost", "127.0.0.1", "::1"}
# The lesson's text box and one slider, by their keys (the widget id ends with "-<key>"); a lesson not in
# LESSON_SLIDERS has only its text box here.
# The slider's values: an int range for layer/head-like sliders, a float range for rates.
LESSON_SLIDERS = {
    "attention": "attention.head",
    "padding": "padding.n_pads",
    "masking": "masking.mlm_rate",
    "block": "block.block_layer",
    "heads": "heads.heads_head",
}
LESSON_WIDGETS = {lesson: (box, LESSON_SLIDERS.get(lesson)) for lesson, box in SENTENCE_BOXES.items()}
SLIDER_VALUES = {
    "attention.head": (0, 3),
    "padding.n_pads": (0, 8),
    "block.block_layer": (0, 1),
    "heads.heads_head": (0, 3),
}


@dataclass
class Student:
    changes: list[float] = field(default_factory=list)  # seconds, change -> script_finished
    first_run: float | None = None  # seconds, page asked for -> script_finished
    errors: int = 0


def change(session: Session, r: random.Random) -> list[WidgetState]:
    """One student action: a new sentence (two times in three) or a slider moved."""
    text_key, slider_key = LESSON_WIDGETS[session.lesson]
    state = WidgetState()
    if slider_key and slider_key in session.widget_ids and r.random() < 1 / 3:
        state.id = session.widget_ids[slider_key][0]
        value = r.randint(*SLIDER_VALUES[slider_key]) if slider_key in SLIDER_VALUES else round(r.uniform(0.1, 0.5), 2)
        state.double_array_value.data.append(value)
    else:
        state.id = session.widget_ids[text_key][0]
        state.string_value = random_sentence(r)
    return [state]


async def student(url: str, lesson: str, seed: int, until: float, think_s: float) -> Student:
    r = random.Random(seed)
    out = Student()
    host = urlparse(url).netloc
    try:
        async with connect(host, from_address=f"127.0.{1 + seed % 250}.2") as ws:  # an address each
            session = Session(ws, lesson, "")
            started = time.perf_counter()
            if not await session.run([]):
                out.errors += 1
            out.first_run = time.perf_counter() - started
            while True:
                await asyncio.sleep(r.uniform(0.5, 1.5) * think_s)
                if time.perf_counter() >= until and out.changes:  # one change at least, however slow the first run
                    break
                sent = time.perf_counter()
                ok = await session.run(change(session, r))
                out.changes.append(time.perf_counter() - sent)
                out.errors += not ok
    except (TimeoutError, OSError, websockets.WebSocketException):
        out.errors += 1
    return out


async def level(url: str, lesson: str, n: int, seconds: float, think_s: float) -> list[Student]:
    until = time.perf_counter() + seconds
    return await asyncio.gather(*(student(url, lesson, i, until, think_s) for i in range(n)))


VOTE_WINDOW_S = 10.0


async def level_and_vote(
    url: str, lesson: str, n: int, seconds: float, think_s: float, code: str, round_id: int, phones: int
) -> tuple[list[Student], list[Phone], float]:
    """A level of students and, at the same time, a room's vote of `phones` phones; the last item is when the
    vote's window opened (every phone joined), in seconds from the level's start."""
    crowd, start = Crowd(phones), time.perf_counter()
    students, voted = await asyncio.gather(
        level(url, lesson, n, seconds, think_s),
        asyncio.gather(*(phone(url, code, round_id, i, VOTE_WINDOW_S, crowd) for i in range(phones))),
    )
    return students, voted, crowd.start - start


def room_database(stack: ExitStack, processes: int) -> str:
    """The class room's database for a level with a vote: PostgreSQL behind nginx, a SQLite file for one process."""
    if processes > 1:
        from tests.room_postgres import postgres_server

        return stack.enter_context(postgres_server())
    import tempfile

    return f"sqlite:///{Path(stack.enter_context(tempfile.TemporaryDirectory())) / 'rooms.sqlite3'}"


@contextmanager
def app_processes(n: int, boxes: int = 0, root: Path = ROOT, env: dict | None = None):
    """One app process on loopback (URL, [process]), or n behind nginx as deploy/nginx.conf runs them;
    env: added to every app process's environment (a database, a setting).

    boxes > 0: that many boxes (scripts/serve_box.py), n processes each, box i pinned to CPU i: the
    machine's cores split as separate machines would be, behind one nginx."""
    if boxes:
        from scripts.scale_out import nginx_in_front
        from scripts.serve_box import Box, supervised

        with ExitStack() as stack:
            made = [
                Box([free_port() for _ in range(n)], dict(env or {}), cpus=str(i % os.cpu_count()), warm=False)
                for i in range(boxes)
            ]
            for box in made:
                stack.enter_context(supervised(box))
            for box in made:
                box.wait_healthy()
            url, _ = stack.enter_context(nginx_in_front([p for box in made for p in box.ports]))
            yield url, [proc for box in made for proc in box.processes.values()]
        return
    if n == 1:
        port = free_port()
        server = start_server(port, env, root=root)
        try:
            wait_healthy(port)
            yield f"http://127.0.0.1:{port}", [server]
        finally:
            server.terminate()
            server.wait(timeout=30)
    else:
        from scripts.scale_out import behind_nginx

        with behind_nginx(n, env, root=root) as (url, apps, _):
            yield url, apps


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--students", type=int, nargs="+", default=[5, 10, 20, 40])
    ap.add_argument("--lesson", default=["attention"], nargs="+", choices=[*sorted(LESSON_WIDGETS), "all"])
    ap.add_argument("--seconds", type=float, default=60.0, help="length of each load level")
    ap.add_argument("--think", type=float, default=4.0, help="mean seconds between one student's changes")
    ap.add_argument("--processes", type=int, default=1, help="app processes; more than 1 run behind nginx")
    ap.add_argument(
        "--boxes", type=int, default=0, help="simulated boxes, --processes each, box i pinned to CPU i, one nginx"
    )
    ap.add_argument("--before", metavar="REF", help="also REF's app (a temporary checkout), lesson by lesson")
    ap.add_argument("--room-phones", type=int, default=0, help="also a class-room vote of this many phones, each level")
    args = ap.parse_args()
    if not 0 <= args.room_phones <= MAX_PHONES:
        raise SystemExit(f"at most {MAX_PHONES} phones")
    if max(args.students) > MAX_STUDENTS or args.seconds > MAX_SECONDS or not 1 <= args.processes <= 4:
        raise SystemExit(f"at most {MAX_STUDENTS} students, {MAX_SECONDS} s per level and 4 processes")
    if args.boxes > 4:
        raise SystemExit("at most 4 simulated boxes")
    lessons = sorted(LESSON_WIDGETS) if "all" in args.lesson else args.lesson
    with ExitStack() as stack:
        roots = {"": ROOT}
        if args.before:
            roots[f" ({args.before})"] = stack.enter_context(checkout(args.before))
        for lesson in lessons:  # a fresh server (or hall) per lesson, and per version
            for suffix, root in roots.items():
                run_lesson(args, lesson, root, suffix)
                print()


def run_lesson(args, lesson: str, root: Path = ROOT, suffix: str = "") -> None:
    with ExitStack() as stack:
        store, env = None, None
        if args.room_phones:
            database = room_database(stack, args.processes)
            store, env = RoomStore(database), {DATABASE_URL_VAR: database}
        url, apps = stack.enter_context(app_processes(args.processes, args.boxes, root, env))
        if urlparse(url).hostname not in LOOPBACK:
            raise SystemExit("this load generator only targets a server on this machine (loopback)")
        asyncio.run(level(url, lesson, 2, 5.0, 1.0))  # warm up: models loaded, caches filled
        if store is not None:  # and the room's page
            asyncio.run(vote_level(store, url, lesson, 0, 2, 1.0, args.think))
        rss_idle = sum(rss_mb(a.pid) for a in apps)
        where = (
            f"{args.boxes} box(es) of {args.processes} process(es), box i on CPU i"
            if args.boxes
            else (f"{args.processes} process(es)")
        )
        print(f"lesson {lesson}{suffix}, {where}, think {args.think:g} s, {args.seconds:g} s a level")
        print(
            "| students | changes | change -> rerun finished p50 | p95 | first page p50 | errors | server CPU | RSS |"
        )
        print("|---|---|---|---|---|---|---|---|")
        votes = []
        for n in args.students:
            cpu0, own0, t0 = sum(cpu_seconds(a.pid) for a in apps), time.process_time(), time.perf_counter()
            if store is not None:
                level_run = vote_level(store, url, lesson, n, args.room_phones, args.seconds, args.think)
                students, vote = asyncio.run(level_run)
                votes.append((n, vote))
            else:
                students = asyncio.run(level(url, lesson, n, args.seconds, args.think))
            elapsed = time.perf_counter() - t0
            cpu = (sum(cpu_seconds(a.pid) for a in apps) - cpu0) / elapsed
            own = (time.process_time() - own0) / elapsed  # the simulated students share the same 2 cores
            rss = sum(rss_mb(a.pid) for a in apps)
            times = [t for s in students for t in s.changes]
            firsts = [s.first_run for s in students if s.first_run is not None]
            p50 = f"{pct(times, 0.5) * 1000:.0f} ms" if times else "-"
            p95 = f"{pct(times, 0.95) * 1000:.0f} ms" if times else "-"
            first = f"{statistics.median(firsts) * 1000:.0f} ms" if firsts else "-"
            errors = sum(s.errors for s in students)
            row = [n, len(times), p50, p95, first, errors, f"{cpu:.0%} (students {own:.0%})", f"{rss:.0f} MB"]
            print("| " + " | ".join(str(x) for x in row) + " |")
        print(f"\nRSS before the levels: {rss_idle:.0f} MB (sessions closed at the end of each level are freed lazily)")
        if votes:
            print_votes(args.room_phones, votes)


def print_votes(phones: int, votes: list[tuple[int, tuple]]) -> None:
    print(f"\nThe room's vote in the same levels: {phones} phones, each tapping within {VOTE_WINDOW_S:g} s")
    print("| students | window opened | taps | tap -> recorded p50 | p95 | max | errors | lost | counted twice |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, row in votes:
        print("| " + " | ".join(str(x) for x in (n, *row)) + " |")


async def vote_level(store: RoomStore, url: str, lesson: str, n: int, phones: int, seconds: float, think_s: float):
    """A level of n students with a new round voted on by `phones` phones: (the students, the vote's row)."""
    room, _ = store.open_room(1)
    rnd = store.open_round(room.code, QUESTION)
    students, voted, opened = await level_and_vote(url, lesson, n, seconds, think_s, room.code, rnd.id, phones)
    taps = [t for p in voted for t in p.taps]
    held = counted(voted, store.tallies(rnd))
    ms = [f"{pct(taps, q) * 1000:.0f} ms" if taps else "-" for q in (0.5, 0.95)]
    longest = f"{max(taps) * 1000:.0f} ms" if taps else "-"
    errors = sum(p.errors for p in voted)
    return students, (f"{opened:.1f} s in", len(taps), *ms, longest, errors, held["lost"], held["counted twice"])


if __name__ == "__main__":
    main()
