"""Deck builder: a lecturer puts a lecture together before class, as an ordered list of steps, each a lesson
view (a lesson's step with its controls, as its link holds them; a lesson's sidebar adds one too) or a
question for the class room (a lesson's prediction on a sentence, a quiz question, or their own). Each
question is previewed with the answer the model computes; the deck is saved under a link, exported and
imported as a JSON file, and presented from lecture mode (the deck's bar above every page: ui/room/deck.py)."""

import streamlit as st

from classroom.decks import (
    LINK_CHARS,
    MODELS,
    BadDeck,
    Deck,
    PredictionStep,
    QuizStep,
    ViewStep,
    import_deck,
    lesson_of,
    problems,
    read_step,
    view_from_link,
)
from classroom.store import StoreUnavailable, get_store
from encoder_core.lessons import LESSON_IDS, LESSON_TITLES
from ui.frame.charts import show_chart, show_table
from ui.frame.quiz_widget import escape_md
from ui.frame.sections import narrative, start
from ui.frame.state import DECK, LECTURE, MODEL_LABELS, write_url
from ui.room import deck as decks
from ui.room import session as rooms
from ui.room.draft import DRAFT_KEY, SELECTED_KEY, TITLE_KEY, UNTITLED, append, draft, set_draft
from ui.room.registry import CannotAsk
from ui.room.sources import DEFAULT_SENTENCE, predictions, proof_charts
from ui.views import room as room_view
from ui.views.deck import deck_table

PARAMS = [DECK]
FROM_KEY = "_deck_draft_from"  # the deck id the draft was loaded from (a link's ?deck=)
SAID_KEY = "_deck_said"  # ("error" | "success", message) after a callback
PREVIEWS_KEY = "_deck_previews"  # a step's file entry -> its RoomQuestion, or why it cannot be asked
# Each lesson's sentence control, for a view picked here (a pasted link carries any control).
SENTENCE_PARAMS = {
    "attention": "sentence",
    "padding": "single",
    "masking": "mlm_sentence",
    "block": "block_sentence",
    "heads": "heads_sentence",
    "tradeoffs": "sentence",
    "inside": "inside_sentence",
}

start("deck", PARAMS)


def said(kind: str, message: str) -> None:
    st.session_state[SAID_KEY] = (kind, message)


def load_linked() -> None:
    """A link's ?deck=<id> opens that deck in the builder (once per id)."""
    deck_id = decks.open_deck_id()
    if deck_id is None or st.session_state.get(FROM_KEY) == deck_id:
        return
    st.session_state[FROM_KEY] = deck_id
    try:
        deck = decks.load(deck_id)
    except StoreUnavailable:
        st.warning(rooms.DOWN)
        return
    if deck is not None:
        set_draft(deck)


# ---------------------------------------------------------------- editing (button callbacks)


def add(step) -> None:
    said("success", f"Added as step {len(append(step).steps)}.")


def add_checked(step) -> None:
    found = problems(Deck("", (step,)), decks.known())
    if found:
        said("error", found[0].what)
    else:
        add(step)


def add_link() -> None:
    try:
        add_checked(view_from_link(st.session_state.get("deck_link", "")))
    except BadDeck as err:
        said("error", str(err))


def add_picked_view() -> None:
    lesson = st.session_state["deck_lesson"]
    params = {"step": int(st.session_state["deck_lesson_step"]) - 1}
    sentence = " ".join(str(st.session_state.get("deck_view_sentence", "")).split())
    if sentence and lesson in SENTENCE_PARAMS:
        params[SENTENCE_PARAMS[lesson]] = sentence
    add_checked(ViewStep(lesson, params))


def add_prediction() -> None:
    sentence = " ".join(str(st.session_state.get("deck_sentence", "")).split())[:200] or DEFAULT_SENTENCE
    key, model = st.session_state["deck_prediction"], st.session_state["deck_model"]
    add(PredictionStep(key, sentence, model, int(st.session_state["deck_model_seed"])))


def add_quiz() -> None:
    add(QuizStep(st.session_state["deck_generator"], int(st.session_state["deck_quiz_seed"])))


def add_typed() -> None:
    options = [line.strip() for line in str(st.session_state.get("deck_typed_options", "")).splitlines()]
    raw = {
        "kind": "typed",
        "prompt": str(st.session_state.get("deck_typed_prompt", "")),
        "options": [o for o in options if o],
        "right": int(st.session_state.get("deck_typed_right", 1)),
    }
    try:
        add(read_step(raw))
    except BadDeck as err:
        said("error", str(err))


