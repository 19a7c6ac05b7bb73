"""A student's phone in a class room: the question the lecturer is asking now, one tap per option.

The phone follows the lecturer's pace: it redraws itself every PHONE_REFRESH_S seconds and shows only
the current round. It never receives the first vote's distribution, and before the reveal it never
receives which option is right (the buttons are drawn from the options alone). After the reveal it
shows the right option and how this phone voted.
"""

from __future__ import annotations

from datetime import UTC, datetime

import streamlit as st

from classroom.codes import shown_code
from classroom.rounds import Round
from classroom.store import StoreUnavailable, get_store
from ui.frame.quiz_widget import escape_md
from ui.views.room import letter

from . import session as rooms
from .deck import shown_prompt

PHONE_REFRESH_S = 2.0
# Big targets on a phone (at least 44 px tall), the question's type large enough to read at arm's length.
PHONE_CSS = """
.st-key-room-vote button {min-height: 52px;}
.st-key-room-vote button > div {justify-content: flex-start; text-align: left;}
.st-key-room-vote button p {font-size: 1.1rem; white-space: normal;}
.st-key-room-question p {font-size: 1.15rem; line-height: 1.4;}
"""
WAITING = "Waiting for your lecturer to ask a question. This page follows the lecturer: nothing to press yet."
BETWEEN = "Vote 1 is closed. Talk it over with your neighbour: why do you think your answer is right?"
CANCELLED = "Your lecturer withdrew that question: nothing of it counts. Wait for the next one; this page follows."
ROOM_CLOSED = "This room has closed: your lecturer has ended it, and taps are no longer counted. Thank you!"
ROOM_EXPIRED = "This room has expired (rooms last a day): taps are no longer counted."
WARN_LAST_S = 10  # phones say "closing in ..." in a timed vote's last seconds


def phone_view(code: str) -> None:
    st.html(f"<style>{PHONE_CSS}</style>")
    rooms.remember_student()
    if notice := rooms.join(code):
        st.warning(notice)
    phone_round(code)


@st.fragment(run_every=PHONE_REFRESH_S)
def phone_round(code: str) -> None:
    try:
        room = get_store().room(code)
        rnd = get_store().current_round(code)  # closes a vote whose timer ran out
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    header = f"Room {shown_code(code)}"
    state = room.state(datetime.now(UTC)) if room is not None else "closed"
    if state != "open":  # the lecturer closed it: the phone says so at its next look, nothing else is drawn
        st.caption(header)
        st.warning(ROOM_EXPIRED if state == "expired" else ROOM_CLOSED, icon=":material/lock:")
        return
    if rnd is None:
        st.caption(header)
        st.info(WAITING, icon=":material/hourglass_top:")
        return
    if rnd.cancelled:
        st.caption(header)
        st.info(CANCELLED, icon=":material/cancel:")
        return
    vote = rnd.open_vote
    stage = {"vote1": "vote 1", "between": "discuss", "vote2": "vote 2", "reveal": "the answer"}[rnd.phase]
    st.caption(f"{header} · question {rnd.number} · {stage}")
    with st.container(key="room-question"):
        st.markdown(shown_prompt(rnd.question))  # a deck's typed question keeps its Markdown and LaTeX
    if vote is not None:
        vote_buttons(code, rnd, vote)
        return
    for v in (1, 2):  # a tap that reached the room after its vote closed says so
        said = rooms.vote_said(rnd.id, v)
        if said and said[0] not in ("recorded", "changed"):
            st.warning(said[1])
    if rnd.phase == "between":
        options_listed(rnd, rooms.my_vote(rnd.id, 1))
        st.info(BETWEEN, icon=":material/forum:")
    else:
        answer_shown(rnd)


def options_listed(rnd: Round, mine: int | None) -> None:
    """The question's options during the discussion, this phone's own vote 1 marked (never the right one)."""
    with st.container(key="room-options"):
        for i, option in enumerate(rnd.question.options):
            said = "  ← your vote 1" if i == mine else ""
            st.markdown(f"**{letter(i)}** {escape_md(option)}{said}")
    if mine is None:
        st.caption("You did not vote in vote 1: you can still vote in vote 2.")
    else:
        st.caption(f"Your vote 1: {letter(mine)}. Nobody else sees it.")


def vote_buttons(code: str, rnd: Round, vote: int) -> None:
    mine = rooms.my_vote(rnd.id, vote)
    left = rnd.seconds_left(datetime.now(UTC))
    if left is not None and left <= WARN_LAST_S:
        st.warning(f"Vote {vote} is closing in {left:.0f} s.", icon=":material/timer:")
    with st.container(key="room-vote"):
        for i, option in enumerate(rnd.question.options):
            st.button(
                f"**{letter(i)}**\u2003{escape_md(option)}",  # an em space after the letter
                key=f"room_vote_{rnd.id}_{vote}_{i}",
                type="primary" if mine == i else "secondary",  # this phone's own choice, never the right one
                on_click=rooms.cast_vote,
                args=(code, rnd.id, vote, i),
                width="stretch",
            )
    said = rooms.vote_said(rnd.id, vote)
    if said:
        status, text = said
        (st.success if status in ("recorded", "changed") else st.warning)(text)
    elif mine is not None:
        st.success(f"Your vote in vote {vote}: {letter(mine)}. Tap another option to change it.")
    else:
        st.caption("Tap your answer. Nobody sees who voted what.")
    if vote == 2 and (first := rooms.my_vote(rnd.id, 1)) is not None:
        st.caption(f"Your vote 1 was {letter(first)}.")


def answer_shown(rnd: Round) -> None:
    q = rnd.question
    st.success(f"**The answer: {letter(q.correct)}**, {escape_md(q.options[q.correct])}")
    votes = [(v, rooms.my_vote(rnd.id, v)) for v in (1, 2)]
    said = [f"vote {v}: {letter(o)}" for v, o in votes if o is not None]
    if said:
        st.caption("You answered " + ", ".join(said) + ".")
    last = next((o for _, o in reversed(votes) if o is not None), None)
    if last is not None and last != q.correct and q.why_wrong and q.why_wrong[last]:
        st.markdown(f"**The idea behind {letter(last)}:** {escape_md(q.why_wrong[last])}")
