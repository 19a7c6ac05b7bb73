"""Class room: a lecturer opens a room on a quiz, students join by link or QR code, and the room's
answers come in live, the most-missed question first. The lecturer's view needs the room's key."""

from datetime import UTC, datetime

import streamlit as st

from classroom.codes import shown_code
from classroom.limits import PER_SESSION
from classroom.results import summarize
from classroom.store import StoreUnavailable, get_store
from ui.frame import room_session as rooms
from ui.frame.charts import show_live_chart
from ui.frame.quiz_widget import QUIZ_SEED, current_quiz_seed, escape_md, fresh_quiz_seed
from ui.frame.sections import narrative, start
from ui.frame.state import write_url
from ui.views import room as view

PARAMS = [rooms.ROOM]
MAX_CHARTS = 12  # the most-missed questions drawn; the table above lists every answered one
OPEN_SEED_KEY = "room_quiz_seed"
NOTICE_KEY = "_room_notice"
WRONG_KEY = "_room_wrong_key"

rooms.take_key_from_link()  # before the link is read: the key must not stay in the address bar
start("room", PARAMS)
st.title("Class room")


def open_clicked() -> None:
    st.session_state[NOTICE_KEY] = rooms.open_room(int(st.session_state[OPEN_SEED_KEY]))


def open_form() -> None:
    narrative(
        "Open a room on one quiz and project its QR code: students who scan it (or open the link) get the same "
        "questions in the same order, and the first answer each of them gives to each question comes here, "
        "live, with no name attached. Rooms close when you say so and are deleted a day after they open."
    )
    if OPEN_SEED_KEY not in st.session_state:
        st.session_state[OPEN_SEED_KEY] = current_quiz_seed() or fresh_quiz_seed()
    c_seed, c_open = st.columns([2, 1], vertical_alignment="bottom")
    c_seed.number_input(
        "Quiz number", min_value=int(QUIZ_SEED.lo), max_value=int(QUIZ_SEED.hi), step=1, key=OPEN_SEED_KEY
    )
    c_open.button("Open a room", key="room_open", type="primary", on_click=open_clicked, icon=":material/groups:")


def close_clicked(code: str) -> None:
    try:
        get_store().close_room(code)
    except StoreUnavailable:
        st.session_state[NOTICE_KEY] = rooms.DOWN


def room_csv(code: str, quiz_seed: int) -> str:
    """Built when the button is clicked, from the answers stored by then."""
    try:
        rows = get_store().answer_rows(code)
    except StoreUnavailable:
        rows = []
    questions = {i: rooms.room_question(quiz_seed, i) for i in {r.question_index for r in rows}}
    return view.results_csv(rows, questions)


@st.fragment(run_every=rooms.REFRESH_S)
def live_results(code: str, quiz_seed: int) -> None:
    """Redrawn on its own every REFRESH_S seconds: the lecturer never presses anything."""
    try:
        store = get_store()
        joined, counts = store.joined(code), store.option_counts(code)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    indices = sorted({c.question_index for c in counts})
    questions = {i: rooms.room_question(quiz_seed, i) for i in indices}
    results = summarize(counts, questions)
    c1, c2, c3 = st.columns(3)
    c1.metric("Students joined", joined)
    c2.metric("Answers", sum(r.answered for r in results))
    c3.metric("Questions answered", len(results))
    if not results:
        st.info(f"No answers yet. This part redraws itself every {rooms.REFRESH_S:g} seconds.")
        return
    st.markdown("**Most missed first**")
    st.dataframe(view.overview_table(results, questions), hide_index=True, key="room_overview")
    for r in results[:MAX_CHARTS]:
        q = questions[r.index]
        with st.expander(f"Question {r.index + 1}: the question and its options", expanded=False):
            st.markdown(escape_md(q.prompt))
            st.dataframe(view.option_table(r), hide_index=True)
        show_live_chart(view.option_chart(r, q.lesson), f"room_chart_{r.index}")  # redrawn every few seconds


def lecturer_view(code: str) -> None:
    room = get_store().room(code)
    shown = shown_code(code)
    if room is None:  # deleted since the page looked it up
        st.warning(f"Room {shown} no longer exists.")
        return
    student_link = rooms.app_link(f"quiz?room={code}")
    state = room.state(datetime.now(UTC))
    if state == "open":
        st.success(f"Room **{shown}** is open on quiz number {room.quiz_seed}. Students join with this link or code.")
    elif state == "closed":
        st.warning(
            f"Room **{shown}** closed at {room.closed_at:%H:%M} UTC: new answers are not recorded. "
            "Its results stay here for the rest of its day."
        )
    else:
        st.warning(f"Room **{shown}** has expired (rooms last a day): new answers are not recorded.")
    c_qr, c_link = st.columns([1, 2])
    c_qr.image(view.qr_png(student_link), width=260, caption=f"Scan to join room {shown}")
    with c_link:
        st.markdown(f"### Room code: {shown}")
        st.markdown("**Student link** (no lecturer key in it)")
        st.code(student_link, language=None, wrap_lines=True)
        with st.expander("Your lecturer link: keep it to yourself"):
            st.caption(
                "It opens this view in another browser. Anyone holding it sees the results and can close the room."
            )
            st.code(rooms.app_link(f"room?room={code}&key={rooms.lecturer_key(code)}"), language=None, wrap_lines=True)
        c_csv, c_close = st.columns(2)
        c_csv.download_button(
            "Results (CSV)",
            data=lambda: room_csv(code, room.quiz_seed),
            file_name=f"encoder-lab-room-{code}.csv",
            mime="text/csv",
            key="room_csv",
            on_click="ignore",
            icon=":material/table:",
        )
        if state == "open":
            c_close.button(
                "Close the room",
                key="room_close",
                on_click=close_clicked,
                args=(code,),
                icon=":material/lock:",
            )
    rooms.remember_lecturer(code)  # a reload of this page keeps the lecturer's view
    live_results(code, room.quiz_seed)


def unlock_clicked(code: str) -> None:
    st.session_state[WRONG_KEY] = not rooms.unlock(code, str(st.session_state.get("room_key_typed", "")).strip())


def visitor_view(code: str) -> None:
    """Anyone without the key: where to answer, and a place to type the key."""
    shown = shown_code(code)
    st.info(
        f"This is the lecturer's page of room **{shown}**. To answer its questions, open the quiz. "
        "Lecturers: open your lecturer link, or type the key it ends with."
    )
    st.page_link("pages/quiz.py", label=f"Join room {shown}", icon=":material/quiz:", query_params={"room": code})
    with st.form("room_key_form"):
        st.text_input("Lecturer key", type="password", max_chars=64, key="room_key_typed")
        st.form_submit_button("Show the room's results", key="room_key_submit", on_click=unlock_clicked, args=(code,))
    if st.session_state.pop(WRONG_KEY, False):
        st.error(f"That is not this room's lecturer key. Wrong keys count against a limit of {PER_SESSION} a minute.")


notice = st.session_state.pop(NOTICE_KEY, None)
if notice:
    st.error(notice)
found = rooms.find_room(st.session_state.get(rooms.ROOM.key))
if found.kind == "none":
    open_form()
elif found.room is None:
    st.warning(found.notice)
    st.session_state[rooms.ROOM.key] = ""  # back to a clean page: the form to open a room
    open_form()
else:
    try:
        if rooms.lecturer_key(found.code):
            lecturer_view(found.code)
        else:
            visitor_view(found.code)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
write_url(PARAMS)