def move(delta: int) -> None:
    deck, k = draft(), int(st.session_state[SELECTED_KEY]) - 1
    to = k + delta
    if 0 <= k < len(deck.steps) and 0 <= to < len(deck.steps):
        steps = list(deck.steps)
        steps[k], steps[to] = steps[to], steps[k]
        set_draft(Deck(deck.title, tuple(steps)), to + 1)


def delete() -> None:
    deck, k = draft(), int(st.session_state[SELECTED_KEY]) - 1
    if 0 <= k < len(deck.steps):
        set_draft(Deck(deck.title, deck.steps[:k] + deck.steps[k + 1 :]), k + 1)
        said("success", f"Deleted step {k + 1}.")


def retitle() -> None:
    deck = draft()
    st.session_state[DRAFT_KEY] = Deck(" ".join(str(st.session_state[TITLE_KEY]).split())[:120], deck.steps)


def import_text(raw: str | bytes) -> None:
    try:
        deck = import_deck(raw, decks.known())
    except BadDeck as err:
        said("error", f"Not imported. {err}")
        return
    set_draft(deck)
    said("success", f"Imported “{deck.title}”: {len(deck.steps)} steps.")


def import_uploaded() -> None:
    uploaded = st.session_state.get("deck_upload")
    if uploaded is not None:
        import_text(uploaded.getvalue())


def save(present_from: int | None = None) -> None:
    deck = draft()
    try:
        deck_id = get_store().save_deck(deck)
    except StoreUnavailable:
        said("error", rooms.DOWN)
        return
    st.session_state[FROM_KEY] = deck_id
    if present_from is None:
        st.session_state[DECK.key] = deck_id
        said("success", f"Saved. The deck's link: {decks.deck_link(deck_id)}")
        return
    st.session_state[LECTURE.key] = True
    decks.present(deck_id, deck, present_from)


# ---------------------------------------------------------------- the page


def add_forms() -> None:
    kinds = {
        "link": "a lesson view: paste its link",
        "view": "a lesson view: pick it",
        "prediction": "a lesson's prediction",
        "quiz": "a quiz question",
        "typed": "my own question",
    }
    kind = st.radio("Add", list(kinds), format_func=kinds.get, horizontal=True, key="deck_add_kind")
    if kind == "link":
        st.text_input("The lesson's link (the sidebar's “Share this view”)", max_chars=LINK_CHARS, key="deck_link")
        st.button("Add this view", key="deck_add_link", on_click=add_link, type="primary")
    elif kind == "view":
        c_lesson, c_step = st.columns([2, 1])
        c_lesson.selectbox("Lesson", LESSON_IDS, format_func=LESSON_TITLES.get, key="deck_lesson")
        c_step.number_input("Step (as lecture mode counts: 1, 2, ...)", 1, 50, 1, key="deck_lesson_step")
        st.text_input("On the sentence (empty: the lesson's own)", max_chars=200, key="deck_view_sentence")
        st.button("Add this view", key="deck_add_view", on_click=add_picked_view, type="primary")
    elif kind == "prediction":
        names = {k: p.title for k, p in predictions().items()}
        st.selectbox("Prediction", list(names), format_func=names.get, key="deck_prediction")
        st.text_input("On the sentence", value=DEFAULT_SENTENCE, max_chars=200, key="deck_sentence")
        c_model, c_seed = st.columns([2, 1])
        c_model.selectbox("Model", MODELS, format_func=MODEL_LABELS.get, key="deck_model")
        c_seed.number_input("Seed", 0, 2**31 - 1, 0, key="deck_model_seed")
        st.button("Add this question", key="deck_add_prediction", on_click=add_prediction, type="primary")
    elif kind == "quiz":
        c_gen, c_seed = st.columns([2, 1])
        c_gen.selectbox("Quiz generator (the idea it asks)", sorted(decks.known().generators), key="deck_generator")
        c_seed.number_input("Its seed (new numbers each)", 0, 2**31 - 1, 0, key="deck_quiz_seed")
        st.button("Add this question", key="deck_add_quiz", on_click=add_quiz, type="primary")
    else:
        st.text_area("Question (Markdown; LaTeX between $ signs)", max_chars=400, key="deck_typed_prompt")
        st.text_area("Options, one per line (2 to 6)", max_chars=800, key="deck_typed_options")
        st.number_input("The right option's number", 1, 6, 1, key="deck_typed_right")
        st.button("Add this question", key="deck_add_typed", on_click=add_typed, type="primary")


