"""The lecturer's deck in the app (the data and its file: classroom/decks.py): what the app has, a question
step as the room question it becomes, the page and link each step opens, and the deck's bar.

With a deck open (`?deck=<id>&deck_step=k`, k from 0), every page draws the bar above itself (app.py calls
deck_bar): "Step k+1 of N", the step's title, and Previous / Next (keys PageUp / PageDown, what a
presentation clicker sends; the lesson's own steps keep P / N). Next opens the step's page with its controls
as the step's link holds them; a question step opens the class room page, where the lecturer's room offers
that question, ready to ask (ask_panel, called by the room's round).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import streamlit as st

from classroom.decks import (
    Deck,
    Known,
    PredictionStep,
    QuizStep,
    Step,
    TypedStep,
    ViewStep,
    parse,
    parse_deck_id,
    problems,
    step_title,
)
from classroom.questions import BadQuestion, RoomQuestion, typed
from classroom.store import StoreUnavailable, get_store
from encoder_core.lessons import LESSON_IDS, LESSON_TITLES
from encoder_core.quiz import generators
from ui.frame.quiz_widget import escape_md
from ui.frame.shell import CURRENT_PAGE_KEY
from ui.frame.state import ALL_SECTIONS, CONTRAST, DECK, DECK_STEP, LECTURE, MODEL, SEED, STEP

from . import session as rooms
from .quiz import from_quiz, quiz_question
from .registry import CannotAsk, predictions
from .sources import from_prediction

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "decks" / "course.json"  # the example deck: a lecture through the eight lessons
DECK_PAGE, ROOM_PAGE = "pages/deck.py", "pages/room.py"
PREVIOUS_KEY, NEXT_KEY = "PageUp", "PageDown"  # a presentation clicker's keys
# Our own stylesheet, never user text: the bar stays in view below Streamlit's header (3.75rem): a lecture step
# scrolls its heading up to the top, which would take the bar out of view; the heading now stops below the bar.
BAR_CSS = """
[data-testid="stLayoutWrapper"]:has(> .st-key-deck-bar), .st-key-deck-bar
  {position: sticky; top: 3.75rem; z-index: 990;}
