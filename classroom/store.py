"""Rooms and their answers in a database, through SQLAlchemy (bound parameters only).

SQLite in artifacts/classroom.sqlite3 (WAL mode) unless ENCODER_LAB_DATABASE_URL names another
database, e.g. postgresql+psycopg://user:pass@host/db, which several app processes share. The schema
is created the first time a process uses the store. One answer per student per question is a unique
constraint, so simultaneous first answers never both count. Peer-instruction rounds and their votes
are rounds.py's, mixed into RoomStore, as are the lecturers' decks (decks.py); the tables of all are
schema.py's. Every failure of the database reaches callers as StoreUnavailable, which the pages turn into a notice.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Table, create_engine, delete, event, func, inspect, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from .codes import key_hash, key_matches, new_code, new_lecturer_key
from .decks import SavedDecks
from .learners import LearnerRecords
from .rounds import RoundVotes
from .schema import OPTION_CHARS, answers, joins, metadata, rooms, rounds

DATABASE_URL_VAR = "ENCODER_LAB_DATABASE_URL"
DEFAULT_SQLITE = Path(__file__).resolve().parent.parent / "artifacts" / "classroom.sqlite3"
ROOM_LIFETIME = timedelta(days=1)
CONNECT_TIMEOUT_S = 3


class StoreUnavailable(RuntimeError):
    """The database could not be reached or refused the operation (down, full, read-only)."""


@dataclass(frozen=True)
class Room:
    code: str
    quiz_seed: int
    created_at: datetime
    expires_at: datetime
    closed_at: datetime | None

    def state(self, now: datetime) -> str:
        """open, closed or expired."""
        if self.closed_at is not None:
            return "closed"
        return "expired" if now >= self.expires_at else "open"


@dataclass(frozen=True)
class OptionCount:
    question_index: int
    question_id: str
    option: str
    correct: bool
    count: int


@dataclass(frozen=True)
class AnswerRow:
    student: int  # 1, 2, ... in order of first answer: the CSV never carries the browser id
    question_index: int
    question_id: str
    option: str
    correct: bool
    answered_at: datetime


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(t: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes; everything here is UTC."""
    return t.replace(tzinfo=UTC) if t is not None and t.tzinfo is None else t


def database_url() -> str:
    url = os.environ.get(DATABASE_URL_VAR, "").strip() or f"sqlite:///{DEFAULT_SQLITE}"
    for bare in ("postgresql://", "postgres://"):  # the driver installed is psycopg 3
        if url.startswith(bare):
            url = "postgresql+psycopg://" + url[len(bare) :]
    return url


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 10, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_connection, _record):  # WAL: readers never wait for the writer
            cur = dbapi_connection.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=10000")
            cur.close()

        return engine
    return create_engine(
        url, pool_pre_ping=True, pool_size=5, max_overflow=20, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
    )


