"""The lecturer's side of a peer-instruction round: pose a question, watch the count, close vote 1, read
the suggestion, run vote 2, reveal with the shift and the model's chart, then the transfer question.

During a vote the screen shows how many have voted and nothing else (the distribution would bias the
second vote, and this screen is projected). Every phase change is a button callback that moves the
round in the store, so a second lecturer screen, or another app process, sees the same round.
"""

from __future__ import annotations

import hashlib
import secrets

import streamlit as st

from classroom.peer import MOVE_ON_ABOVE, RETEACH_BELOW, export_rows, suggest
from classroom.questions import BadQuestion, RoomQuestion, typed
from classroom.rounds import Round
from classroom.store import StoreUnavailable, get_store
from encoder_core.lessons import LESSON_TITLES
from ui.frame.charts import show_chart, show_table
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.quiz_widget import escape_md
from ui.views import room as view

from . import session as rooms
from . import sources
from .deck import ask_panel, shown_prompt
from .quiz import transfer

COUNT_REFRESH_S = 1.0  # the lecturer's count of votes: within a second of a tap
SOURCES = {"quiz": "the room's quiz", "lesson": "a lesson's prediction", "typed": "my own question"}
SAID_KEY = "_room_round_said"  # a message for the lecturer after a callback (a bad typed question, the database)
LOW_KEY, HIGH_KEY = "room_reteach_below", "room_move_on_above"
NEXT_QUIZ_KEY = "room_quiz_question"


def thresholds() -> tuple[float, float]:
    """The lecturer's settings, in 0..1; the defaults when they do not make sense together."""
    low = st.session_state.get(LOW_KEY, round(100 * RETEACH_BELOW)) / 100
    high = st.session_state.get(HIGH_KEY, round(100 * MOVE_ON_ABOVE)) / 100
    return (low, high) if 0 <= low < high <= 1 else (RETEACH_BELOW, MOVE_ON_ABOVE)


def settings() -> None:
    with st.expander("Settings: the suggestion's thresholds, the public address"):
        c_low, c_high = st.columns(2)
        c_low.slider("Teach again below (% right in vote 1)", 0, 100, round(100 * RETEACH_BELOW), 5, key=LOW_KEY)
        c_high.slider("Reveal and move on above (% right)", 0, 100, round(100 * MOVE_ON_ABOVE), 5, key=HIGH_KEY)
        low, high = st.session_state[LOW_KEY], st.session_state[HIGH_KEY]
        if low >= high:
            st.warning(
                f"“Teach again below” must be under “move on above”: using {RETEACH_BELOW:.0%} and "
                f"{MOVE_ON_ABOVE:.0%} until it is."
            )
        st.text_input(
            "Public address of this app (what phones open)",
            key=rooms.PUBLIC_URL_KEY,
            max_chars=300,
            placeholder="https://lab.example.edu or http://192.168.1.20:8501",
            help="Also set by the ENCODER_LAB_PUBLIC_URL environment variable. The link and QR code use it.",
        )


# ---------------------------------------------------------------- posing a question


def _said(message: str) -> None:
    st.session_state[SAID_KEY] = message


def _open(code: str, question: RoomQuestion | None, transfer_of: int | None = None) -> None:
    if question is None:
        _said("No question could be made from that: try another one.")
        return
    try:  # the options' order is drawn once for the round: the same letters on every phone
        get_store().open_round(code, question.shuffled(secrets.token_hex(8)), transfer_of)
    except StoreUnavailable:
        _said(rooms.DOWN)


def ask_quiz(code: str, quiz_seed: int) -> None:
    found = sources.quiz_round_question(quiz_seed, int(st.session_state.get(NEXT_QUIZ_KEY, 1)) - 1)
    if found is not None:
        st.session_state[NEXT_QUIZ_KEY] = found[0] + 2  # the quiz question after it, next time
    _open(code, found[1] if found else None)


def ask_prediction(code: str) -> None:
    sentence = " ".join(str(st.session_state.get("room_sentence", "")).split())[:200] or sources.DEFAULT_SENTENCE
    key = st.session_state.get("room_prediction", next(iter(sources.predictions())))
    try:
        question = sources.from_prediction(key, sentence, sidebar_model(), sidebar_seed())
    except sources.CannotAsk as err:
        _said(str(err))
        return
    _open(code, question)