.st-key-deck-bar {background: var(--st-background-color, #ffffff);}
#lecture-step {scroll-margin-top: 10.5rem !important;}
"""
LOADED_KEY = "_deck_loaded"  # (id, Deck | None) of the deck the link names, read once per id per session
MOVE_FAILED_KEY = "_deck_move_failed"  # the presenter view's Previous / Next met a database that was down
QUESTIONS_KEY = "_deck_questions"  # (deck id, step index) -> RoomQuestion, built once


def known() -> Known:
    """What this app has, for classroom.decks to check a deck against."""
    return Known(
        frozenset(LESSON_IDS),
        {key: p.lesson for key, p in predictions().items()},
        frozenset(g.__name__ for g in generators()),
    )


def course_deck() -> Deck:
    return parse(COURSE.read_text(encoding="utf-8"))


def prediction_titles() -> dict[str, str]:
    """Each room question's title by its key: how a deck step that asks one is listed."""
    return {key: p.title for key, p in predictions().items()}


def title(s: Step) -> str:
    return step_title(s, LESSON_TITLES, prediction_titles=prediction_titles())


def room_question(s: Step) -> RoomQuestion:
    """A question step as the room asks it, its right option computed (CannotAsk if it cannot be asked)."""
    if isinstance(s, PredictionStep):
        if s.key not in predictions():
            raise CannotAsk(f"The prediction {s.key} is not one a room can ask.")
        return from_prediction(s.key, s.sentence, s.model, s.seed)
    if isinstance(s, QuizStep):
        q = quiz_question(s.question_id)
        found = from_quiz(q) if q is not None else None
        if found is None:
            raise CannotAsk(f"The quiz question {s.question_id} cannot be asked as a choice.")
        return found
    if isinstance(s, TypedStep):
        try:
            return replace(typed(s.prompt, "\n".join(s.options), s.right), markdown=True)
        except BadQuestion as err:
            raise CannotAsk(str(err)) from None
    raise CannotAsk("A lesson view is not a question.")


def shown_prompt(q: RoomQuestion) -> str:
    """A question's prompt for st.markdown: a deck's typed question as its Markdown and LaTeX, anything else
    as plain text (a sentence a student typed, a quiz prompt, a question typed in the room's form)."""
    return q.prompt if q.markdown else escape_md(q.prompt)


def is_question(s: Step) -> bool:
    return not isinstance(s, ViewStep)


def _link_value(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def target(deck_id: str, index: int, s: Step, room: str | None = None) -> tuple[str, dict[str, str]]:
    """The page a step opens and its link's parameters (the deck's place in it)."""
    place = {DECK.name: deck_id, DECK_STEP.name: str(index)}
    if isinstance(s, ViewStep):
        return f"pages/{s.lesson}.py", {**{k: _link_value(v) for k, v in s.params.items()}, **place}
    return ROOM_PAGE, {**({rooms.ROOM.name: room} if room else {}), **place}


# ---------------------------------------------------------------- the open deck


def open_deck_id() -> str | None:
    return parse_deck_id(st.session_state.get(DECK.key))


def load(deck_id: str) -> Deck | None:
    """The deck a link names, read from the store once per session (a deck's id names one content)."""
    held = st.session_state.get(LOADED_KEY)
    if held is not None and held[0] == deck_id:
        return held[1]
    deck = get_store().load_deck(deck_id)
    st.session_state[LOADED_KEY] = (deck_id, deck)
    return deck


def present(deck_id: str, deck: Deck, index: int = 0) -> None:
    """on_click of a button that starts presenting a deck saved under deck_id, at step `index`."""
    st.session_state[LOADED_KEY] = (deck_id, deck)
    st.session_state[DECK.key] = deck_id
    choose(deck_id, deck, index)


def _lecturer_room() -> str | None:
    """The room this session last opened or unlocked, where a question step is asked."""
    held = st.session_state.get(rooms.KEYS_KEY) or {}
    return list(held)[-1] if held else None


FOLLOW_S = 2.0  # the presenting screen looks for a step its room's presenter view chose this often
GO_KEY = "_deck_go"  # the page and link a button chose, opened by deck_bar on the run that follows
KEEP_KEY = "_deck_keep"  # the sidebar's values as the deck left them, put back after st.switch_page
_FRAME_PARAMS = (CONTRAST, ALL_SECTIONS, SEED, MODEL)  # the app-wide controls a view's link may set
_SIDEBAR_PARAMS = (LECTURE, *_FRAME_PARAMS)  # the sidebar's widgets


def choose(deck_id: str, deck: Deck, index: int) -> None:
    """on_click: make step `index` the deck's, with its controls as its link holds them (a control the link
    leaves out takes its default, as in a new browser); deck_bar then opens its page."""
    index = min(max(index, 0), len(deck.steps) - 1)
    s = deck.steps[index]
    st.session_state[DECK_STEP.key] = index
    if problems(Deck("", (s,)), known()):  # a lesson this app no longer has: the bar says so, the page stays
        return
    room = _lecturer_room()
    if room:  # the room's presenter view shows the step, and moves it too (presenter_deck)
        try:
            get_store().set_deck_place(room, deck_id, index)
        except StoreUnavailable:
            pass
    page, query = target(deck_id, index, s, room)
    if isinstance(s, ViewStep):
        st.session_state[STEP.key] = s.step
        for key in [k for k in st.session_state if str(k).startswith(f"{s.lesson}.")]:
            del st.session_state[key]
        for p in _FRAME_PARAMS:
            if p.name in s.params:
                st.session_state[p.key] = p.parse(_link_value(s.params[p.name]))[0]
    elif query.get(rooms.ROOM.name):
        st.session_state[rooms.ROOM.key] = query[rooms.ROOM.name]
    st.session_state.pop(f"_url_read_{Path(page).stem}", None)  # the page reads the link's controls again
    st.session_state[GO_KEY] = (page, query)
    st.session_state[KEEP_KEY] = {p.key: st.session_state[p.key] for p in _SIDEBAR_PARAMS if p.key in st.session_state}


def keep_sidebar() -> None:
    """At the top of the run, before the sidebar's widgets: st.switch_page starts the next page without the
    browser's widget values, so the sidebar (lecture mode, the model, the seed, ...) would fall back to its
    defaults. The values the deck's step left are put back, once, on the run after the switch."""
    if GO_KEY not in st.session_state:
        st.session_state.update(st.session_state.pop(KEEP_KEY, None) or {})


def _open_chosen() -> None:
    """In the script's body, before the page: open the page a button chose (nothing if none did)."""
    chosen = st.session_state.pop(GO_KEY, None)
    if chosen is None:
        return
    page, query = chosen
    if st.session_state.get(CURRENT_PAGE_KEY) == Path(page).stem:
        st.query_params.from_dict(query)
        st.session_state.pop(KEEP_KEY, None)  # no switch: the sidebar kept its values
        return  # this run draws it
    st.switch_page(page, query_params=query)


def close_deck() -> None:
    st.session_state[DECK.key] = ""
    st.session_state[DECK_STEP.key] = 0
    if room := _lecturer_room():
        try:
            get_store().set_deck_place(room, None, None)
        except StoreUnavailable:
            pass


@st.fragment(run_every=FOLLOW_S)
def follow_room(code: str, deck_id: str, k: int) -> None:
    """Draws nothing: the screen presenting the deck takes the step the room's presenter view moved it to. A room
    with no deck yet (opened after the deck) gets this one."""
    try:
        place = get_store().deck_place(code)
        if place is None:
            get_store().set_deck_place(code, deck_id, k)
            return
        deck = load(deck_id)
    except StoreUnavailable:
        return
    if deck is not None and place[0] == deck_id and place[1] != k:
        choose(deck_id, deck, place[1])
        st.rerun(scope="app")


def previous_next(c_prev, c_next, key: str, k: int, n: int, move, where: tuple, reach: str = "") -> None:
    """The deck's Previous and Next (keys Page Up and Page Down, what a clicker sends) in their two columns: a
    click calls move(*where, the step to go to). reach: what else the move changes, said in the help."""
    for column, label, to, kind, shortcut, keys in (
        (c_prev, "Previous", k - 1, "secondary", PREVIOUS_KEY, "Page Up"),
        (c_next, "Next", k + 1, "primary", NEXT_KEY, "Page Down"),
    ):
        column.button(
            label,
            key=f"{key}_{'prev' if to < k else 'next'}",
            disabled=not 0 <= to < n,
            type=kind,
            width="stretch",
            on_click=move,
            args=(*where, to),
            shortcut=shortcut,
            help=f"The deck's {label.lower()} step{reach} (key {keys})",
        )


def deck_bar() -> None:
    """The open deck's place and its Previous / Next, above the page (nothing without a deck)."""
    _open_chosen()
    raw = st.session_state.get(DECK.key)
    if not raw:
        return
    deck_id = parse_deck_id(raw)
    try:
        deck = load(deck_id) if deck_id else None
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    if deck is None:
        st.warning(f"There is no deck `{escape_md(str(raw)[:16])}`: check the link (a deck's id has 12 characters).")
        close_deck()
        return
    n = len(deck.steps)
    k = min(max(int(st.session_state.get(DECK_STEP.key, 0)), 0), n - 1)
    s = deck.steps[k]
    st.html(f"<style>{BAR_CSS}</style>")
    with st.container(key="deck-bar", border=True):
        c_where, c_prev, c_next, c_close = st.columns([4, 2, 2, 1.2], vertical_alignment="center")
        c_where.markdown(f"**{escape_md(deck.title)}** · Step {k + 1} of {n}: {escape_md(title(s))}")
        previous_next(c_prev, c_next, "deck", k, n, choose, (deck_id, deck))
        c_close.button("Close", key="deck_close", on_click=close_deck, help="Leave the deck", width="stretch")
        flagged = [p for p in problems(deck, known()) if p.number == k + 1]
        for p in flagged:
            st.warning(f"{escape_md(str(p))} Skip it with Next.")
        if room := _lecturer_room():
            follow_room(room, deck_id, k)
        here = st.session_state.get(CURRENT_PAGE_KEY)
        if here != Path(target(deck_id, k, s)[0]).stem and not flagged:
            st.button(
                f"Open step {k + 1}",
                key="deck_open_step",
                icon=":material/slideshow:",
                on_click=choose,
                args=(deck_id, deck, k),
            )


def move_room(code: str, deck_id: str, index: int) -> None:
    """on_click of the presenter view's Previous / Next: the room's deck moves, and its screen follows."""
    try:
        get_store().set_deck_place(code, deck_id, index)
    except StoreUnavailable:
        st.session_state[MOVE_FAILED_KEY] = True


@st.fragment(run_every=FOLLOW_S)
def follow_place(code: str, place: tuple[str, int] | None) -> None:
    """Draws nothing: the presenter view is drawn again once the screen has moved the room's deck."""
    try:
        now = get_store().deck_place(code)
    except StoreUnavailable:
        return
    if now != place:
        st.rerun(scope="app")


def presenter_deck(code: str) -> None:
    """On the room's presenter view: the deck its lecturer presents, its step, and Previous / Next (keys Page Up /
    Page Down), which move the deck on the projected screen too (within FOLLOW_S seconds)."""
    if open_deck_id() is not None:  # this session presents a deck itself: its own bar is above the page
        return
    try:
        place = get_store().deck_place(code)
        deck = load(place[0]) if place else None
    except StoreUnavailable:
        return
    if st.session_state.pop(MOVE_FAILED_KEY, False):
        st.warning(rooms.DOWN)
    follow_place(code, place)
    if deck is None or not deck.steps:
        return
    deck_id, n = place[0], len(deck.steps)
    k = min(max(place[1], 0), n - 1)
    with st.container(key="deck-remote", border=True):
        c_where, c_prev, c_next = st.columns([4, 2, 2], vertical_alignment="center")
        c_where.markdown(f"**{escape_md(deck.title)}** · Step {k + 1} of {n}: {escape_md(title(deck.steps[k]))}")
        previous_next(c_prev, c_next, "deck_remote", k, n, move_room, (code, deck_id), ", on the projected screen too")


def step_question(deck_id: str, deck: Deck, index: int) -> RoomQuestion:
    """The question of a step, built once per session (a prediction runs the model)."""
    cache = st.session_state.setdefault(QUESTIONS_KEY, {})
    if (deck_id, index) not in cache:
        cache[(deck_id, index)] = room_question(deck.steps[index])
    return cache[(deck_id, index)]


def ask_panel(code: str, open_round) -> None:
    """In the lecturer's room, while no vote is open: the open deck's question step, ready to ask.
    open_round(code, question) is the room's own way to open a round (ui/room/rounds.py). On the presenter view
    (no deck of its own): the step of the deck the room presents."""
    deck_id, k = open_deck_id(), int(st.session_state.get(DECK_STEP.key, 0))
    try:
        if deck_id is None:
            deck_id, k = get_store().deck_place(code) or (None, 0)
        deck = load(deck_id) if deck_id else None
    except StoreUnavailable:
        return
    if deck is None or not deck.steps:
        return
    k = min(max(k, 0), len(deck.steps) - 1)
    s = deck.steps[k]
    if not is_question(s):
        return
    with st.container(key="deck-question", border=True):
        st.markdown(f"**The deck's step {k + 1}: {escape_md(title(s))}**")
        try:
            question = step_question(deck_id, deck, k)
        except CannotAsk as err:
            st.warning(escape_md(str(err)))
            return
        st.markdown(shown_prompt(question))
        try:
            asked = get_store().current_round(code)
        except StoreUnavailable:
            asked = None
        again = asked is not None and asked.question.prompt == question.prompt
        if again:
            st.caption(f"Asked already, as question {asked.number}.")
        st.button(
            "Ask the deck's question again" if again else "Ask the deck's question: vote 1 opens",
            key="deck_ask",
            type="secondary" if again else "primary",
            on_click=open_round,
            args=(code, question),
            icon=":material/how_to_vote:",
        )


def deck_file_name(deck: Deck) -> str:
    stem = "".join(c if c.isalnum() else "-" for c in deck.title.lower()).strip("-")[:40] or "deck"
    return f"encoder-lab-deck-{stem}.json"


def deck_link(deck_id: str) -> str:
    """The deck's link, from the address this page was opened at: it opens the builder with the deck."""
    base = rooms.page_address()
    if base.count("/") > 2:  # drop the page's own path segment: https://host/deck -> https://host
        base = base.rsplit("/", 1)[0]
    return f"{base}/deck?{DECK.name}={deck_id}" if base.startswith(("http://", "https://")) else f"/deck?deck={deck_id}"
