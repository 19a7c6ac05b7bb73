"""The lecturer's side of a peer-instruction round: pose a question, watch the count, close vote 1, read
the suggestion, run vote 2, reveal with the shift and the model's chart, then the transfer question.

Two views of the same round, both keyed: the projected screen and the presenter view (`?view=presenter`,
on the lecturer's own phone or laptop). Until the reveal the screen shows how many have voted and
nothing else (the distribution would bias the second vote), unless the lecturer presses "Show results";
the presenter view shows the count, the distribution as it comes in and the suggestion. Every phase change
is a button callback that moves the round in the store, and each view polls the store for the round's
phase, so the other view, a second screen or another app process follows within a second or two. A vote
may have a timer: the store closes it at its deadline (classroom.rounds), whoever asks first.

Public functions the lecture decks call to run a round in place: lecturer_rounds, round_panel, pose_form,
ask_quiz, ask_prediction, ask_typed, ask_transfer, cancel, show_results, rounds_list.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

import streamlit as st

from classroom.peer import MOVE_ON_ABOVE, RETEACH_BELOW, export_rows, suggest
from classroom.questions import BadQuestion, RoomQuestion, typed
from classroom.rounds import CANCELLED, TIMER_CHOICES_S, Round, timer_seconds
from classroom.store import StoreUnavailable, get_store
from encoder_core.lessons import LESSON_TITLES
from ui.frame.charts import show_chart, show_live_chart, show_table
from ui.frame.modes import sidebar_model, sidebar_seed
from ui.frame.quiz_widget import escape_md
from ui.views import room as view

from . import session as rooms
from . import sources
from .deck import ask_panel, shown_prompt
from .quiz import transfer

COUNT_REFRESH_S = 1.0  # the lecturer's count of votes: within a second of a tap
FOLLOW_REFRESH_S = 2.0  # a view between votes looks for the other view's move this often
TIMER_KEY = "room_timer"  # the lecturer's timer for each vote: 0 (none) or TIMER_CHOICES_S
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
        help_text = (
            "Measured above chance: 0% is what guessing gets (50% right on 2 options, 25% on 4), 100% is everyone "
            "right. The suggestion names the share right each threshold needs on the question asked."
        )
        c_low.slider(
            "Teach again below (% above chance in vote 1)",
            0,
            100,
            round(100 * RETEACH_BELOW),
            5,
            key=LOW_KEY,
            help=help_text,
        )
        c_high.slider(
            "Reveal and move on above (% above chance)",
            0,
            100,
            round(100 * MOVE_ON_ABOVE),
            5,
            key=HIGH_KEY,
            help=help_text,
        )
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
        get_store().open_round(code, question.shuffled(secrets.token_hex(8)), transfer_of, timer=vote_timer())
    except StoreUnavailable:
        _said(rooms.DOWN)


def vote_timer() -> int | None:
    """The lecturer's timer for each vote, in seconds (None: no timer, the lecturer closes the vote)."""
    return timer_seconds(st.session_state.get(TIMER_KEY, 0))


def timer_picker() -> None:
    st.selectbox(
        "Timer for each vote",
        (0, *TIMER_CHOICES_S),
        format_func=lambda s: f"{s} s: the vote closes by itself" if s else "none: I close the vote",
        key=TIMER_KEY,
        help="Phones see “closing in …” in the last 10 seconds. You can still close the vote earlier.",
    )


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
    timer_picker()
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
def live_count(code: str, round_id: int, vote: int, presenter: bool = False) -> None:
    """How many have voted, redrawn every second: the count only on the screen; on the presenter view the
    distribution too. When the round has moved on (the timer, the other view, another process), the whole
    page is drawn again."""
    try:
        store = get_store()
        rnd = store.current_round(code)  # closes the vote if its timer ran out
        if rnd is None or rnd.id != round_id or rnd.open_vote != vote:
            st.rerun()
        count, joined = store.vote_count(round_id, vote), store.joined(code)
        tally = store.tallies(rnd).get(vote) if presenter else None
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    c_votes, c_joined, c_time = st.columns(3)
    c_votes.metric(f"Votes in vote {vote}", count)
    c_joined.metric("Phones in the room", joined)
    left = rnd.seconds_left(datetime.now(UTC))
    if left is not None:
        c_time.metric("Closes in", f"{left:.0f} s")
    if presenter:
        if tally is not None:
            show_live_chart(view.shift_chart(rnd.question, {vote: tally}), f"room_live_{round_id}_{vote}")
        else:
            st.caption("No votes yet: the distribution appears here, on your presenter view only.")


