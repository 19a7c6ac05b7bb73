"""How fast anyone may try room codes: sliding windows of failed look-ups per session, per address and
per process.

A failed look-up is a code that names no room (or a wrong lecturer key). Per browser session 10 a
minute; per address 100 (a hall behind one NAT or one proxy shares an address, so it gets more room);
per process 600 whoever asks, so opening many sessions from many addresses does not multiply the rate.
At 600 a minute, with 100 rooms open at once, a guess hits one with probability 100 / 31**8, about
1.2e-10: about 1e-4 over a whole day of guessing, per process.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from .codes import CODE_SPACE

PER_SESSION = 10
PER_ADDRESS = 100
PER_PROCESS = 600
WINDOW_S = 60.0


def day_hit_chance(open_rooms: int = 100, per_minute: int = PER_PROCESS) -> float:
    """The chance that guessing at the process's limit for 24 hours finds any of open_rooms rooms."""
    tries = per_minute * 60 * 24
    return 1 - (1 - open_rooms / CODE_SPACE) ** tries


class GuessLimiter:
    """Counts failed look-ups; allowed() says whether a session (at an address) may try another code now."""

    def __init__(
        self,
        per_session: int = PER_SESSION,
        per_address: int = PER_ADDRESS,
        per_process: int = PER_PROCESS,
        window_s: float = WINDOW_S,
    ):
        self.per_session, self.per_address, self.per_process = per_session, per_address, per_process
        self.window_s = window_s
        self._windows: dict[tuple[str, str], deque[float]] = {}
        self._all: deque[float] = deque()
        self._lock = threading.Lock()

    def _count(self, key: tuple[str, str] | None, now: float) -> int:
        times = self._all if key is None else self._windows.get(key)
        if times is None:
            return 0
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times and key is not None:
            del self._windows[key]  # forget whoever has nothing left in the window
        return len(times)

    def allowed(self, session: str, address: str | None = None, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            return (
                self._count(("session", session), now) < self.per_session
                and (address is None or self._count(("address", address), now) < self.per_address)
                and self._count(None, now) < self.per_process
            )

    def failed(self, session: str, address: str | None = None, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._windows.setdefault(("session", session), deque()).append(now)
            if address is not None:
                self._windows.setdefault(("address", address), deque()).append(now)
            self._all.append(now)


LIMITER = GuessLimiter()  # one per process, shared by every session
