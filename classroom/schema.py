"""The class room's tables: rooms, the students who joined them, quiz answers, peer-instruction rounds with
their votes, and lecturers' decks. Created on first use (RoomStore.ensure_schema); a room's rows go when the
room goes."""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    ForeignKey,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
)

OPTION_CHARS = 200  # an answer is stored as at most this many characters

metadata = MetaData()
rooms = Table(
    "room",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("key_hash", String(64), nullable=False),
    Column("quiz_seed", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False, index=True),
    Column("closed_at", DateTime(timezone=True)),
    # Added after the first release (nullable, so ensure_schema can add them): the deck the lecturer presents in
    # this room and its step, from 0, so the presenter view and the projected screen move it together.
    Column("deck_id", String(16)),
    Column("deck_step", Integer),
)
joins = Table(
    "room_student",
    metadata,
    Column("room_code", String(16), ForeignKey("room.code", ondelete="CASCADE"), primary_key=True),
    Column("student_id", String(32), primary_key=True),
    Column("joined_at", DateTime(timezone=True), nullable=False),
)
answers = Table(
    "room_answer",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("room_code", String(16), ForeignKey("room.code", ondelete="CASCADE"), nullable=False),
    Column("student_id", String(32), nullable=False),
    Column("question_index", Integer, nullable=False),
    Column("question_id", String(80), nullable=False),
    Column("option", String(OPTION_CHARS), nullable=False),
    Column("correct", Boolean, nullable=False),
    Column("answered_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("room_code", "student_id", "question_index", name="one_answer_per_student"),
)
rounds = Table(
    "room_round",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("room_code", String(16), ForeignKey("room.code", ondelete="CASCADE"), nullable=False, index=True),
    # 1, 2, ... within the room, as the lecturer's screen counts them; a cancelled round's becomes minus its id,
    # so the next round takes its number
    Column("number", Integer, nullable=False),
    Column("question", Text, nullable=False),  # classroom.questions.RoomQuestion as JSON, the right option included
    Column("phase", String(16), nullable=False),  # classroom.rounds.PHASES, or CANCELLED
    Column("transfer_of", Integer),  # the round whose idea this one asks again on a new sentence
    Column("opened_at", DateTime(timezone=True), nullable=False),
    # Added after the first release: nullable, so ensure_schema can add them to an older database's table.
    Column("timer_s", Integer),  # each vote's timer in seconds, as the lecturer chose it when asking (None: none)
    Column("closes_at", DateTime(timezone=True)),  # the open vote's deadline, if timed
    Column("shown", Boolean),  # the lecturer chose "Show results": the projected screen may show the votes
    UniqueConstraint("room_code", "number", name="one_round_number_per_room"),
)
votes = Table(
    "room_vote",
    metadata,
    Column("round_id", Integer, ForeignKey("room_round.id", ondelete="CASCADE"), nullable=False),
    Column("vote", Integer, nullable=False),  # 1 or 2
    Column("student_id", String(32), nullable=False),
    Column("option", Integer, nullable=False),  # index into the question's options
    Column("voted_at", DateTime(timezone=True), nullable=False),
    PrimaryKeyConstraint("round_id", "vote", "student_id", name="one_vote_per_student"),  # the last answer counts
)

# ---- a learner's own record: an anonymous id, each answer with its time, and a code to move it
learners = Table(
    "learner",
    metadata,
    Column("id", String(32), primary_key=True),  # 128 random bits, as hex: never a name or an address
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("touched_at", DateTime(timezone=True), nullable=False, index=True),  # untouched for long: deleted
)
learner_events = Table(
    "learner_event",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("learner_id", String(32), ForeignKey("learner.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("kind", String(16), nullable=False),  # classroom.learners.KINDS
    Column("lesson", String(32), nullable=False),
    Column("concept", String(80), nullable=False),  # the quiz generator that practises the idea
    Column("item", String(120), nullable=False),  # what was asked: a question and a digest of its input
    Column("right", Boolean),  # None: skipped, or a guess no model can judge
    Column("sure", Boolean),  # None: not asked, or skipped
    Column("step", Integer),  # the lesson step that teaches it
    Column("at", DateTime(timezone=True), nullable=False),
)
learner_transfers = Table(
    "learner_transfer",
    metadata,
    Column("code", String(16), primary_key=True),
    Column("learner_id", String(32), ForeignKey("learner.id", ondelete="CASCADE"), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
)
lab_settings = Table(  # values every app process shares: the key that signs learner cookies
    "lab_setting",
    metadata,
    Column("name", String(32), primary_key=True),
    Column("value", String(128), nullable=False),
)

# ---- the lecturers' decks (classroom/decks.py): kept as their file, under an id taken from its content
decks = Table(
    "deck",
    metadata,
    Column("id", String(16), primary_key=True),  # classroom.decks.Deck.id: the same deck, the same id
    Column("title", String(200), nullable=False),
    Column("body", Text, nullable=False),  # the deck's file (classroom.decks.Deck.to_dict) as JSON
    Column("created_at", DateTime(timezone=True), nullable=False),
)