def preview(step) -> None:
    """A question step as the room will see it, with the answer the model computes."""
    previews = st.session_state.setdefault(PREVIEWS_KEY, {})
    entry = repr(step)
    if entry not in previews:
        try:
            previews[entry] = decks.room_question(step)
        except CannotAsk as err:
            previews[entry] = str(err)
    q = previews[entry]
    if isinstance(q, str):
        st.warning(f"This question cannot be asked as it stands: {escape_md(q)}")
        return
    with st.container(key="deck-preview", border=True):
        st.markdown(decks.shown_prompt(q))
        for i, option in enumerate(q.options):
            mark = "  ✓" if i == q.correct else ""
            st.markdown(f"**{room_view.letter(i)}**  {escape_md(option)}{mark}")
        st.success(f"**The answer: {room_view.letter(q.correct)}**, {escape_md(q.options[q.correct])}")
        if q.explanation:
            st.caption(escape_md(q.explanation))
        if q.source != "typed" and st.toggle("Show the chart that proves it", key="deck_proof"):
            for i, chart in enumerate(proof_charts(q)):
                show_chart(chart, f"deck_proof_{i}")


def steps_block(deck: Deck) -> None:
    known = decks.known()
    found = problems(deck, known)
    if found:
        st.warning(
            "Some steps name what this app does not have: "
            + "; ".join(escape_md(str(p)) for p in found[:5])
            + ". Delete or replace them before presenting."
        )
    lessons = {i: lesson_of(s, known) for i, s in enumerate(deck.steps)}
    table = deck_table(deck, LESSON_TITLES, lessons, found, decks.prediction_titles())
    show_table(table, hide_index=True, key="deck_steps")
    n = len(deck.steps)
    c_pick, c_up, c_down, c_del, c_show = st.columns([2, 1, 1, 1, 1.4], vertical_alignment="bottom")
    c_pick.number_input("Step", 1, n, key=SELECTED_KEY)
    k = int(st.session_state[SELECTED_KEY]) - 1
    c_up.button("Up", key="deck_up", on_click=move, args=(-1,), disabled=k == 0, icon=":material/arrow_upward:")
    c_down.button(
        "Down", key="deck_down", on_click=move, args=(1,), disabled=k >= n - 1, icon=":material/arrow_downward:"
    )
    c_del.button("Delete", key="deck_delete", on_click=delete, icon=":material/delete:")
    c_show.button("Present from here", key="deck_present_here", on_click=save, args=(k,), disabled=bool(found))
    step = deck.steps[k]
    st.markdown(f"**Step {k + 1}:** {escape_md(decks.title(step))}")
    if decks.is_question(step):
        preview(step)


def file_block(deck: Deck) -> None:
    c_save, c_present, c_export = st.columns(3)
    ready = bool(deck.steps)
    c_save.button("Save: get its link", key="deck_save", on_click=save, disabled=not ready, icon=":material/link:")
    c_present.button(
        "Present in lecture mode",
        key="deck_present",
        on_click=save,
        args=(0,),
        type="primary",
        disabled=not ready or bool(problems(deck, decks.known())),
        icon=":material/slideshow:",
    )
    c_export.download_button(
        "Export (JSON file)",
        data=deck.to_json() if ready else "",
        file_name=decks.deck_file_name(deck),
        mime="application/json",
        key="deck_export",
        on_click="ignore",
        disabled=not ready,
        icon=":material/download:",
    )
    st.file_uploader(
        "Import a deck file (.json): a file with a bad step is refused whole, and the message names the step",
        type=["json"],
        key="deck_upload",
        on_change=import_uploaded,
    )


st.title("Deck builder")
narrative(
    "A deck is your lecture as an ordered list of steps: a lesson's step on your sentence, or a question the "
    "class room votes on. Preview each question's answer here, before class. Save it for a link, export it as "
    "a file, and present it: in lecture mode the deck's bar, above every page, shows where you are and "
    "moves with Previous / Next (keys Page Up / Page Down, what a presentation clicker sends)."
)
load_linked()
shown = st.session_state.pop(SAID_KEY, None)
if shown:
    (st.error if shown[0] == "error" else st.success)(escape_md(shown[1]))
deck = draft()
c_title, c_course, c_new = st.columns([3, 1.2, 1], vertical_alignment="bottom")
st.session_state.setdefault(TITLE_KEY, deck.title)
c_title.text_input("Title", max_chars=120, key=TITLE_KEY, on_change=retitle)
c_course.button("Start from the course deck", key="deck_course", on_click=lambda: set_draft(decks.course_deck()))
c_new.button("New, empty", key="deck_new", on_click=lambda: set_draft(Deck(UNTITLED, ())))
if deck.steps:
    steps_block(deck)
else:
    st.info("No steps yet: add one below, start from the course deck, or import a deck file.")
st.subheader("Add a step")
add_forms()
st.subheader("Save, present, export")
file_block(deck)
write_url(PARAMS)