@st.fragment(run_every=FOLLOW_REFRESH_S)
def follow_round(code: str, round_id: int | None, phase: str | None, shown: bool) -> None:
    """Draws nothing: looks at the room's round and draws the page again once it is another round, in another
    phase, or shown (the other view pressed a button)."""
    try:
        rnd = get_store().current_round(code)
    except StoreUnavailable:
        return
    now = (rnd.id, rnd.phase, rnd.shown) if rnd is not None else (None, None, False)
    if now != (round_id, phase, shown):
        st.rerun()


def _advance(code: str, rnd: Round, to: str) -> None:
    try:
        get_store().advance(code, rnd.id, rnd.phase, to)  # vote 2 runs on the timer the round was asked with
    except StoreUnavailable:
        _said(rooms.DOWN)


def show_results(code: str, rnd: Round) -> None:
    """The lecturer chose to put the closed votes' results on the projected screen."""
    try:
        get_store().show_results(code, rnd.id)
    except StoreUnavailable:
        _said(rooms.DOWN)


def cancel(code: str, rnd: Round) -> None:
    """Discard the round before its reveal: nothing of it reaches a phone or the screen, nor the export."""
    try:
        if not get_store().cancel_round(code, rnd.id):
            _said("That question was revealed or cancelled already: nothing was changed.")
    except StoreUnavailable:
        _said(rooms.DOWN)


def cancel_button(code: str, rnd: Round) -> None:
    st.button(
        "Cancel this question (nothing is shown or counted)",
        key=f"room_cancel_{rnd.id}",
        on_click=cancel,
        args=(code, rnd),
        icon=":material/cancel:",
        help="Discards the question: no answer and no votes are shown, here or on the phones, and it is not in "
        "the export. Its number goes to the next question.",
    )


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


def round_panel(code: str, rnd: Round, presenter: bool = False) -> None:
    """The round as the projected screen (presenter=False) or the presenter view shows it."""
    if rnd.cancelled:
        st.info("The last question was cancelled: nothing of it was shown or counted. Ask the next one below.")
        return
    question_shown(rnd, show_right=rnd.phase == "reveal" or presenter)
    if rnd.open_vote is not None:
        live_count(code, rnd.id, rnd.open_vote, presenter)
        label = "Close vote 1" if rnd.open_vote == 1 else "Close vote 2 and reveal"
        st.button(
            label,
            key=f"room_close_vote_{rnd.open_vote}",
            type="primary",
            on_click=_advance,
            args=(code, rnd, "between" if rnd.open_vote == 1 else "reveal"),
            icon=":material/how_to_vote:",
        )
        cancel_button(code, rnd)
        asked_with(rnd)
    elif rnd.phase == "between":
        between(code, rnd, presenter)
        cancel_button(code, rnd)
        asked_with(rnd)
    else:
        reveal(code, rnd)


