"""Peer-instruction rounds: one question, two votes, then the reveal. Mixed into RoomStore (store.py).

A round moves through PHASES, one way only, each step an UPDATE that names the phase it leaves, so a
double click or two lecturer screens cannot move it twice:

    vote1 -> between -> vote2 -> reveal        (or between -> reveal when the room already knows it)

or, from any phase before the reveal, to "cancelled": the lecturer discards the round. Its votes are
deleted in the same transaction, nothing of it is ever revealed, and it is left out of the room's rounds
and their export; its number goes to the next round (a cancelled round's number becomes minus its id).

A vote may have a deadline (closes_at, the lecturer's timer). The store decides when it passes: a vote
after it finds nothing to insert, and close_due() (which current_round calls, so whichever screen or
phone asks first after the deadline does it, in any process) closes it with one UPDATE that names the
phase it leaves, so two processes that both see the deadline close it once.

A vote is one row per (round, vote, student): a student who changes their answer within a vote
replaces their row, so the last answer counts, once. The row is written by one INSERT ... SELECT that
finds the round in the asked phase of an open room, so a vote that arrives after its close finds
nothing to insert; on PostgreSQL the round's row is also locked for share first, so a close (an
UPDATE of that row) waits for votes already under way and no vote slips in after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import and_, delete, func, literal, or_, select, update

from .questions import RoomQuestion
from .schema import joins, rooms, rounds, votes

PHASES = ("vote1", "between", "vote2", "reveal")
CANCELLED = "cancelled"
OPEN_PHASE = {1: "vote1", 2: "vote2"}
CLOSES_TO = {"vote1": "between", "vote2": "reveal"}
TIMER_CHOICES_S = (30, 60, 90)  # the lecturer's timer for a vote (or none)
MAX_TIMER_S = 600


@dataclass(frozen=True)
class Round:
    id: int
    room_code: str
    number: int  # 1, 2, ... in the room
    question: RoomQuestion
    phase: str
    transfer_of: int | None
    opened_at: datetime
    closes_at: datetime | None = None  # the open vote's deadline, if the lecturer set a timer
    shown: bool = False  # the lecturer chose to show the votes on the projected screen
    timer_s: int | None = None  # each vote's timer, as chosen when the round was asked

    @property
    def open_vote(self) -> int | None:
        """1 or 2 while a vote takes answers, else None."""
        return {"vote1": 1, "vote2": 2}.get(self.phase)

    @property
    def cancelled(self) -> bool:
        return self.phase == CANCELLED

    def seconds_left(self, now: datetime) -> float | None:
        """Seconds until the open vote's deadline (0 once past it); None without a timer or an open vote."""
        if self.open_vote is None or self.closes_at is None:
            return None
        return max(0.0, (self.closes_at - now).total_seconds())


@dataclass(frozen=True)
class Tally:
    """The count per option of one vote of one round."""

    counts: tuple[int, ...]
    correct: int

    @property
    def total(self) -> int:
        return sum(self.counts)

    @property
    def share_correct(self) -> float | None:
        return self.counts[self.correct] / self.total if self.total else None


def _aware(t: datetime | None) -> datetime | None:
    return t.replace(tzinfo=UTC) if t is not None and t.tzinfo is None else t


def _round(row) -> Round:
    return Round(
        row.id,
        row.room_code,
        row.number,
        RoomQuestion.from_json(row.question),
        row.phase,
        row.transfer_of,
        _aware(row.opened_at),
        _aware(row.closes_at),
        bool(row.shown),
        row.timer_s,
    )


def timer_seconds(raw: object) -> int | None:
    """A vote's timer from a setting or a caller: whole seconds in 1..MAX_TIMER_S, or None (no timer).
    Anything else (0, negative, text, NaN) is no timer."""
    try:
        seconds = int(float(raw))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    return seconds if 0 < seconds <= MAX_TIMER_S else None


def _deadline(now: datetime, seconds: object) -> datetime | None:
    s = timer_seconds(seconds)
    return now + timedelta(seconds=s) if s is not None else None


