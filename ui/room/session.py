"""The class room as a session sees it: which room the link names, this browser's anonymous id, the
lecturer's key, and answers sent to the room. The store itself is classroom/ (no streamlit there).

Session-state keys:
  room              the room code from the link (`?room=`), as typed; checked by find_room
  _room_student     this browser's random id (also a cookie for a day, so a reload is the same student)
  _room_keys        code -> lecturer key, for the rooms this session opened or unlocked
  _room_failed      codes this session already looked up in vain (counted once against the limit)
  _room_found       codes this session found: looked up again without asking the limit
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

import streamlit as st

from classroom.codes import key_shape_ok, new_student_id, parse_code, parse_student_id, shown_code
from classroom.limits import LIMITER
from classroom.links import Base, lan_address, public_base
from classroom.store import Room, StoreUnavailable, get_store
from encoder_core.quiz import Grade, Question, question_for
from ui.frame.params import Param, snippet
from ui.frame.state import PUBLIC_URL_KEY as STATE_PUBLIC_URL_KEY

from .quiz import answer_option

ROOM = Param("room", "", "text", max_len=40)
# Which lecturer's view: the projected screen (the count only until "Show results") or the presenter view on
# the lecturer's own device (the distribution and the suggestion too). Without the room's key: a phone's view.
VIEW = Param("view", "screen", "choice", options=("screen", "presenter"))
LINK_KEY = "key"  # the lecturer link's parameter: taken out of the URL as soon as the page reads it
STUDENT_COOKIE = "encoder_lab_student"
LECTURER_COOKIE = "encoder_lab_room_"  # + the room code
STUDENT_KEY = "_room_student"
KEYS_KEY = "_room_keys"
FAILED_KEY = "_room_failed"
FOUND_KEY = "_room_found"
COOKIE_SET_KEY = "_room_cookie_set"
REFRESH_S = 2.0
_COOKIE_SAFE = re.compile(r"[A-Za-z0-9_-]{1,64}")
DOWN = (
    "The class room's database cannot be reached just now, so room answers are not being recorded. "
    "The lessons and the quiz work as usual."
)


@dataclass(frozen=True)
class Found:
    """What a room link led to. kind: none, bad, limited, down, unknown, open, closed, expired."""

    kind: str
    code: str | None = None
    room: Room | None = None
    notice: str | None = None


def client() -> tuple[str, str | None]:
    """Whose guesses count together: this browser session, and the address it comes from (if known)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    try:
        ip = st.context.ip_address
    except Exception:  # outside a browser session
        ip = None
    return (ctx.session_id if ctx else "none"), (ip or None)


def find_room(raw: object) -> Found:
    if raw in (None, ""):
        return Found("none")
    code = parse_code(raw)
    if code is None:
        return Found(
            "bad", notice=f"`room={snippet(str(raw))}` is not a room code (8 letters and digits, like ABCD-EFGH)."
        )
    failed = st.session_state.setdefault(FAILED_KEY, set())
    found_before = st.session_state.setdefault(FOUND_KEY, set())
    unknown = Found(
        "unknown", code, notice=f"There is no open room {shown_code(code)}: check the code with your lecturer."
    )
    if code in failed:
        return unknown
    if code not in found_before and not LIMITER.allowed(*client()):
        return Found(
            "limited", code, notice="Too many room codes were tried from here in the last minute: wait a minute."
        )
    try:
        room = get_store().room(code)
    except StoreUnavailable:
        return Found("down", code, notice=DOWN)
    if room is None:
        LIMITER.failed(*client())
        failed.add(code)
        return unknown
    found_before.add(code)  # a room this session found is never held up by others' guessing
    state = room.state(datetime.now(UTC))
    notices = {
        "closed": f"Room {shown_code(code)} is closed: answers are no longer recorded for it.",
        "expired": f"Room {shown_code(code)} has expired (rooms last a day): answers are no longer recorded for it.",
    }
    return Found(state, code, room, notices.get(state))


# ---------------------------------------------------------------- students


def student_id() -> str:
    """This browser's anonymous id: from this session, else the cookie a previous visit left, else new."""
    sid = st.session_state.get(STUDENT_KEY)
    if sid is None:
        sid = parse_student_id(_cookie(STUDENT_COOKIE)) or new_student_id()
        st.session_state[STUDENT_KEY] = sid
    return sid