def between(code: str, rnd: Round, presenter: bool = False) -> None:
    """Vote 1 closed. The presenter view: the suggestion and vote 1's distribution. The projected screen: the
    count only, until "Show results"."""
    tally = get_store().tallies(rnd).get(1)
    advice = suggest(tally.share_correct if tally else None, *thresholds(), options=len(rnd.question.options))
    st.session_state["_room_suggestion"] = advice.kind  # for the page's tests and the browser test
    if presenter or rnd.shown:
        box = {"reteach": st.error, "discuss": st.warning, "reveal": st.success, "none": st.info}[advice.kind]
        box(f"**Suggested: {advice.headline}.** {advice.why}", icon=":material/lightbulb:")
        if tally is not None:
            show_chart(view.shift_chart(rnd.question, {1: tally}), f"room_vote1_{rnd.id}")
    else:
        st.metric("Votes in vote 1", tally.total if tally else 0)
        st.info(
            "Vote 1 is closed. The votes and the suggestion are on your presenter view; **Show results** puts "
            "them here.",
            icon=":material/visibility_off:",
        )
    c_vote2, c_reveal, c_show = st.columns(3)
    for column, label, key, suggested, stage in (
        (c_vote2, "Open vote 2", "room_open_vote_2", "discuss", "vote2"),
        (c_reveal, "Reveal the answer", "room_reveal", "reveal", "reveal"),
    ):  # the suggested next step is the primary button
        column.button(
            label,
            key=key,
            type="primary" if advice.kind == suggested else "secondary",
            on_click=_advance,
            args=(code, rnd, stage),
            width="stretch",
        )
    c_show.button(
        "Show results",
        key="room_show_results",
        on_click=show_results,
        args=(code, rnd),
        width="stretch",
        disabled=rnd.shown,
        help="Puts vote 1's distribution and the suggestion on the projected screen. Seen before vote 2, they sway "
        "it: most lecturers show them only at the reveal.",
    )
    teach_again_link(rnd, presenter or rnd.shown)


def teach_again_link(rnd: Round, advice_shown: bool = True) -> None:
    """The link back to the lesson's step that teaches the question, on the round's sentence, model and seed.
    Where the suggestion is not shown (the projected screen) it is named plainly, giving nothing away."""
    lesson = rnd.question.lesson
    linked = sources.lesson_link(rnd.question) if lesson in LESSON_TITLES else None
    if linked is None:
        return
    page, query = linked
    step = int(query.get("step", 0))
    st.page_link(
        page,
        label=f"{'Teach it again' if advice_shown else 'Open the lesson'}: {LESSON_TITLES[lesson]}, step {step + 1}",
        icon=":material/school:",
        query_params=query,
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


def rounds_list(code: str, presenter: bool = False) -> None:
    """The session's rounds, vote 1 -> vote 2 for each: on the projected screen only the revealed ones (a round
    under way would give its votes away); on the presenter view every one."""
    try:
        store = get_store()
        done = [r for r in store.all_rounds(code) if presenter or r.phase == "reveal"]
        table = view.rounds_table(done, {r.id: store.tallies(r) for r in done})
    except StoreUnavailable:
        return
    if not table.empty:
        st.markdown("**This session's questions: share right in vote 1 → vote 2**")
        show_table(table, hide_index=True)


def lecturer_rounds(code: str, quiz_seed: int, presenter: bool = False) -> None:
    """The round under way (if any), then the form for the next question once it is revealed or cancelled.
    presenter: the lecturer's private view (the distribution and the suggestion) rather than the projected screen."""
    said = st.session_state.pop(SAID_KEY, None)
    if said:
        st.error(escape_md(said))
    try:
        rnd = get_store().current_round(code)
        if rnd is not None:
            round_panel(code, rnd, presenter)
        if rnd is None or rnd.open_vote is None:  # a vote's own count follows the round while it is open
            follow_round(code, rnd.id if rnd else None, rnd.phase if rnd else None, rnd.shown if rnd else False)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    if rnd is None or rnd.phase in ("reveal", CANCELLED):
        ask_panel(code, _open)  # the open deck's question step, if any, ready to ask (ui/room/deck.py)
        pose_form(code, quiz_seed)
    rounds_list(code, presenter)
    st.download_button(
        "Rounds (CSV)",
        data=lambda: rounds_csv(code),
        file_name=f"encoder-lab-rounds-{code}.csv",
        mime="text/csv",
        key="room_rounds_csv",
        on_click="ignore",
        icon=":material/table:",
    )