class RoundVotes:
    """The rounds' half of RoomStore: it supplies self._run, self.engine and self._insert_for."""

    def open_round(
        self, code: str, question: RoomQuestion, transfer_of: int | None = None, timer: object = None
    ) -> Round:
        """A new round, vote 1 open (closing by itself after `timer` seconds, if given). A vote still open in an
        earlier round closes first (one question at a time)."""
        now = datetime.now(UTC)
        seconds = timer_seconds(timer)
        closes_at = _deadline(now, seconds)

        def work(conn):
            for phase, after in CLOSES_TO.items():
                conn.execute(
                    update(rounds)
                    .where(rounds.c.room_code == code, rounds.c.phase == phase)
                    .values(phase=after, closes_at=None)
                )
            number = (
                conn.execute(
                    select(func.coalesce(func.max(rounds.c.number), 0)).where(
                        rounds.c.room_code == code,
                        rounds.c.number > 0,  # a cancelled round's is negative
                    )
                ).scalar()
                + 1
            )
            new_id = conn.execute(
                rounds.insert()
                .values(
                    room_code=code,
                    number=number,
                    question=question.to_json(),
                    phase="vote1",
                    transfer_of=transfer_of,
                    opened_at=now,
                    closes_at=closes_at,
                    shown=False,
                    timer_s=seconds,
                )
                .returning(rounds.c.id)
            ).scalar()
            return Round(new_id, code, number, question, "vote1", transfer_of, now, closes_at, False, seconds)

        return self._run(work)

    def current_round(self, code: str, now: datetime | None = None) -> Round | None:
        """The room's latest round: the one the lecturer is running (a cancelled one too, so phones can say so).
        A vote whose deadline has passed is closed first, whoever asks."""
        now = now or datetime.now(UTC)
        query = select(rounds).where(rounds.c.room_code == code).order_by(rounds.c.id.desc()).limit(1)

        def work(conn):
            row = conn.execute(query).first()
            due = row is not None and row.phase in CLOSES_TO and row.closes_at is not None
            if due and _aware(row.closes_at) <= now:  # a write only when a deadline has passed
                self._close_due(conn, code, now)
                row = conn.execute(query).first()
            return row

        row = self._run(work)
        return _round(row) if row is not None else None

    def _close_due(self, conn, code: str, now: datetime) -> int:
        closed = 0
        for phase, after in CLOSES_TO.items():
            closed += conn.execute(
                update(rounds)
                .where(
                    rounds.c.room_code == code,
                    rounds.c.phase == phase,
                    rounds.c.closes_at.is_not(None),
                    rounds.c.closes_at <= now,
                )
                .values(phase=after, closes_at=None)
            ).rowcount
        return closed

    def close_due(self, code: str, now: datetime | None = None) -> int:
        """Close the room's vote whose timer has run out; how many were closed (0 or 1). Safe to call from every
        process at once: each UPDATE names the phase it leaves, so only one of them moves it."""
        now = now or datetime.now(UTC)
        return self._run(lambda conn: self._close_due(conn, code, now))

    def cancel_round(self, code: str, round_id: int) -> bool:
        """Discard a round before its reveal: its votes are deleted, it is never revealed nor exported, and its
        number goes to the next round. False if it was revealed (or cancelled) already, or is not this room's."""

        def work(conn):
            moved = conn.execute(
                update(rounds)
                .where(
                    rounds.c.id == int(round_id),
                    rounds.c.room_code == code,
                    rounds.c.phase.in_(("vote1", "between", "vote2")),
                )
                .values(phase=CANCELLED, number=-rounds.c.id, closes_at=None)
                .returning(rounds.c.id)
            ).first()
            if moved is None:
                return False
            conn.execute(delete(votes).where(votes.c.round_id == int(round_id)))
            return True

        return self._run(work)

    def show_results(self, code: str, round_id: int) -> bool:
        """The lecturer chose to show this round's votes on the projected screen (never before vote 1 closed)."""
        statement = (
            update(rounds)
            .where(
                rounds.c.id == int(round_id),
                rounds.c.room_code == code,
                rounds.c.phase.in_(("between", "vote2", "reveal")),
            )
            .values(shown=True)
            .returning(rounds.c.id)
        )
        return self._run(lambda conn: conn.execute(statement).first()) is not None

    def get_round(self, code: str, round_id: int) -> Round | None:
        query = select(rounds).where(rounds.c.id == int(round_id), rounds.c.room_code == code)
        row = self._run(lambda conn: conn.execute(query).first())
        return _round(row) if row is not None else None

    def all_rounds(self, code: str) -> list[Round]:
        """The room's rounds in order, without the cancelled ones (they count for nothing)."""
        query = select(rounds).where(rounds.c.room_code == code, rounds.c.phase != CANCELLED).order_by(rounds.c.number)
        return [_round(row) for row in self._run(lambda conn: conn.execute(query).all())]

    def advance(self, code: str, round_id: int, from_phase: str, to_phase: str, timer: object = None) -> bool:
        """Move a round from one phase to the next; False if it was not in from_phase (already moved).
        Opening vote 2 starts its timer: `timer` seconds if given, else the one the round was asked with."""
        allowed = {("vote1", "between"), ("between", "vote2"), ("vote2", "reveal"), ("between", "reveal")}
        if (from_phase, to_phase) not in allowed:
            raise ValueError(f"a round does not go from {from_phase} to {to_phase}")
        now = datetime.now(UTC)

        def work(conn):
            closes_at = None
            if to_phase == "vote2":
                kept = conn.execute(select(rounds.c.timer_s).where(rounds.c.id == int(round_id))).scalar()
                closes_at = _deadline(now, timer if timer_seconds(timer) is not None else kept)
            statement = (
                update(rounds)
                .where(rounds.c.id == int(round_id), rounds.c.room_code == code, rounds.c.phase == from_phase)
                .values(phase=to_phase, closes_at=closes_at)
                .returning(rounds.c.id)
            )
            return conn.execute(statement).first() is not None

        return self._run(work)

    def vote(self, code: str, round_id: object, vote: object, student_id: str, option: object) -> str:
        """Record a student's answer in a vote: recorded, changed, closed, not-open, unknown, bad-option,
        room-closed, cancelled. The last answer within a vote is the one that counts; a tap after the
        vote's deadline is closed, even before anyone has closed it."""
        try:
            round_id, vote, option = int(round_id), int(vote), int(option)
        except (TypeError, ValueError):
            return "unknown"
        if vote not in OPEN_PHASE:
            return "unknown"
        now = datetime.now(UTC)

        def work(conn):
            lock = select(rounds.c.phase, rounds.c.question).where(rounds.c.id == round_id, rounds.c.room_code == code)
            if self.engine.dialect.name == "postgresql":
                lock = lock.with_for_update(read=True)  # a close waits until this vote is written
            row = conn.execute(lock).first()
            if row is None:
                return "unknown"
            if not 0 <= option < len(RoomQuestion.from_json(row.question).options):
                return "bad-option"
            earlier = conn.execute(
                select(votes.c.option).where(
                    votes.c.round_id == round_id, votes.c.vote == vote, votes.c.student_id == student_id
                )
            ).first()
            source = (
                select(literal(round_id), literal(vote), literal(student_id), literal(option), literal(now))
                .select_from(rounds.join(rooms, rooms.c.code == rounds.c.room_code))
                .where(
                    and_(
                        rounds.c.id == round_id,
                        rounds.c.room_code == code,
                        rounds.c.phase == OPEN_PHASE[vote],
                        or_(rounds.c.closes_at.is_(None), rounds.c.closes_at > now),
                        rooms.c.closed_at.is_(None),
                        rooms.c.expires_at > now,
                    )
                )
            )
            insert = self._insert_for(votes).from_select(
                ["round_id", "vote", "student_id", "option", "voted_at"], source
            )
            insert = insert.on_conflict_do_update(
                index_elements=["round_id", "vote", "student_id"],
                set_={"option": insert.excluded.option, "voted_at": insert.excluded.voted_at},
            ).returning(votes.c.option)
            if conn.execute(insert).first() is None:
                return self._why_not(conn, code, round_id, vote, now)
            conn.execute(
                self._insert_for(joins)
                .values(room_code=code, student_id=student_id, joined_at=now)
                .on_conflict_do_nothing()
            )
            return "recorded" if earlier is None else "changed"

        return self._run(work)

    def _why_not(self, conn, code: str, round_id: int, vote: int, now: datetime) -> str:
        """Why the insert found no open vote: read again, as a close may have landed since the first read."""
        room = conn.execute(select(rooms.c.closed_at, rooms.c.expires_at).where(rooms.c.code == code)).first()
        expires = room.expires_at if room.expires_at.tzinfo else room.expires_at.replace(tzinfo=UTC)
        if room.closed_at is not None or now >= expires:
            return "room-closed"
        row = conn.execute(select(rounds.c.phase, rounds.c.closes_at).where(rounds.c.id == round_id)).first()
        if row.phase == CANCELLED:
            return "cancelled"
        if PHASES.index(row.phase) > PHASES.index(OPEN_PHASE[vote]):
            return "closed"
        if row.phase == OPEN_PHASE[vote] and row.closes_at is not None and _aware(row.closes_at) <= now:
            return "closed"  # its timer ran out: whoever asks next closes it
        return "not-open"

    def vote_count(self, round_id: int, vote: int) -> int:
        query = select(func.count()).select_from(votes).where(votes.c.round_id == int(round_id), votes.c.vote == vote)
        return self._run(lambda conn: conn.execute(query).scalar())

    def tallies(self, rnd: Round) -> dict[int, Tally]:
        """{vote: Tally} for the votes of this round that have answers, every option listed (0 if unchosen)."""
        query = (
            select(votes.c.vote, votes.c.option, func.count())
            .where(votes.c.round_id == rnd.id)
            .group_by(votes.c.vote, votes.c.option)
        )
        n = len(rnd.question.options)
        counts: dict[int, list[int]] = {}
        for vote, option, count in self._run(lambda conn: conn.execute(query).all()):
            if 0 <= option < n:
                counts.setdefault(vote, [0] * n)[option] = count
        return {v: Tally(tuple(c), rnd.question.correct) for v, c in sorted(counts.items())}

    def my_vote(self, round_id: int, vote: int, student_id: str) -> int | None:
        """This student's option in a vote, to show them what the room holds for them."""
        query = select(votes.c.option).where(
            votes.c.round_id == int(round_id), votes.c.vote == vote, votes.c.student_id == student_id
        )
        return self._run(lambda conn: conn.execute(query).scalar())
