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