def ask_typed(code: str) -> None:
    try:
        question = typed(
            st.session_state.get("room_typed_prompt"),
            st.session_state.get("room_typed_options"),
            st.session_state.get("room_typed_right"),
        )
    except BadQuestion as err:
        _said(str(err))
        return
    _open(code, question)


def ask_transfer(code: str, rnd: Round) -> None:
    digest = hashlib.sha256(f"{code}:{rnd.number}".encode()).digest()
    _open(code, transfer(rnd.question.concept, int.from_bytes(digest[:3], "big")), transfer_of=rnd.id)


def pose_form(code: str, quiz_seed: int) -> None:
    st.markdown("**Ask the room a question**")
    source = st.radio("Question from", list(SOURCES), format_func=SOURCES.get, horizontal=True, key="room_source")
    if source == "quiz":
        st.session_state.setdefault(NEXT_QUIZ_KEY, 1)
        st.number_input(f"Question of quiz {quiz_seed}", min_value=1, max_value=10_000, step=1, key=NEXT_QUIZ_KEY)
        st.caption("A typed-answer question is asked as a choice between its answer and the mistakes it diagnoses.")
        st.button(
            "Ask it: vote 1 opens", key="room_ask_quiz", type="primary", on_click=ask_quiz, args=(code, quiz_seed)
        )
    elif source == "lesson":
        names = {k: p.title for k, p in sources.predictions().items()}
        st.selectbox("Prediction", list(names), format_func=names.get, key="room_prediction")
        st.text_input("On the sentence", value=sources.DEFAULT_SENTENCE, max_chars=200, key="room_sentence")
        st.caption(
            "The model in the sidebar answers it (the [MASK] question: the lab's trained MLM); the reveal shows the "
            "lesson's chart."
        )
        st.button("Ask it: vote 1 opens", key="room_ask_lesson", type="primary", on_click=ask_prediction, args=(code,))
    else:
        st.text_area("Question", max_chars=400, key="room_typed_prompt")
        st.text_area("Options, one per line (2 to 6)", max_chars=800, key="room_typed_options")
        st.number_input("The right option's number", min_value=1, max_value=6, step=1, key="room_typed_right")
        st.button("Ask it: vote 1 opens", key="room_ask_typed", type="primary", on_click=ask_typed, args=(code,))


# ---------------------------------------------------------------- a round under way


@st.fragment(run_every=COUNT_REFRESH_S)
def live_count(code: str, round_id: int, vote: int) -> None:
    """How many have voted, redrawn every second: the count only, never the distribution."""
    try:
        count, joined = get_store().vote_count(round_id, vote), get_store().joined(code)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    c_votes, c_joined = st.columns(2)
    c_votes.metric(f"Votes in vote {vote}", count)
    c_joined.metric("Phones in the room", joined)


def _advance(code: str, rnd: Round, to: str) -> None:
    try:
        get_store().advance(code, rnd.id, rnd.phase, to)
    except StoreUnavailable:
        _said(rooms.DOWN)


def question_shown(rnd: Round, show_right: bool) -> None:
    q = rnd.question
    kind = "transfer question" if rnd.transfer_of else f"from {SOURCES[q.source]}"
    lesson = f" · {LESSON_TITLES.get(q.lesson, q.lesson)}" if q.lesson else ""
    st.caption(f"Question {rnd.number} · {kind}{lesson}")
    with st.container(key="room-lecturer-question"):
        st.markdown(f"### {shown_prompt(q)}")  # a deck's typed question keeps its Markdown and LaTeX
        for i, option in enumerate(q.options):
            mark = "  ✓" if show_right and i == q.correct else ""
            st.markdown(f"**{view.letter(i)}**  {escape_md(option)}{mark}")


def asked_with(rnd: Round) -> None:
    """The chart or table the question asks the room to read (at the reveal the proof draws them again)."""
    charts, table = sources.asked_with(rnd.question)
    if table is not None:
        show_table(table, hide_index=True)
    for i, chart in enumerate(charts):
        show_chart(chart, f"room_asked_{rnd.id}_{i}")


