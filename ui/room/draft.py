"""The deck a lecturer is building, kept in the session: the deck builder (pages/deck.py) edits it, and every
lesson's sidebar adds the view on screen to it ("Add this view to my deck", under "Share this view")."""

from __future__ import annotations

import streamlit as st

from classroom.decks import BadDeck, Deck, Step, problems, view_from_link
from encoder_core.lessons import LESSON_IDS
from ui.frame.quiz_widget import escape_md
from ui.frame.state import link_for

from .deck import DECK_PAGE, known, open_deck_id

DRAFT_KEY = "_deck_draft"  # the deck being built: a classroom.decks.Deck
TITLE_KEY = "deck_title"  # the builder's title box
SELECTED_KEY = "deck_selected"  # the builder's selected step, from 1
UNTITLED = "Untitled deck"
ADDED_KEY = "_deck_view_added"  # ("error" | "success", message) from the sidebar's button, shown once


def draft() -> Deck:
    return st.session_state.get(DRAFT_KEY) or Deck(UNTITLED, ())


def set_draft(deck: Deck, selected: int = 1) -> None:
    st.session_state[DRAFT_KEY] = deck
    st.session_state[TITLE_KEY] = deck.title
    st.session_state[SELECTED_KEY] = min(max(selected, 1), max(len(deck.steps), 1))


def append(step: Step) -> Deck:
    """The draft with `step` at its end, selected in the builder."""
    deck = draft()
    grown = Deck(deck.title, (*deck.steps, step))
    set_draft(grown, len(grown.steps))
    return grown


def add_view(page_id: str) -> None:
    """on_click: the view as its share link holds it becomes the draft's last step. The link's query is this
    page's URL parameters and its path ends in the page's id, so the step reopens this view (the host, which
    the step does not keep, is left out)."""
    try:
        step = view_from_link(link_for(f"/{page_id}", st.query_params.to_dict()))
    except BadDeck as err:
        st.session_state[ADDED_KEY] = ("error", f"Not added: this view's link cannot be read as a deck step. {err}")
        return
    if found := problems(Deck("", (step,)), known()):
        st.session_state[ADDED_KEY] = ("error", f"Not added: {found[0].what}")
        return
    deck = append(step)
    n = len(deck.steps)
    st.session_state[ADDED_KEY] = (
        "success",
        f"Added as step {n} of {n} in “{deck.title}”. Open the deck builder to reorder or save.",
    )


def add_view_button(page_id: str) -> None:
    """The sidebar's button under "Share this view", on a lesson's page only (a deck step is a lesson's view).

    Hidden while a deck is presented: that deck is saved under its link and does not change, so a step added
    from the projected screen would go to the draft, not to the deck on screen, which a lecturer mid-lecture
    would not expect; and the projector is no place to edit. Close the deck to add views again."""
    if page_id not in LESSON_IDS or open_deck_id() is not None:
        st.session_state.pop(ADDED_KEY, None)
        return
    st.button(
        "Add this view to my deck",
        key="deck_add_this_view",
        on_click=add_view,
        args=(page_id,),
        icon=":material/playlist_add:",
        help="The view as its link holds it becomes the last step of the deck you are building.",
    )
    said = st.session_state.pop(ADDED_KEY, None)
    if said is None:
        return
    kind, message = said
    (st.error if kind == "error" else st.success)(escape_md(message))
    if kind == "success":
        st.page_link(DECK_PAGE, label="Open the deck builder", icon=":material/slideshow:")
