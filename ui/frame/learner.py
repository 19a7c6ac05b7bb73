"""The learner's own record as a session sees it: who this browser is (a signed cookie), what to store,
and what to say when the store cannot be reached. The record itself is classroom/learners.py.

The record is made with the first answer a learner gives (a visit that only reads stores nothing); its
id then goes into a cookie for RETENTION_DAYS, signed, so a reload, a new tab, an app restart or a
week away find it again. A cookie that does not verify or names no record is treated as absent. If the
database is down, the lessons work as before and the sidebar says that progress is not being saved.

Session-state keys:
  _learner          this session's learner id (None until the first answer, or a verified cookie)
  _learner_cookie   the id whose cookie this session has written
  _learner_down     the store failed on this session: the sidebar says progress is not saved
  _learner_limited  answers were refused as a flood
  _learner_history  (id, its answers, when they were read): the record as this session last read it, with
                    the answers this session has stored since, so a rerun does not read the database again
"""

from __future__ import annotations

import os
import time

import streamlit as st

from classroom import clock
from classroom.learners import MAX_ITEM, RETENTION_DAYS, Event, sign, verified
from classroom.schedule import Attempt
from classroom.store import StoreUnavailable, get_store

COOKIE = "encoder_lab_learner"
RECORDS_VAR = "ENCODER_LAB_LEARNER_RECORDS"  # "off": keep nothing across visits (the visit's own record only)
ID_KEY = "_learner"
COOKIE_SET_KEY = "_learner_cookie"
DOWN_KEY = "_learner_down"
LIMITED_KEY = "_learner_limited"
LOOKED_KEY = "_learner_looked"
HISTORY_KEY = "_learner_history"
HISTORY_FRESH_S = 30.0  # read the record again after this long: another tab's answers show up within it
CLEARED = "cleared"  # COOKIE_SET_KEY's value once the cookie is to be, or has been, removed
DOWN = "Your progress is not being saved just now (its database cannot be reached); the lessons work as usual."
LIMITED = "Too many answers in a minute from this browser: the last ones were not saved to your progress."


def _cookie_value() -> str | None:
    try:
        value = st.context.cookies.get(COOKIE)
    except Exception:  # outside a browser session
        return None
    return value if isinstance(value, str) and len(value) <= 80 else None


def records_on() -> bool:
    return os.environ.get(RECORDS_VAR, "on").strip().lower() not in ("off", "0", "no", "false")


def known_learner() -> str | None:
    """This browser's record, if it has one: this session's, else the one its cookie names (verified)."""
    if not records_on():
        return None
    if ID_KEY in st.session_state:
        return st.session_state[ID_KEY]
    if st.session_state.get(LOOKED_KEY):
        return None
    st.session_state[LOOKED_KEY] = True
    cookie = _cookie_value()
    if cookie is None:
        return None
    try:
        store = get_store()
        learner = verified(store.cookie_secret(), cookie)
        if learner is None or not store.learner_exists(learner):
            return None  # forged, tampered, deleted or expired: a new record starts with the next answer
    except StoreUnavailable:
        st.session_state[DOWN_KEY] = True
        return None
    st.session_state[ID_KEY] = learner
    return learner


def _ensure_learner() -> str:
    learner = known_learner()
    if learner is None:
        learner = get_store().new_learner(clock.now())
        st.session_state[ID_KEY] = learner
    return learner


def adopt(learner: str) -> None:
    """This browser now holds that record (a transfer code was redeemed): the cookie follows."""
    st.session_state[ID_KEY] = learner
    st.session_state.pop(COOKIE_SET_KEY, None)


def forget() -> None:
    """After "Delete my record": no record, and the cookie is cleared on the next run (keep_cookie)."""
    st.session_state[ID_KEY] = None
    st.session_state[COOKIE_SET_KEY] = CLEARED


def record(event: Event) -> None:
    """Store one answer in this browser's record (making the record on the first one). Never raises:
    a store that is down, or a flood, is said in the sidebar instead."""
    if not records_on():
        return
    try:
        new = known_learner() is None
        learner = _ensure_learner()
        now = clock.now()
        said = get_store().record(learner, event, now)
        if said == "unknown":  # deleted elsewhere (another tab), or expired: start anew
            st.session_state.pop(ID_KEY, None)
            st.session_state[LOOKED_KEY] = True
            new, learner = True, _ensure_learner()
            said = get_store().record(learner, event, now)
    except StoreUnavailable:
        st.session_state[DOWN_KEY] = True
        return
    st.session_state[DOWN_KEY] = False
    st.session_state[LIMITED_KEY] = said == "limited"
    if said == "recorded":
        _keep_answer(learner, event, now, new)


def _keep_answer(learner: str, event: Event, at, new: bool) -> None:
    """Add a stored answer to the session's copy of the record, as the store would give it back. A record
    made for this answer holds it alone; otherwise a copy is extended only if it is this record's."""
    attempt = Attempt(event.concept, event.right, at, event.item[:MAX_ITEM], event.sure, event.lesson, event.step)
    kept = st.session_state.get(HISTORY_KEY)
    if new:
        st.session_state[HISTORY_KEY] = (learner, [attempt], time.monotonic())
    elif kept is not None and kept[0] == learner:
        kept[1].append(attempt)


def history() -> list[Attempt] | None:
    """This browser's answers, oldest first; [] with no record yet; None when the store cannot be read."""
    try:
        learner = known_learner()
        if learner is None:
            return []
        kept = st.session_state.get(HISTORY_KEY)
        if kept is not None and kept[0] == learner and time.monotonic() - kept[2] < HISTORY_FRESH_S:
            return list(kept[1])
        answers = get_store().history(learner)
    except StoreUnavailable:
        st.session_state[DOWN_KEY] = True
        return None
    st.session_state[HISTORY_KEY] = (learner, answers, time.monotonic())
    return list(answers)


def keep_cookie() -> None:
    """Write the signed id into a cookie once per session and record (the app frame calls it each run).
    The value is hex digits and a dot, which is what makes putting it in a script safe."""
    learner = st.session_state.get(ID_KEY)
    if st.session_state.get(COOKIE_SET_KEY) == CLEARED and not learner:
        st.session_state[COOKIE_SET_KEY] = "cleared and said"
        clear = f"<script>document.cookie = '{COOKIE}=; path=/; max-age=0; SameSite=Lax';</script>"
        st.html(clear, unsafe_allow_javascript=True)
        return
    if not learner or st.session_state.get(COOKIE_SET_KEY) == learner:
        return
    try:
        value = sign(get_store().cookie_secret(), learner)
    except StoreUnavailable:
        return
    st.session_state[COOKIE_SET_KEY] = learner
    age = RETENTION_DAYS * 86_400
    st.html(
        f"<script>document.cookie = '{COOKIE}={value}; path=/; max-age={age}; SameSite=Lax';</script>",
        unsafe_allow_javascript=True,
    )


def status_notice() -> None:
    """The sidebar's line when answers are not being saved."""
    if st.session_state.get(DOWN_KEY):
        st.caption(DOWN)
    elif st.session_state.get(LIMITED_KEY):
        st.caption(LIMITED)
