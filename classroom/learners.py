"""A learner's own record: an anonymous id and every prediction, quiz answer and review answer with its
time, kept in the class room's store (SQLite by default, PostgreSQL when configured), so that it
survives a reload, a new tab, an app restart and a week away, whichever app process serves the page.

What is stored, and nothing more: a random id (128 bits, as hex), when it was made and last used; per
answer its kind, lesson, idea (a quiz generator's name), what was asked (a question's name and a
digest of its sentence, never the sentence), right / wrong / not judged, "sure" or "a guess", the
lesson step that teaches it, and the time. No name, no e-mail, no address. A record untouched for
RETENTION_DAYS is deleted; "Delete my record" deletes it at once.

The browser keeps the id in a cookie with a signature (an HMAC under a key kept in the store, the same
for every process): a cookie that does not verify, or names no record, is treated as absent. A short
transfer code, like a room code, moves the record to another device for TRANSFER_MINUTES.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, update

from .codes import ALPHABET, CODE_LENGTH, parse_code
from .schedule import Attempt
from .schema import lab_settings, learner_events, learner_transfers, learners

KINDS = ("prediction", "quiz", "review")
RETENTION_DAYS = 180
SWEEP_EVERY = timedelta(hours=1)  # a process sweeps old records with a new one at most this often
TRANSFER_MINUTES = 15
PER_MINUTE = 60  # answers one learner may record a minute; a flood beyond is refused, not stored
MAX_ITEM = 120
_ID = re.compile(r"[0-9a-f]{32}")
_TAG_CHARS = 32  # hex digits of the HMAC kept in the cookie: 128 bits
_FIELD = re.compile(r"[A-Za-z0-9_.:@-]{1,80}")


@dataclass(frozen=True)
class Event:
    kind: str  # one of KINDS
    lesson: str
    concept: str
    item: str
    right: bool | None
    sure: bool | None = None
    step: int | None = None


def new_learner_id() -> str:
    return secrets.token_hex(16)


def sign(secret: str, learner_id: str) -> str:
    """The cookie's value: the id and its signature."""
    tag = hmac.new(secret.encode(), learner_id.encode(), hashlib.sha256).hexdigest()[:_TAG_CHARS]
    return f"{learner_id}.{tag}"


def verified(secret: str, cookie: object) -> str | None:
    """The id a cookie carries, if its signature holds; None for anything else (treated as no cookie)."""
    if not isinstance(cookie, str) or len(cookie) != 32 + 1 + _TAG_CHARS or cookie[32] != ".":
        return None
    learner_id = cookie[:32]
    if not _ID.fullmatch(learner_id):
        return None
    return learner_id if hmac.compare_digest(sign(secret, learner_id), cookie) else None


def valid_event(e: Event) -> bool:
    """Only short names go in: a page passes its own keys, never what a student typed."""
    return (
        e.kind in KINDS
        and all(_FIELD.fullmatch(v) for v in (e.lesson, e.concept))
        and 0 < len(e.item) <= MAX_ITEM
        and (e.step is None or 0 <= e.step < 1000)
    )


class FloodLimiter:
    """At most PER_MINUTE recorded answers per learner per minute, in this process (a hall's students
    keep to their process behind the proxy); beyond that, answers are refused."""

    def __init__(self, per_minute: int = PER_MINUTE, window_s: float = 60.0):
        self.per_minute, self.window_s = per_minute, window_s
        self._times: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, learner_id: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._times.setdefault(learner_id, deque())
            while times and times[0] <= now - self.window_s:
                times.popleft()
            if len(times) >= self.per_minute:
                return False
            times.append(now)
            if len(self._times) > 10_000:  # forget learners with nothing in the window
                self._times = {k: v for k, v in self._times.items() if v}
            return True


FLOOD = FloodLimiter()


