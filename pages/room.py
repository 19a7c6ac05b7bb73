"""Class room: a lecturer opens a room, students join by QR code, link or typed code, and the room runs
peer instruction: a question, vote 1, a suggestion, vote 2, the reveal with the model's chart, a transfer
question. The lecturer's view needs the room's key; everyone else gets the phone's voting view."""

from datetime import UTC, datetime

import streamlit as st

from classroom.codes import shown_code
from classroom.limits import PER_SESSION
from classroom.results import summarize
from classroom.store import StoreUnavailable, get_store
from ui.frame.charts import show_live_chart
from ui.frame.quiz_widget import QUIZ_SEED, current_quiz_seed, escape_md, fresh_quiz_seed
from ui.frame.sections import narrative, start
from ui.frame.state import value, write_url
from ui.room import session as rooms
from ui.room.deck import presenter_deck
from ui.room.join import join_panel
from ui.room.phone import ROOM_CLOSED, ROOM_EXPIRED, phone_view
from ui.room.rounds import lecturer_rounds, settings
from ui.views import room as view

PARAMS = [rooms.ROOM, rooms.VIEW]
MAX_CHARTS = 12  # the most-missed questions drawn; the table above lists every answered one
OPEN_SEED_KEY = "room_quiz_seed"
NOTICE_KEY = "_room_notice"
WRONG_KEY = "_room_wrong_key"

rooms.take_key_from_link()  # before the link is read: the key must not stay in the address bar
start("room", PARAMS)


def open_clicked() -> None:
    st.session_state[NOTICE_KEY] = rooms.open_room(int(st.session_state[OPEN_SEED_KEY]))


def open_form() -> None:
    narrative(
        "Open a room and project its QR code. You ask one question at a time; students vote on their phones, "
        "alone first, then again after talking it over, and the model's own chart shows the answer. Votes "
        "carry no name. Rooms close when you say so and are deleted a day after they open."
    )
    if OPEN_SEED_KEY not in st.session_state:
        st.session_state[OPEN_SEED_KEY] = current_quiz_seed() or fresh_quiz_seed()
    c_seed, c_open = st.columns([2, 1], vertical_alignment="bottom")
    c_seed.number_input(
        "Quiz number", min_value=int(QUIZ_SEED.lo), max_value=int(QUIZ_SEED.hi), step=1, key=OPEN_SEED_KEY
    )
    c_open.button("Open a room", key="room_open", type="primary", on_click=open_clicked, icon=":material/groups:")


def join_clicked() -> None:
    typed = str(st.session_state.get("room_code_typed", ""))
    st.session_state[rooms.ROOM.key] = typed.strip()[:40]


def join_form() -> None:
    """A student who has the code but not the link types it here."""
    with st.form("room_join_form"):
        st.text_input("Room code", max_chars=40, placeholder="ABCD-EFGH", key="room_code_typed")
        st.form_submit_button("Join the room", key="room_join", type="primary", on_click=join_clicked)


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


def join_block(code: str, state: str, student_link: str, link_warning: str, big: bool = True) -> None:
    """The links and the room's controls (and, big, the QR code and the room code beside them)."""
    if link_warning:
        st.warning(link_warning, icon=":material/wifi_off:")
    if big:
        c_qr, c_link = st.columns([1, 2])
        with c_qr:
            join_panel(code, student_link)
    else:
        c_link = st.container()
    with c_link:
        st.markdown(f"**Room code:** {shown_code(code)} (students may type it on the room page)")
        st.markdown("**Student link** (no lecturer key in it)")
        st.code(student_link, language=None, wrap_lines=True)
        with st.expander("Your presenter view: open it on your own phone or laptop, keep it to yourself"):
            st.caption(
                "This link holds the room's key. It opens the presenter view: the votes as they come in and the "
                "suggestion, which this projected screen keeps to the count until you press Show results. Anyone "
                "holding it sees the results and can close the room."
            )
            st.code(rooms.lecturer_link(code), language=None, wrap_lines=True)
        if state == "open":
            st.button("Close the room", key="room_close", on_click=close_clicked, args=(code,), icon=":material/lock:")


