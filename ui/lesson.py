"""The frame every lesson page uses: URL-bound controls, notices, sections, lecture mode.

A lesson is a list of Sections. Normally they are all shown, one after another. In
lecture mode one Section is shown at a time, large, with its one-line takeaway and
previous / next buttons; the step number is in the URL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from .params import Param
from .state import STEP, read_url, show_notices, write_url


@dataclass
class Section:
    title: str
    takeaway: str  # one line: what the figure shows
    render: Callable[[], None]


def lecture_mode() -> bool:
    return bool(st.session_state.get("lecture", False))


def high_contrast() -> bool:
    return bool(st.session_state.get("contrast", False))


def start(page: str, params: list[Param]) -> None:
    """Call first on a page: seeds the controls from the link and shows what had to change."""
    st.session_state["_page"] = page
    st.session_state[f"_figures_{page}"] = []
    show_notices(read_url(page, params))


def narrative(text: str) -> None:
    """Explanatory prose: inline normally, folded away in lecture mode."""
    if lecture_mode():
        with st.expander("Notes"):
            st.markdown(text)
    else:
        st.markdown(text)


def _move(delta: int, n: int) -> None:
    st.session_state[STEP.key] = min(max(int(st.session_state.get(STEP.key, 0)) + delta, 0), n - 1)


def render_sections(sections: list[Section]) -> None:
    if not lecture_mode():
        for s in sections:
            st.subheader(s.title)
            s.render()
        return
    n = len(sections)
    step = min(max(int(st.session_state.get(STEP.key, 0)), 0), n - 1)
    st.session_state[STEP.key] = step
    s = sections[step]
    st.markdown(f"### Step {step + 1} of {n}: {s.title}")
    st.info(s.takeaway)
    s.render()
    left, mid, right = st.columns([1, 3, 1])
    left.button("Previous", key="lecture_prev", disabled=step == 0, on_click=_move, args=(-1, n), width="stretch")
    mid.progress((step + 1) / n)
    right.button("Next", key="lecture_next", disabled=step == n - 1, on_click=_move, args=(1, n), width="stretch")


def finish(params: list[Param]) -> None:
    """Call last: mirrors the view into the URL and offers the lesson's figures as one file."""
    write_url(params)
    from .charts import all_figures_download

    all_figures_download()
