"""A class room's vote under load: 200 phones tap within 10 seconds, over Streamlit's own protocol.

    .venv/bin/python -m benchmarks.room_votes [--phones 200] [--window 10] [--processes 1|2]

No browser: each simulated phone opens a WebSocket to `/_stcore/stream`, opens the room's page
(`/room?room=CODE`), and then does what a phone's browser does: every 2 s it reruns the page's
voting fragment (the page asks for that with an `auto_rerun` message), and at a random moment in the
window it taps an option (a button's trigger, sent as a rerun of that fragment); a third of the
phones change their mind and tap a second option a moment later. Tap -> recorded is the time from
the moment the phone means to tap (a poll in flight delays it, as in a browser) to the server's
`script_finished` for the tap's rerun: by then the vote is in the database and the phone shows
"Vote recorded".

Afterwards the room's count is read from the database and compared with what the phones did:
votes lost (a phone whose tap was answered but whose vote is missing or holds an older option),
counted twice (more votes than phones), and p95 of tap -> recorded.

With one process it also prints what the server's CPU spends on one phone: its first page of the room, and
each 2-second look after that (20 phones, 10 looks each, no taps), from the process's CPU time in /proc.

With --processes 2, two app processes run behind nginx (deploy/nginx.conf) and share a throwaway
PostgreSQL server; with 1, one process and a SQLite file. Loopback only; at most 300 phones.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.browser import cpu_seconds, pct
from classroom.questions import typed
from classroom.store import DATABASE_URL_VAR, RoomStore
from scripts.streamlit_protocol import connect
from tests.browser.conftest import free_port, start_server, wait_healthy

MAX_PHONES = 300
POLL_S = 2.0  # ui.room.phone.PHONE_REFRESH_S
OPTIONS = 4
QUESTION = typed("Which mask hides later tokens from earlier ones?", "none\ncausal\npadding\nboth", 2)


@dataclass
class Phone:
    taps: list[float] = field(default_factory=list)  # seconds, meant to tap -> script_finished
    last_option: int | None = None  # the option of the last tap the server answered
    polls: int = 0
    errors: int = 0


class PhoneSession:
    """One phone's WebSocket session: a full run of the room page, then fragment reruns."""

    def __init__(self, ws, query: str):
        self.ws, self.query = ws, query
        self.buttons: dict[str, str] = {}  # widget key -> widget id
        self.fragment: str | None = None  # the voting fragment the page asks to rerun every 2 s

    async def run(self, states: list[WidgetState] | None = None, fragment: str | None = None) -> bool:
        msg = BackMsg()
        msg.rerun_script.query_string = self.query
        msg.rerun_script.page_name = "room"
        if fragment:
            msg.rerun_script.fragment_id = fragment
        msg.rerun_script.widget_states.widgets.extend(states or [])
        await self.ws.send(msg.SerializeToString())
        while True:
            fwd = ForwardMsg.FromString(await self.ws.recv())
            kind = fwd.WhichOneof("type")
            if kind == "auto_rerun" and fwd.auto_rerun.fragment_id:
                self.fragment = fwd.auto_rerun.fragment_id
            elif kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                element = fwd.delta.new_element
                if element.WhichOneof("type") == "exception":
                    return False
                widget_id = getattr(getattr(element, element.WhichOneof("type") or "", None), "id", "")
                if widget_id.startswith("$$ID"):
                    self.buttons[widget_id.rsplit("-", 1)[-1]] = widget_id
            elif kind == "script_finished" and fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return fwd.script_finished in (
                    ForwardMsg.FINISHED_SUCCESSFULLY,
                    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
                )


async def looks_only(url: str, code: str, phones: int, looks: int) -> None:
    """Phones that open the room's page and then only look (the fragment's timed reruns), as fast as answered."""

    async def one(i: int) -> None:
        async with connect(urlparse(url).netloc, open_timeout=120, from_address=f"127.0.{1 + i % 250}.4") as ws:
            session = PhoneSession(ws, f"room={code}")
            await session.run()
            for _ in range(looks):
                await session.run([], session.fragment)

    await asyncio.gather(*(one(i) for i in range(phones)))


def phone_cpu_ms(url: str, code: str, pid: int, phones: int = 20, looks: int = 10) -> tuple[float, float]:
    """The server's CPU, in ms, for one phone's first page of the room and for each of its later looks."""
    before = cpu_seconds(pid)
    asyncio.run(looks_only(url, code, phones, 0))
    first = (cpu_seconds(pid) - before) / phones
    before = cpu_seconds(pid)
    asyncio.run(looks_only(url, code, phones, looks))
    look = ((cpu_seconds(pid) - before) / phones - first) / looks
    return first * 1000, look * 1000


def tap_state(session: PhoneSession, round_id: int, option: int) -> list[WidgetState]:
    state = WidgetState()
    state.id = session.buttons[f"room_vote_{round_id}_1_{option}"]
    state.trigger_value = True
    return [state]


@dataclass
class Crowd:
    """The phones' shared clock: the window opens once every phone has joined."""

    n: int
    joined: int = 0
    opened: asyncio.Event = field(default_factory=asyncio.Event)
    start: float = 0.0

    def join(self) -> None:
        self.joined += 1
        if self.joined == self.n:
            self.start = time.perf_counter()
            self.opened.set()


