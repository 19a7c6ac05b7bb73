"""The frame every lesson page uses: URL-bound controls, notices, sections, lecture mode.

A lesson is a list of Sections. Normally they are all shown, one after another. In
lecture mode one Section is shown at a time, large, with its one-line takeaway and
previous / next buttons; the step number is in the URL.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from .frame import leave_legacy_pages_mode
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
    leave_legacy_pages_mode()
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


# Keyboard shortcuts, shown on the buttons. Streamlit ignores them while the focus is in a text box,
# so typing an "n" into a sentence does not turn the page.
PREVIOUS_KEY, NEXT_KEY = "p", "n"


def _move(delta: int, n: int) -> None:
    st.session_state[STEP.key] = min(max(int(st.session_state.get(STEP.key, 0)) + delta, 0), n - 1)


STEP_ANCHOR = "lecture-step"
# Our own constant script, never user text: bring the step's heading to the top of the window, as a
# slide would be, so that on a 720-pixel screen the figure is in view and not below the controls.
# Tried again shortly after, in case the content below was still loading and the page was too short.
SCROLL_SCRIPT = (
    "<script>/* step {step} */ (() => {{ const go = () => {{ const el = document.getElementById('{anchor}');"
    " if (el) el.scrollIntoView({{block: 'start'}}); }}; go(); setTimeout(go, 400); setTimeout(go, 1200); }})();"
    "</script>"
)


def _scroll_to_step_when_it_changes(step: int, where) -> None:
    shown = (st.session_state.get("_page"), step)
    if st.session_state.get("_scrolled_to") != shown:
        st.session_state["_scrolled_to"] = shown
        where.html(SCROLL_SCRIPT.format(step=step, anchor=STEP_ANCHOR), unsafe_allow_javascript=True)


def current_step(n: int) -> int:
    """The lecture step, kept inside 0..n-1 (a link may ask for a step the lesson does not have)."""
    try:
        step = int(st.session_state.get(STEP.key, 0))
    except (TypeError, ValueError):
        step = 0
    return min(max(step, 0), max(n - 1, 0))


def step_heading(step: int, n: int, title: str) -> str:
    return f"Step {step + 1} of {n}: {title}"


def render_sections(sections: list[Section]) -> None:
    """Normal mode: every section in order. Lecture mode: one section, its takeaway, previous / next."""
    if not lecture_mode():
        st.session_state.pop("_scrolled_to", None)
        for s in sections:
            st.subheader(s.title)
            s.render()
        return
    n = len(sections)
    if n == 0:
        return
    step = current_step(n)
    st.session_state[STEP.key] = step
    s = sections[step]
    head, prev, nxt = st.columns([3, 1, 1], vertical_alignment="center")
    head.subheader(step_heading(step, n, s.title), anchor=STEP_ANCHOR)
    prev.button(
        "Previous",
        key="lecture_prev",
        disabled=step == 0,
        on_click=_move,
        args=(-1, n),
        width="stretch",
        shortcut=PREVIOUS_KEY,
        help=f"Previous step (key {PREVIOUS_KEY.upper()})",
    )
    nxt.button(
        "Next",
        key="lecture_next",
        disabled=step == n - 1,
        on_click=_move,
        args=(1, n),
        width="stretch",
        type="primary",
        shortcut=NEXT_KEY,
        help=f"Next step (key {NEXT_KEY.upper()})",
    )
    _scroll_to_step_when_it_changes(step, head)
    st.info(s.takeaway, icon=":material/lightbulb:")
    s.render()


def finish(params: list[Param]) -> None:
    """Call last: mirrors the view into the URL and offers the lesson's figures as one file."""
    write_url(params)
    from .charts import all_figures_download

    all_figures_download()