def round_panel(code: str, rnd: Round) -> None:
    question_shown(rnd, show_right=rnd.phase == "reveal")
    if rnd.open_vote is not None:
        live_count(code, rnd.id, rnd.open_vote)
        label = "Close vote 1" if rnd.open_vote == 1 else "Close vote 2 and reveal"
        st.button(
            label,
            key=f"room_close_vote_{rnd.open_vote}",
            type="primary",
            on_click=_advance,
            args=(code, rnd, "between" if rnd.open_vote == 1 else "reveal"),
            icon=":material/how_to_vote:",
        )
        asked_with(rnd)
    elif rnd.phase == "between":
        between(code, rnd)
        asked_with(rnd)
    else:
        reveal(code, rnd)


def between(code: str, rnd: Round) -> None:
    tally = get_store().tallies(rnd).get(1)
    advice = suggest(tally.share_correct if tally else None, *thresholds())
    st.session_state["_room_suggestion"] = advice.kind  # for the page's tests and the browser test
    box = {"reteach": st.error, "discuss": st.warning, "reveal": st.success, "none": st.info}[advice.kind]
    box(f"**Suggested: {advice.headline}.** {advice.why}", icon=":material/lightbulb:")
    c_vote2, c_reveal = st.columns(2)
    c_vote2.button(
        "Open vote 2",
        key="room_open_vote_2",
        type="primary" if advice.kind == "discuss" else "secondary",
        on_click=_advance,
        args=(code, rnd, "vote2"),
        width="stretch",
    )
    c_reveal.button(
        "Reveal the answer",
        key="room_reveal",
        type="primary" if advice.kind == "reveal" else "secondary",
        on_click=_advance,
        args=(code, rnd, "reveal"),
        width="stretch",
    )
    lesson = rnd.question.lesson
    if lesson in LESSON_TITLES:
        step = sources.reteach_step(rnd.question)
        st.page_link(
            f"pages/{lesson}.py",
            label=f"Teach it again: {LESSON_TITLES[lesson]}, step {step + 1}",
            icon=":material/school:",
            query_params={"step": step},
        )


def reveal(code: str, rnd: Round) -> None:
    q = rnd.question
    tallies = get_store().tallies(rnd)
    st.success(f"**The answer: {view.letter(q.correct)}**, {escape_md(q.options[q.correct])}")
    if tallies:
        show_chart(view.shift_chart(q, tallies), f"room_shift_{rnd.id}")
        last = tallies[max(tallies)]
        wrong = [(c, i) for i, c in enumerate(last.counts) if i != q.correct and c]
        if wrong and q.why_wrong:
            top = max(wrong)[1]
            if q.why_wrong[top]:
                st.markdown(
                    f"**The idea behind {view.letter(top)}**, the most chosen wrong answer: "
                    f"{escape_md(q.why_wrong[top])}"
                )
    else:
        st.info("Nobody voted in this round.")
    for i, chart in enumerate(sources.proof_charts(q)):
        show_chart(chart, f"room_proof_{rnd.id}_{i}")
    if q.explanation:
        with st.expander("The working, with the model's numbers"):
            st.markdown(escape_md(q.explanation))
    if q.concept:
        st.button(
            "Transfer question: the same idea on a new sentence",
            key="room_transfer",
            type="primary",
            on_click=ask_transfer,
            args=(code, rnd),
            icon=":material/autorenew:",
        )


def rounds_csv(code: str) -> str:
    """Built when the button is clicked: every round's votes per option, no student in it."""
    try:
        store = get_store()
        all_rounds = store.all_rounds(code)
        rows = export_rows(all_rounds, {r.id: store.tallies(r) for r in all_rounds})
    except StoreUnavailable:
        rows = []
    return view.rounds_csv(rows)


def lecturer_rounds(code: str, quiz_seed: int) -> None:
    """The round under way (if any), then the form for the next question once it is revealed."""
    said = st.session_state.pop(SAID_KEY, None)
    if said:
        st.error(escape_md(said))
    try:
        rnd = get_store().current_round(code)
        if rnd is not None:
            round_panel(code, rnd)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    if rnd is None or rnd.phase == "reveal":
        ask_panel(code, _open)  # the open deck's question step, if any, ready to ask (ui/room/deck.py)
        pose_form(code, quiz_seed)
    st.download_button(
        "Rounds (CSV)",
        data=lambda: rounds_csv(code),
        file_name=f"encoder-lab-rounds-{code}.csv",
        mime="text/csv",
        key="room_rounds_csv",
        on_click="ignore",
        icon=":material/table:",
    )