def presenter_view(code: str, quiz_seed: int) -> None:
    """The lecturer's private view on their own device: the round with its distribution and suggestion."""
    st.caption(f"Presenter view of room {shown_code(code)}: keep this screen to yourself.")
    rooms.remember_lecturer(code)
    presenter_deck(code)  # the deck the lecturer presents in this room, if any, with its Previous / Next
    lecturer_rounds(code, quiz_seed, presenter=True)
    settings()


def lecturer_view(code: str) -> None:
    room = get_store().room(code)
    shown = shown_code(code)
    if room is None:  # deleted since the page looked it up
        st.warning(f"Room {shown} no longer exists.")
        return
    if value(rooms.VIEW) == "presenter":
        presenter_view(code, room.quiz_seed)
        return
    student_link, link_warning = rooms.student_link(code)
    state = room.state(datetime.now(UTC))
    current = get_store().current_round(code)
    running = current is not None and not current.cancelled
    if state == "open" and not running:
        st.success(f"Room **{shown}** is open. Students join with this QR code, link or code.")
    elif state == "closed":
        st.warning(
            f"Room **{shown}** closed at {room.closed_at:%H:%M} UTC: new votes and answers are not recorded. "
            "Its results stay here for the rest of its day."
        )
    elif state == "expired":
        st.warning(f"Room **{shown}** has expired (rooms last a day): new votes and answers are not recorded.")
    rooms.remember_lecturer(code)  # a reload of this page keeps the lecturer's view
    if running:  # the question first; the QR code and the code stay large beside it for latecomers
        c_round, c_join = st.columns([2, 1])
        with c_join:
            join_panel(code, student_link)
        with c_round:
            lecturer_rounds(code, room.quiz_seed)
        with st.expander("Links, your presenter view, closing the room"):
            join_block(code, state, student_link, link_warning, big=False)
    else:
        join_block(code, state, student_link, link_warning)
        st.divider()
        lecturer_rounds(code, room.quiz_seed)
    settings()
    with st.expander("Self-paced quiz: students answer the whole quiz at their own pace"):
        quiz_link = student_link.replace(f"/room?room={code}", f"/quiz?room={code}")
        st.markdown("Instead of rounds, students may work through the room's quiz alone, at this link:")
        st.code(quiz_link, language=None, wrap_lines=True)
        st.download_button(
            "Self-paced quiz answers (CSV)",
            data=lambda: room_csv(code, room.quiz_seed),
            file_name=f"encoder-lab-room-{code}.csv",
            mime="text/csv",
            key="room_csv",
            on_click="ignore",
            icon=":material/table:",
        )
        live_results(code, room.quiz_seed)


def unlock_clicked(code: str) -> None:
    st.session_state[WRONG_KEY] = not rooms.unlock(code, str(st.session_state.get("room_key_typed", "")).strip())


def visitor_view(code: str, state: str, notice: str | None) -> None:
    """Anyone without the key: the phone's voting view, and (folded) a place to type the key."""
    if state == "open":
        phone_view(code)
    elif state in ("closed", "expired"):
        st.warning(ROOM_EXPIRED if state == "expired" else ROOM_CLOSED, icon=":material/lock:")
    else:
        st.warning(notice or f"Room {shown_code(code)} is not open.")
    with st.expander("Lecturer? Show this room's results"):
        lecturer_key_form(code)


def lecturer_key_form(code: str) -> None:
    with st.form("room_key_form"):
        st.text_input("Lecturer key", type="password", max_chars=64, key="room_key_typed")
        st.form_submit_button("Show the room's results", key="room_key_submit", on_click=unlock_clicked, args=(code,))
    if st.session_state.pop(WRONG_KEY, False):
        st.error(f"That is not this room's lecturer key. Wrong keys count against a limit of {PER_SESSION} a minute.")


notice = st.session_state.pop(NOTICE_KEY, None)
if notice:
    st.error(notice)
found = rooms.find_room(st.session_state.get(rooms.ROOM.key))
if found.kind == "none" or found.room is None:
    st.title("Class room")
    if found.kind != "none":
        st.warning(found.notice)
        st.session_state[rooms.ROOM.key] = ""  # back to a clean page: the forms
    st.markdown("**Students:** type the code your lecturer shows.")
    join_form()
    st.markdown("**Lecturers:** open a room.")
    open_form()
else:
    try:
        if rooms.lecturer_key(found.code):
            st.title("Class room")
            lecturer_view(found.code)
        else:
            visitor_view(found.code, found.kind, found.notice)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
write_url(PARAMS)