class LearnerRecords:
    """The learners' half of RoomStore: it supplies self._run, self.engine and self._insert_for."""

    def cookie_secret(self) -> str:
        """The key that signs learner cookies: made by the first process to ask, then read by every one."""
        cached = getattr(self, "_cookie_secret", None)
        if cached:
            return cached

        def work(conn):
            conn.execute(
                self._insert_for(lab_settings)
                .values(name="learner_cookie_key", value=secrets.token_hex(32))
                .on_conflict_do_nothing()
            )
            return conn.execute(
                select(lab_settings.c.value).where(lab_settings.c.name == "learner_cookie_key")
            ).scalar()

        self._cookie_secret = self._run(work)
        return self._cookie_secret

    def new_learner(self, now: datetime) -> str:
        """A new, empty record. Records untouched for RETENTION_DAYS, and spent transfer codes, are deleted
        first: by the first new record of a process, then at most once every SWEEP_EVERY (a burst of first
        answers at the start of a lecture should not sweep the whole table once per learner)."""
        learner_id = new_learner_id()
        last = getattr(self, "_swept_at", None)
        sweep = last is None or now >= last + SWEEP_EVERY

        def work(conn):
            if sweep:
                conn.execute(delete(learners).where(learners.c.touched_at < now - timedelta(days=RETENTION_DAYS)))
                conn.execute(delete(learner_transfers).where(learner_transfers.c.expires_at <= now))
            conn.execute(learners.insert().values(id=learner_id, created_at=now, touched_at=now))
            return learner_id

        made = self._run(work)
        if sweep:
            self._swept_at = now
        return made

    def learner_exists(self, learner_id: str) -> bool:
        if not isinstance(learner_id, str) or not _ID.fullmatch(learner_id):
            return False
        return (
            self._run(lambda conn: conn.execute(select(learners.c.id).where(learners.c.id == learner_id)).first())
            is not None
        )

    def record(self, learner_id: str, event: Event, now: datetime, limiter: FloodLimiter = FLOOD) -> str:
        """Store one answer: recorded, limited (a flood from this id), invalid, or unknown (no such record)."""
        if not valid_event(event):
            return "invalid"
        if not limiter.allow(learner_id):
            return "limited"

        def work(conn):
            touched = conn.execute(update(learners).where(learners.c.id == learner_id).values(touched_at=now))
            if touched.rowcount == 0:
                return "unknown"
            conn.execute(
                learner_events.insert().values(
                    learner_id=learner_id,
                    kind=event.kind,
                    lesson=event.lesson,
                    concept=event.concept,
                    item=event.item[:MAX_ITEM],
                    right=event.right,
                    sure=event.sure,
                    step=event.step,
                    at=now,
                )
            )
            return "recorded"

        return self._run(work)

    def history(self, learner_id: str) -> list[Attempt]:
        """Every answer of the record, oldest first, as the scheduler reads them."""
        rows = self._run(
            lambda conn: conn.execute(
                select(learner_events).where(learner_events.c.learner_id == learner_id).order_by(learner_events.c.id)
            ).all()
        )
        return [Attempt(r.concept, r.right, _aware(r.at), r.item, r.sure, r.lesson, r.step) for r in rows]

    def event_count(self, learner_id: str) -> int:
        return self._run(
            lambda conn: conn.execute(
                select(func.count()).select_from(learner_events).where(learner_events.c.learner_id == learner_id)
            ).scalar()
        )

    def transfer_code(self, learner_id: str, now: datetime) -> str:
        """A short code (like a room's) that moves this record to another device within TRANSFER_MINUTES."""

        def work(conn):
            conn.execute(delete(learner_transfers).where(learner_transfers.c.learner_id == learner_id))
            for _ in range(5):
                code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
                inserted = conn.execute(
                    self._insert_for(learner_transfers)
                    .values(code=code, learner_id=learner_id, expires_at=now + timedelta(minutes=TRANSFER_MINUTES))
                    .on_conflict_do_nothing()
                    .returning(learner_transfers.c.code)
                ).first()
                if inserted is not None:
                    return code
            raise RuntimeError("no free transfer code after 5 tries")

        return self._run(work)

    def redeem(self, raw_code: object, now: datetime) -> str | None:
        """The record a transfer code names, if it is live; the code is used up."""
        code = parse_code(raw_code)
        if code is None:
            return None

        def work(conn):
            row = conn.execute(
                delete(learner_transfers)
                .where(learner_transfers.c.code == code, learner_transfers.c.expires_at > now)
                .returning(learner_transfers.c.learner_id)
            ).first()
            return row.learner_id if row else None

        return self._run(work)

    def delete_learner(self, learner_id: str) -> None:
        """Delete the record and every row of it."""

        def work(conn):
            conn.execute(delete(learner_events).where(learner_events.c.learner_id == learner_id))
            conn.execute(delete(learner_transfers).where(learner_transfers.c.learner_id == learner_id))
            conn.execute(delete(learners).where(learners.c.id == learner_id))

        self._run(work)

    def purge_untouched(self, now: datetime, days: int = RETENTION_DAYS) -> int:
        """Delete every record untouched for `days`; how many went."""

        def work(conn):
            old = select(learners.c.id).where(learners.c.touched_at < now - timedelta(days=days))
            conn.execute(delete(learner_events).where(learner_events.c.learner_id.in_(old)))
            conn.execute(delete(learner_transfers).where(learner_transfers.c.learner_id.in_(old)))
            return conn.execute(delete(learners).where(learners.c.touched_at < now - timedelta(days=days))).rowcount

        return self._run(work)


def _aware(t: datetime) -> datetime:
    """SQLite gives back naive datetimes; everything here is UTC."""
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t