def remember_student() -> None:
    """Leave the id in a cookie for a day (rooms last a day), so a reload does not make a new student."""
    sid = student_id()
    if st.session_state.get(COOKIE_SET_KEY) != sid:
        st.session_state[COOKIE_SET_KEY] = sid
        _set_cookie(STUDENT_COOKIE, sid)  # 32 hex digits (token_hex / parse_student_id)


def join(code: str) -> str | None:
    """Count this browser in the room once per session; a notice if the database is down."""
    joined = st.session_state.setdefault("_room_joined", set())
    if code in joined:
        return None
    try:
        get_store().join(code, student_id())
    except StoreUnavailable:
        return DOWN
    joined.add(code)
    return None


def recorder(code: str):
    """The quiz widget's on_answer for a room: sends a graded answer and says what became of it."""
    shown = shown_code(code)
    messages = {
        "recorded": f"Sent to room {shown}, anonymously.",
        "already": f"Room {shown} already has your first answer to this question; only that one counts there.",
        "closed": f"Room {shown} is closed: this answer was not sent.",
        "expired": f"Room {shown} has expired: this answer was not sent.",
        "unknown": f"Room {shown} no longer exists: this answer was not sent.",
    }

    def on_answer(index: int, question: Question, response: object, graded: Grade) -> str:
        option = answer_option(question, response, graded)
        try:
            status = get_store().answer(code, student_id(), index, question.id, option, graded.correct)
        except StoreUnavailable:
            return "The class room's database cannot be reached just now: this answer was not sent to the room."
        return messages[status]

    return on_answer


# ---------------------------------------------------------------- lecturers


def take_key_from_link() -> None:
    """A lecturer link's key moves out of the address bar (which the sidebar shows and a projector shows
    the room) into this session. Call before the page reads its link."""
    if LINK_KEY in st.query_params:
        st.session_state["_room_link_key"] = st.query_params[LINK_KEY][:64]
        del st.query_params[LINK_KEY]


def lecturer_key(code: str) -> str | None:
    """The key, if this session holds the right one for this room: one from the link, or the cookie this
    browser kept when it last showed the lecturer's view (so a reload keeps it), is checked here."""
    keys = st.session_state.setdefault(KEYS_KEY, {})
    linked = st.session_state.pop("_room_link_key", None)
    if linked is not None and code not in keys:
        unlock(code, linked)
    if code not in keys and not st.session_state.get(f"_room_cookie_tried_{code}"):
        st.session_state[f"_room_cookie_tried_{code}"] = True
        kept = _cookie(LECTURER_COOKIE + code)
        if kept:
            unlock(code, kept)
    return keys.get(code)


def remember_lecturer(code: str) -> None:
    """Keep the lecturer's key in this browser for the room's day. The key is token_urlsafe characters
    and the code the room alphabet (both checked), so nothing else reaches the script."""
    key = st.session_state.get(KEYS_KEY, {}).get(code)
    flag = f"_room_cookie_set_{code}"
    if key and parse_code(code) == code and key_shape_ok(key) and not st.session_state.get(flag):
        st.session_state[flag] = True
        _set_cookie(LECTURER_COOKIE + code, key)


def _set_cookie(name: str, value: str) -> None:
    """A cookie for a day, set by the browser. Callers pass only checked names and values (letters,
    digits, - and _), which is what makes putting them in a script safe; anything else is not set."""
    if not _COOKIE_SAFE.fullmatch(name) or not _COOKIE_SAFE.fullmatch(value):
        return
    st.html(
        f"<script>document.cookie = '{name}={value}; path=/; max-age=86400; SameSite=Lax';</script>",
        unsafe_allow_javascript=True,
    )


def _cookie(name: str) -> str | None:
    try:
        value = st.context.cookies.get(name)
    except Exception:  # outside a browser session
        return None
    return value if isinstance(value, str) and len(value) <= 64 else None


def unlock(code: str, key: str) -> bool:
    """Check a typed or linked lecturer key; wrong keys count against the guessing limit too."""
    if not LIMITER.allowed(*client()):
        return False
    try:
        ok = get_store().is_lecturer(code, key)
    except StoreUnavailable:
        return False
    if ok:
        st.session_state.setdefault(KEYS_KEY, {})[code] = key
    else:
        LIMITER.failed(*client())
    return ok