def _insert(engine: Engine, table: Table):
    """INSERT ... ON CONFLICT DO NOTHING in the engine's dialect: the constraint decides, not a prior read."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    return dialect.insert(table)


GROWN_TABLES = (rounds, rooms)  # tables that gained nullable columns after a release; create_all adds no column


def _add_missing_columns(conn) -> None:
    """Bring a database made by an earlier release up to date: add the nullable columns its tables lack.
    Names and types come from schema.py, never from input. On PostgreSQL, IF NOT EXISTS lets two processes
    starting at once both do it (SQLite's file lock already makes them take turns)."""
    guard = "IF NOT EXISTS " if conn.dialect.name == "postgresql" else ""
    for table in GROWN_TABLES:
        have = {c["name"] for c in inspect(conn).get_columns(table.name)}
        for column in table.columns:
            if column.name not in have and column.nullable:
                kind = column.type.compile(dialect=conn.dialect)
                conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {guard}{column.name} {kind}"))


class RoomStore(RoundVotes, LearnerRecords, SavedDecks):
    def __init__(self, url: str):
        self.url = url
        try:
            self.engine = make_engine(url)
        except (SQLAlchemyError, ImportError, OSError) as err:  # a malformed URL, no driver, no folder
            raise StoreUnavailable(f"{type(err).__name__}: {err}".splitlines()[0]) from err
        self._ready = False
        self._lock = threading.Lock()
        self._sqlite_turns = threading.RLock() if url.startswith("sqlite") else contextlib.nullcontext()

    def _insert_for(self, table: Table):
        return _insert(self.engine, table)

    def ensure_schema(self) -> None:
        """Create the tables if they are missing (once per process and database)."""
        if not self._ready:
            with self._lock:
                if not self._ready:
                    self._run(lambda conn: metadata.create_all(conn, checkfirst=True), schema=False)
                    self._run(_add_missing_columns, schema=False)
                    self._ready = True

    def _run(self, work, schema: bool = True):
        """work(connection) in one transaction; any database error becomes StoreUnavailable.

        On SQLite the transactions of one process take turns on a lock: writers that meet in the file
        would otherwise each sleep and retry (SQLite's busy wait), which under a hall's burst of answers
        cost hundreds of milliseconds at p95 where a queue costs a few."""
        if schema:
            self.ensure_schema()
        try:
            with self._sqlite_turns, self.engine.begin() as conn:
                return work(conn)
        except SQLAlchemyError as err:
            raise StoreUnavailable(str(err).splitlines()[0]) from err

    # ------------------------------------------------------------------ rooms

    def open_room(self, quiz_seed: int, now: datetime | None = None) -> tuple[Room, str]:
        """A new room and its lecturer key (returned once, stored only as a hash). Purges expired rooms."""
        now = now or _now()
        key = new_lecturer_key()

        def work(conn):
            conn.execute(delete(rooms).where(rooms.c.expires_at <= now))
            for _ in range(5):  # a clash in 8.5e11 codes is rare; try again rather than fail
                code = new_code()
                inserted = conn.execute(
                    _insert(self.engine, rooms)
                    .values(
                        code=code,
                        key_hash=key_hash(key),
                        quiz_seed=int(quiz_seed),
                        created_at=now,
                        expires_at=now + ROOM_LIFETIME,
                    )
                    .on_conflict_do_nothing()
                    .returning(rooms.c.code)
                ).first()
                if inserted is not None:
                    return Room(code, int(quiz_seed), now, now + ROOM_LIFETIME, None)
            raise StoreUnavailable("no free room code after 5 tries")

        return self._run(work), key

    def room(self, code: str) -> Room | None:
        row = self._run(lambda conn: conn.execute(select(rooms).where(rooms.c.code == code)).first())
        if row is None:
            return None
        return Room(row.code, row.quiz_seed, _aware(row.created_at), _aware(row.expires_at), _aware(row.closed_at))

    def is_lecturer(self, code: str, key: object) -> bool:
        stored = self._run(lambda conn: conn.execute(select(rooms.c.key_hash).where(rooms.c.code == code)).scalar())
        return stored is not None and key_matches(key, stored)

    def close_room(self, code: str, now: datetime | None = None) -> None:
        now = now or _now()
        self._run(
            lambda conn: conn.execute(
                update(rooms).where(rooms.c.code == code, rooms.c.closed_at.is_(None)).values(closed_at=now)
            )
        )

    def set_deck_place(self, code: str, deck_id: str | None, step: int | None) -> None:
        """The deck this room's lecturer presents and its step (from 0); None, None: no deck."""
        place = {"deck_id": deck_id, "deck_step": None if deck_id is None else int(step or 0)}
        self._run(lambda conn: conn.execute(update(rooms).where(rooms.c.code == code).values(**place)))

    def deck_place(self, code: str) -> tuple[str, int] | None:
        """(deck id, step) the room's lecturer is on, or None: whichever of their screens moved it last."""
        query = select(rooms.c.deck_id, rooms.c.deck_step).where(rooms.c.code == code)
        row = self._run(lambda conn: conn.execute(query).first())
        return (row.deck_id, int(row.deck_step or 0)) if row is not None and row.deck_id else None

    # --------------------------------------------------------------- students

    def join(self, code: str, student_id: str, now: datetime | None = None) -> str:
        """Count a student in an open room: returns the room's state (open, closed, expired, unknown)."""
        now = now or _now()

        def work(conn):
            state = self._state(conn, code, now)
            if state == "open":
                conn.execute(
                    _insert(self.engine, joins)
                    .values(room_code=code, student_id=student_id, joined_at=now)
                    .on_conflict_do_nothing()
                )
            return state

        return self._run(work)

    def answer(
        self,
        code: str,
        student_id: str,
        question_index: int,
        question_id: str,
        option: str,
        correct: bool,
        now: datetime | None = None,
    ) -> str:
        """Record a student's first answer to a question: recorded, already, closed, expired or unknown."""
        now = now or _now()

        def work(conn):
            state = self._state(conn, code, now)
            if state != "open":
                return state
            conn.execute(
                _insert(self.engine, joins)
                .values(room_code=code, student_id=student_id, joined_at=now)
                .on_conflict_do_nothing()
            )
            inserted = conn.execute(
                _insert(self.engine, answers)
                .values(
                    room_code=code,
                    student_id=student_id,
                    question_index=int(question_index),
                    question_id=str(question_id)[:80],
                    option=str(option)[:OPTION_CHARS],
                    correct=bool(correct),
                    answered_at=now,
                )
                .on_conflict_do_nothing()
                .returning(answers.c.id)  # a row back only if this insert won (rowcount is -1 on some drivers)
            ).first()
            return "recorded" if inserted is not None else "already"

        return self._run(work)

    def _state(self, conn, code: str, now: datetime) -> str:
        row = conn.execute(select(rooms.c.closed_at, rooms.c.expires_at).where(rooms.c.code == code)).first()
        if row is None:
            return "unknown"
        if row.closed_at is not None:
            return "closed"
        return "expired" if now >= _aware(row.expires_at) else "open"

    # ---------------------------------------------------------------- results

    def joined(self, code: str) -> int:
        return self._run(
            lambda conn: conn.execute(select(func.count()).select_from(joins).where(joins.c.room_code == code)).scalar()
        )

    def option_counts(self, code: str) -> list[OptionCount]:
        """How many students chose each option of each question, ordered by question then option."""
        query = (
            select(answers.c.question_index, answers.c.question_id, answers.c.option, answers.c.correct, func.count())
            .where(answers.c.room_code == code)
            .group_by(answers.c.question_index, answers.c.question_id, answers.c.option, answers.c.correct)
            .order_by(answers.c.question_index, answers.c.option)
        )
        return [OptionCount(*row) for row in self._run(lambda conn: conn.execute(query).all())]

    def answer_rows(self, code: str) -> list[AnswerRow]:
        """Every recorded answer, students numbered 1, 2, ... by their first answer (no browser id)."""
        query = (
            select(answers)
            .where(answers.c.room_code == code)
            .order_by(answers.c.answered_at, answers.c.question_index, answers.c.id)
        )
        numbers: dict[str, int] = {}
        out = []
        for row in self._run(lambda conn: conn.execute(query).all()):
            student = numbers.setdefault(row.student_id, len(numbers) + 1)
            when = _aware(row.answered_at)
            out.append(AnswerRow(student, row.question_index, row.question_id, row.option, row.correct, when))
        return out


_STORES: dict[str, RoomStore] = {}
_STORES_LOCK = threading.Lock()


def get_store(url: str | None = None) -> RoomStore:
    """One store (one connection pool) per database URL per process."""
    url = url or database_url()
    with _STORES_LOCK:
        if url not in _STORES:
            _STORES[url] = RoomStore(url)
        return _STORES[url]
