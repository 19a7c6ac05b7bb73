"""My progress: each lesson's ideas as not tried, missed, practising or mastered, with the next review;
a code that moves the record to another device; and "Delete my record". No account: the record is an
anonymous id this browser keeps (docs/privacy.md says what is stored, and for how long)."""

import streamlit as st

from classroom import clock
from classroom.codes import shown_code
from classroom.learners import RETENTION_DAYS, TRANSFER_MINUTES
from classroom.store import StoreUnavailable, get_store
from ui.frame import learner, review
from ui.frame.predict import REVIEW_LINK
from ui.frame.sections import finish, narrative, start
from ui.views.progress import progress_table

PARAMS: list = []
start("progress", PARAMS)
CODE_KEY, TYPED_KEY, SAID_KEY = "_progress_code", "progress_transfer_in", "_progress_said"

st.title("My progress")
narrative(
    "Every prediction you commit, every quiz answer and every review answer is kept under an anonymous id "
    "that this browser holds, so your progress is here after a reload, in a new tab and next week. An idea "
    "you miss comes back in the review at once and again the next day; each right answer on a new question "
    "moves it out to 1, 3, 7 and then 21 days, and right answers at two growing gaps mark it mastered. "
    f"Nothing names you; a record unused for {RETENTION_DAYS} days is deleted."
)

now = clock.now()
states = review.states(now)
if not learner.records_on():
    st.info("This lab is set to keep no record across visits: only this visit's predictions are reviewed.")
elif states is None:
    st.warning(learner.DOWN)
else:
    table = progress_table(review.lesson_ideas(), states, now, review.idea_label, review.lesson_title)
    st.table(table.set_index("lesson"))  # plain cells: readable on a phone, and few rows
    due = [s for s in states.values() if s.is_due(now)]
    if due:
        st.page_link(
            "pages/quiz.py", label=f"Review the {len(due)} due now", icon=":material/replay:", query_params=REVIEW_LINK
        )
    elif not states:
        st.caption("Nothing yet: commit a prediction in any lesson, or answer a quiz question, and it appears here.")


def make_code() -> None:
    try:
        who = learner.known_learner()
        if who is None:
            st.session_state[SAID_KEY] = "There is no record on this browser yet: answer something first."
            return
        st.session_state[CODE_KEY] = get_store().transfer_code(who, clock.now())
    except StoreUnavailable:
        st.session_state[SAID_KEY] = learner.DOWN


def take_code() -> None:
    try:
        found = get_store().redeem(st.session_state.get(TYPED_KEY, ""), clock.now())
    except StoreUnavailable:
        st.session_state[SAID_KEY] = learner.DOWN
        return
    st.session_state[TYPED_KEY] = ""
    if found is None:
        st.session_state[SAID_KEY] = "That code names no record: codes work once, for a few minutes. Make a new one."
        return
    learner.adopt(found)
    st.session_state[SAID_KEY] = "Done: this browser now holds that record."


def delete_record() -> None:
    try:
        who = learner.known_learner()
        if who is not None:
            get_store().delete_learner(who)
    except StoreUnavailable:
        st.session_state[SAID_KEY] = learner.DOWN
        return
    learner.forget()
    st.session_state[SAID_KEY] = "Your record is deleted, every row of it. A new one starts with your next answer."


st.subheader("Move my record to another device")
left, right = st.columns(2)
with left:
    st.button("Make a code", key="progress_make_code", on_click=make_code, icon=":material/key:")
    if code := st.session_state.get(CODE_KEY):
        st.markdown(f"Type **{shown_code(code)}** on the other device within {TRANSFER_MINUTES} minutes.")
with right:
    st.text_input("A code from another device", key=TYPED_KEY, max_chars=12, placeholder="ABCD-EFGH")
    st.button("Use this code", key="progress_take_code", on_click=take_code)

st.subheader("Delete my record")
st.button("Delete my record", key="progress_delete", on_click=delete_record, type="secondary", icon=":material/delete:")
if said := st.session_state.pop(SAID_KEY, None):
    st.info(said)
finish(PARAMS)
