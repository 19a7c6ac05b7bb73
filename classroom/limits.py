"""How fast anyone may try room codes: a sliding window of failed look-ups per client and per process.

A failed look-up is a code that names no open room. Per client (its IP address, or its session when
there is none) 10 a minute; per process 600 a minute whoever asks, so opening many sessions or
addresses does not multiply the rate. At 600 a minute, with 100 rooms open at once, a guess hits one
with probability 100 / 31**8, about 1.2e-10: about 1e-4 over a whole day of guessing, per process.
"""

from __future__ import annotations

import threading
import time
from collections import deque

from .codes import CODE_SPACE

PER_CLIENT = 10
PER_PROCESS = 600
WINDOW_S = 60.0


def day_hit_chance(open_rooms: int = 100, per_minute: int = PER_PROCESS) -> float:
    """The chance that guessing at the process's limit for 24 hours finds any of open_rooms rooms."""
    tries = per_minute * 60 * 24
    return 1 - (1 - open_rooms / CODE_SPACE) ** tries


class GuessLimiter:
    """Counts failed look-ups; allowed() says whether a client may try another code now."""

    def __init__(self, per_client: int = PER_CLIENT, per_process: int = PER_PROCESS, window_s: float = WINDOW_S):
        self.per_client, self.per_process, self.window_s = per_client, per_process, window_s
        self._clients: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._lock = threading.Lock()

    def _trim(self, times: deque[float], now: float) -> None:
        while times and times[0] <= now - self.window_s:
            times.popleft()

    def allowed(self, client: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            mine = self._clients.get(client, deque())
            self._trim(mine, now)
            self._trim(self._all, now)
            if not mine:
                self._clients.pop(client, None)  # forget clients with nothing in the window
            return len(mine) < self.per_client and len(self._all) < self.per_process

    def failed(self, client: str, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        with self._lock:
            self._clients.setdefault(client, deque()).append(now)
            self._all.append(now)


LIMITER = GuessLimiter()  # one per process, shared by every session