def open_room(quiz_seed: int) -> str | None:
    """Open a room for this quiz number, keep its key in this session, point the page at it; or a notice."""
    try:
        room, key = get_store().open_room(quiz_seed)
    except StoreUnavailable:
        return DOWN
    st.session_state.setdefault(KEYS_KEY, {})[room.code] = key
    st.session_state[ROOM.key] = room.code
    return None


@st.cache_resource(max_entries=4096, show_spinner=False)
def room_question(quiz_seed: int, index: int) -> Question:
    """Question index of a room's quiz, built once per process (the lecturer's view redraws every 2 s)."""
    return question_for(None, quiz_seed, index)


def page_url() -> str:
    """The address this page was opened at ("" outside a browser session)."""
    try:
        return st.context.url or ""
    except Exception:  # outside a browser session
        return ""


def page_address() -> str:
    """The address this page was opened at without its query, fragment and trailing slash."""
    return page_url().split("?", 1)[0].split("#", 1)[0].rstrip("/")


def app_link(path_and_query: str) -> str:
    """An absolute link into this app (for the QR code), from the address this page was opened at."""
    base = page_address()
    base = base.rsplit("/", 1)[0] if base.endswith("/room") else base
    return f"{base}/{path_and_query}" if base.startswith(("http://", "https://")) else f"/{path_and_query}"


# ---------------------------------------------------------------- peer-instruction votes

PUBLIC_URL_KEY = STATE_PUBLIC_URL_KEY  # the lecturer's setting: the app's public address (the share link's too)
VOTES_KEY = "_room_my_votes"  # (round id, vote) -> the option this browser holds in the room
VOTE_SAID_KEY = "_room_vote_said"  # (round id, vote) -> what became of the last tap, as a sentence
VOTE_MESSAGES = {
    "recorded": "Vote recorded: {letter}. Tap another option to change it until the vote closes.",
    "changed": "Vote changed to {letter}: only your last answer counts.",
    "closed": "This vote has closed: your tap was not counted.",
    "not-open": "This vote is not open yet: your tap was not counted.",
    "unknown": "That question is not one of this room's: your tap was not counted.",
    "bad-option": "That option is not one of this question's: your tap was not counted.",
    "room-closed": "The room is closed: your tap was not counted.",
    "cancelled": "Your lecturer withdrew that question: your tap was not counted.",
    "down": "The class room's database cannot be reached just now: your tap was not counted. Tap again in a moment.",
}


def cast_vote(code: str, round_id: int, vote: int, option: int) -> None:
    """A phone's tap (a button callback): send it to the room and keep what the room said."""
    try:
        status = get_store().vote(code, round_id, vote, student_id(), option)
    except StoreUnavailable:
        status = "down"
    if status in ("recorded", "changed"):
        st.session_state.setdefault(VOTES_KEY, {})[(round_id, vote)] = option
    said = VOTE_MESSAGES[status]
    st.session_state.setdefault(VOTE_SAID_KEY, {})[(round_id, vote)] = (status, said.format(letter=chr(65 + option)))


def my_vote(round_id: int, vote: int) -> int | None:
    """This browser's option in a vote: from this session, else asked of the room once (after a reload)."""
    held = st.session_state.setdefault(VOTES_KEY, {})
    if (round_id, vote) not in held:
        try:
            held[(round_id, vote)] = get_store().my_vote(round_id, vote, student_id())
        except StoreUnavailable:
            return None
    return held[(round_id, vote)]


def vote_said(round_id: int, vote: int) -> tuple[str, str] | None:
    return st.session_state.get(VOTE_SAID_KEY, {}).get((round_id, vote))


def public_base_url() -> Base:
    """The base of the room's link and QR code (classroom.links): the setting, the environment, the page."""
    return public_base(st.session_state.get(PUBLIC_URL_KEY, ""), page_url(), lan=lan_address())


def lecturer_link(code: str) -> str:
    """The presenter view's link, keyed, for the lecturer's own phone or laptop: on the address phones reach
    (the setting, ENCODER_LAB_PUBLIC_URL, or this machine's network address instead of localhost), never the
    student link's. Shown folded, never as a QR code on the projected screen."""
    base = public_base_url()
    key = lecturer_key(code) or ""
    path = f"room?room={code}&key={key}&view=presenter"
    return f"{base.url}/{path}" if base.url else f"/{path}"


def student_link(code: str) -> tuple[str, str]:
    """The link phones open to vote, and a warning when phones may not reach it."""
    base = public_base_url()
    return (f"{base.url}/room?room={code}" if base.url else f"/room?room={code}"), base.warning