async def phone(url: str, code: str, round_id: int, i: int, window: float, crowd: Crowd) -> Phone:
    r = random.Random(i)
    out = Phone()
    host = urlparse(url).netloc
    joined = False
    try:
        async with connect(host, open_timeout=120, from_address=f"127.0.{1 + i % 250}.3") as ws:
            session = PhoneSession(ws, f"room={code}")
            if not await session.run():
                out.errors += 1
            joined = True
            crowd.join()
            await crowd.opened.wait()  # phones join first (scanning the QR code); the taps are what is timed
            taps = sorted(crowd.start + r.uniform(0, window) for _ in range(2 if r.random() < 1 / 3 else 1))
            options = [r.randrange(OPTIONS) for _ in taps]
            next_poll = crowd.start + r.uniform(0, POLL_S)
            while taps:
                now = time.perf_counter()
                if taps[0] <= now:
                    meant, option = taps.pop(0), options.pop(0)
                    ok = await session.run(tap_state(session, round_id, option), session.fragment)
                    out.taps.append(time.perf_counter() - meant)
                    out.errors += not ok
                    if ok:
                        out.last_option = option
                elif next_poll <= now:
                    out.errors += not await session.run([], session.fragment)
                    out.polls += 1
                    next_poll += POLL_S
                else:
                    await asyncio.sleep(min(taps[0], next_poll) - now)
    except (TimeoutError, OSError, KeyError, websockets.WebSocketException):
        out.errors += 1
        if not joined:
            crowd.join()  # a phone that never joined must not hold the window shut
    return out


async def room_vote(url: str, code: str, round_id: int, n: int, window: float) -> list[Phone]:
    crowd = Crowd(n)
    return await asyncio.gather(*(phone(url, code, round_id, i, window, crowd) for i in range(n)))


def counted(phones: list[Phone], tallies) -> dict:
    """What the phones were told against what the room holds."""
    expected = [0] * OPTIONS
    for p in phones:
        if p.last_option is not None:
            expected[p.last_option] += 1
    held = list(tallies[1].counts) if 1 in tallies else [0] * OPTIONS
    voters = sum(expected)
    return {
        "phones answered": voters,
        "votes held": sum(held),
        "lost": sum(max(0, e - h) for e, h in zip(expected, held, strict=True)),  # short of what phones were told
        "counted twice": max(0, sum(held) - voters),
        "per option (phones / room)": f"{expected} / {held}",
    }


def crowd_arguments(one: str, acts: str) -> argparse.Namespace:
    """A load's command line: --<one>s (how many), --window (in which every one acts), --processes (1 or 2)."""
    ap = argparse.ArgumentParser()
    ap.add_argument(f"--{one}s", type=int, default=200)
    ap.add_argument("--window", type=float, default=10.0, help=f"seconds in which every {one} {acts}")
    ap.add_argument("--processes", type=int, default=1, choices=(1, 2), help="2: behind nginx, on PostgreSQL")
    return ap.parse_args()


def main() -> None:
    args = crowd_arguments("phone", "taps")
    if not 1 <= args.phones <= MAX_PHONES:
        raise SystemExit(f"1 to {MAX_PHONES} phones")
    with ExitStack() as stack:
        if args.processes == 1:
            url_db = f"sqlite:///{Path(stack.enter_context(tempfile.TemporaryDirectory())) / 'rooms.sqlite3'}"
            port = free_port()
            server = start_server(port, {DATABASE_URL_VAR: url_db})
            stack.callback(server.wait, 30)
            stack.callback(server.terminate)
            wait_healthy(port)
            url = f"http://127.0.0.1:{port}"
        else:
            from scripts.scale_out import behind_nginx
            from tests.room_postgres import postgres_server

            url_db = stack.enter_context(postgres_server())
            url = stack.enter_context(behind_nginx(2, {DATABASE_URL_VAR: url_db}))[0]
        store = RoomStore(url_db)
        room, _ = store.open_room(1)
        rnd = store.open_round(room.code, QUESTION)
        asyncio.run(room_vote(url, room.code, rnd.id, 2, 1.0))  # warm up: the page's imports and models loaded
        if args.processes == 1:
            first, look = phone_cpu_ms(url, room.code, server.pid)
            print(f"server CPU for one phone: {first:.1f} ms its first page, {look:.1f} ms each look after that")
        store.advance(room.code, rnd.id, "vote1", "between")
        rnd = store.open_round(room.code, QUESTION)
        t0 = time.perf_counter()
        phones = asyncio.run(room_vote(url, room.code, rnd.id, args.phones, args.window))
        elapsed = time.perf_counter() - t0
        result = counted(phones, store.tallies(rnd))
        taps = [t for p in phones for t in p.taps]
        print(
            f"{args.phones} phones, {args.window:g} s window, {args.processes} app process(es) ({url_db.split(':')[0]})"
        )
        print(
            f"taps {len(taps)}, polls {sum(p.polls for p in phones)}, errors {sum(p.errors for p in phones)}, "
            f"{elapsed:.1f} s from the first phone connecting to the last tap answered"
        )
        for k, v in result.items():
            print(f"{k}: {v}")
        if taps:
            print(
                f"tap -> recorded: p50 {pct(taps, 0.5) * 1000:.0f} ms, p95 {pct(taps, 0.95) * 1000:.0f} ms, "
                f"max {max(taps) * 1000:.0f} ms"
            )


if __name__ == "__main__":
    main()
