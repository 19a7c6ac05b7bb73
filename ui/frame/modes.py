"""The app-wide settings a page reads while it draws: presenting modes, the sidebar's seed, the page.

Each is read through its Param's key (ui.frame.state), never a string typed in a page.
"""

from __future__ import annotations

import streamlit as st

from .state import ALL_SECTIONS, CONTRAST, LECTURE, MODEL, SEED

PAGE_KEY = "_page"  # the lesson being drawn on this run (set by sections.start)


def lecture_mode() -> bool:
    return bool(st.session_state.get(LECTURE.key, LECTURE.default))


def high_contrast() -> bool:
    return bool(st.session_state.get(CONTRAST.key, CONTRAST.default))


def every_section() -> bool:
    return bool(st.session_state.get(ALL_SECTIONS.key, ALL_SECTIONS.default))


def sidebar_seed() -> int:
    """The seed the sidebar shows: the weights every lesson's seeded model is built from."""
    return int(st.session_state.get(SEED.key, SEED.default))


def sidebar_model() -> str:
    """The encoder the sidebar asks for: one of MODEL.options."""
    choice = st.session_state.get(MODEL.key, MODEL.default)
    return choice if choice in MODEL.options else MODEL.default


def current_page() -> str:
    return st.session_state.get(PAGE_KEY, "lesson")


def figures_key(page: str | None = None) -> str:
    """Where this run keeps the figures it has shown (for the one-file download)."""
    return f"_figures_{page or current_page()}"


# In a lecture step one chart is drawn in full (a side-by-side pair counts as one: it is one
# comparison); any further chart of the step is folded under its title, as the notes are.
LECTURE_CHARTS_KEY = "_lecture_charts_drawn"
PAIR_KEY = "_lecture_pair"  # "open" after side_by_side; then the pair's first chart's answer


def start_lecture_step() -> None:
    st.session_state[LECTURE_CHARTS_KEY] = 0
    st.session_state[PAIR_KEY] = None


def open_pair() -> None:
    """The next two charts are one comparison, drawn side by side."""
    st.session_state[PAIR_KEY] = "open"


def lecture_headline_chart() -> bool:
    """Is the chart about to be drawn its lecture step's one chart in full (True), or one to fold?"""
    pending = st.session_state.get(PAIR_KEY)
    if isinstance(pending, bool):  # the second chart of a pair goes where the first went
        st.session_state[PAIR_KEY] = None
        return pending
    drawn = st.session_state.get(LECTURE_CHARTS_KEY, 0)
    st.session_state[LECTURE_CHARTS_KEY] = drawn + 1
    headline = drawn == 0
    if pending == "open":
        st.session_state[PAIR_KEY] = headline
    return headline
