"""The frame every lesson page uses: URL-bound controls, notices, sections, lecture mode.

A lesson is a list of Sections, shown one at a time: as tabs normally, or in lecture mode
as large steps with their one-line takeaway and previous / next buttons. Either way the open
section's number (the step) is in the URL, and only that section runs and is drawn, so a
change redraws two or three charts rather than the whole lesson's. A sidebar switch puts
every section on one long page instead, for reading or printing.

Each section runs as a Streamlit fragment: a control inside it (a prediction, a panel, its own
radio) reruns that section alone, not the page, the sidebar and the app frame. A page-level
control that steers only the open section passes `on_change=rerun_open_section`. A callback that
changes something drawn outside its section (the sidebar's record, a page-level control) calls
`rerun_whole_page()`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from .charts import all_figures_download
from .code import USED_KEYS as USED_CODE_KEYS
from .modes import PAGE_KEY, current_page, every_section, figures_key, lecture_mode, open_pair, start_lecture_step
from .params import Param
from .shell import LANDED_KEY, leave_legacy_pages_mode, section_share_link
from .state import STEP, read_url, show_notices, write_url


@dataclass
class Section:
    title: str
    takeaway: str  # one line: what the step shows; where it asks first, the question (never the answer)
    render: Callable[[], None]
    tab: str | None = None  # a short label for the tab row, where the title is long

    @property
    def tab_label(self) -> str:
        return self.tab or self.title


def start(page: str, params: list[Param]) -> None:
    """Call first on a page: seeds the controls from the link and shows what had to change."""
    leave_legacy_pages_mode()
    st.session_state[PAGE_KEY] = page
    st.session_state[figures_key(page)] = []
    st.session_state[USED_CODE_KEYS] = set()
    show_notices(read_url(page, params))


SIDE_BY_SIDE_MAX_TOKENS = 8


def side_by_side(n_tokens: int):
    """Two heatmaps next to each other while they are small enough to read; else one under the other.
    Either way they are one comparison: in a lecture step they count as one chart."""
    if lecture_mode():
        open_pair()
    return st.columns(2) if n_tokens <= SIDE_BY_SIDE_MAX_TOKENS else (st.container(), st.container())


def show_metrics(metrics: Sequence[tuple[str, object]]) -> None:
    """A row of metrics, (label, value) each, in equal columns."""
    for column, (label, value) in zip(st.columns(len(metrics)), metrics):
        column.metric(label, value)


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
SCROLLED_TO_KEY = "_scrolled_to"  # (page, step) the window was last scrolled to
# Our own constant script, never user text: bring the step's heading to the top of the window, as a
# slide would be, so that on a 720-pixel screen the figure is in view and not below the controls.
# Tried again shortly after, in case the content below was still loading and the page was too short.
SCROLL_SCRIPT = (
    "<script>/* step {step} */ (() => {{ const go = () => {{ const el = document.querySelector('{anchor}');"
    " if (el) el.scrollIntoView({{block: 'start'}}); }}; go(); setTimeout(go, 400); setTimeout(go, 1200); }})();"
    "</script>"
)


def _scroll_to_step_when_it_changes(step: int, where) -> None:
    shown = (current_page(), step)
    if st.session_state.get(SCROLLED_TO_KEY) != shown:
        st.session_state[SCROLLED_TO_KEY] = shown
        where.html(SCROLL_SCRIPT.format(step=step, anchor="#" + STEP_ANCHOR), unsafe_allow_javascript=True)


def current_step(n: int) -> int:
    """The lecture step, kept inside 0..n-1: a link may ask for a step the lesson does not have, and
    then the page says which step it opened instead."""
    try:
        step = int(st.session_state.get(STEP.key, 0))
    except (TypeError, ValueError):
        step = 0
    kept = min(max(step, 0), max(n - 1, 0))
    if kept != step:
        st.session_state[STEP.key] = kept
        st.info(f"`step={step}` is past this lesson's steps, 0–{n - 1}: opening step {kept}, its last.")
    return kept


def step_heading(step: int, n: int, title: str) -> str:
    return f"Step {step + 1} of {n}: {title}"


SECTION_TABS_KEY = "_section_tab"


OPEN_SECTION = "open_section"  # the fragment key of the one section shown in tabs and in lecture mode


def section_rerun() -> bool:
    """Is this run a rerun of a section alone (a control inside it changed), not of the whole page?"""
    ctx = get_script_run_ctx(suppress_warning=True)
    return bool(ctx and ctx.fragment_ids_this_run)


def rerun_open_section() -> None:
    """on_change of a page-level control that only the open section reads: rerun that section alone.
    With every section on one page there is no one open section, and the whole page reruns."""
    if not every_section():
        try:
            st.rerun(OPEN_SECTION)
        except StreamlitAPIException:  # the last run drew no open section (it stopped early): rerun the page
            pass


def rerun_whole_page() -> None:
    """In a callback of a control inside a section: rerun the page, because what the callback changed
    is drawn outside the section too (the sidebar's record of predictions, a page-level control)."""
    st.rerun()


def set_page_controls(values: dict) -> None:
    """The callback of a section's button that sets page-level controls (drawn above the section):
    the values are set and the whole page reruns, so those controls show them."""
    st.session_state.update(values)
    rerun_whole_page()


SECTION_INDEX_KEY = "_section_index"  # the step of the section being drawn: a prediction records where it is taught


def current_section_index() -> int | None:
    return st.session_state.get(SECTION_INDEX_KEY)


def _run_section(section: Section, key: str, params: Sequence[Param], *, alone: bool, index: int) -> None:
    """The section as a fragment. Its first run is part of the page's; on its own reruns it also brings
    the URL up to date and redraws its figures. Shown alone (tabs, lecture), it also owns the sidebar's
    link and the one-file download of the figures, which its own reruns change."""
    marks = st.session_state.setdefault(FIGURE_MARKS_KEY, {})

    @st.fragment(key=key)
    def section_fragment() -> None:
        own_rerun = section_rerun()
        figures = st.session_state.setdefault(figures_key(), [])
        if own_rerun:  # this run's figures replace the ones it drew last time
            del figures[marks.get(key, len(figures)) :]
        else:
            marks[key] = len(figures)
        if lecture_mode():
            start_lecture_step()
        st.session_state[SECTION_INDEX_KEY] = index
        section.render()
        url_changed = write_url(params) if own_rerun or alone else False
        # The sidebar's link is rewritten on the page's runs, and on the section's own only when the URL
        # changed: rewriting it in the sidebar during a section's own rerun can take the keyboard focus off
        # the control the student just used (seen with a prediction's options).
        if alone and (not own_rerun or url_changed):
            section_share_link(own_rerun)
        if alone:
            all_figures_download()

    section_fragment()


FIGURE_MARKS_KEY = "_section_figure_marks"  # fragment key -> how many figures the page had drawn before it


def render_sections(sections: list[Section], params: Sequence[Param]) -> None:
    """Lecture mode: one large step. Every-section mode: all of them in order. Otherwise: tabs.

    params: the page's controls, for the link a section's own rerun writes (as finish does for the page)."""
    landed = st.session_state.pop(LANDED_KEY, None) is not None
    if lecture_mode():
        _render_lecture(sections, params)
        return
    st.session_state.pop(SCROLLED_TO_KEY, None)
    if every_section():
        linked = current_step(len(sections)) if landed else 0  # a link's step: its section, scrolled to
        for i, s in enumerate(sections):
            st.subheader(s.title, anchor=f"section-{i}")
            _run_section(s, f"section_{i}", params, alone=False, index=i)
        if linked:
            st.html(SCROLL_SCRIPT.format(step=linked, anchor=f"#section-{linked}"), unsafe_allow_javascript=True)
    else:
        _render_tabs(sections, params, landed=landed)


SHOWN_TAB_KEY = "_section_tab_shown"
SCROLL_TO_TABS_KEY = "_scroll_to_tabs"
TABS_SELECTOR = '[data-testid="stTabs"]'
TABS_OPENED_AT_KEY = "_section_tabs_opened_at"  # the tab a link landed on: the tab row's default for the visit


def _next_section(n: int) -> None:
    """The button under a section: open the next one, and bring the tabs back into view."""
    _move(1, n)
    st.session_state[SCROLL_TO_TABS_KEY] = True


def _step_from_tabs(titles: list[str], n: int) -> int:
    """The open section: the tab the student just clicked, else the step (from a link or a button)."""
    picked, shown = st.session_state.get(SECTION_TABS_KEY), st.session_state.get(SHOWN_TAB_KEY)
    if picked in titles and picked != shown:
        return titles.index(picked)
    return current_step(n)


def _render_tabs(sections: list[Section], params: Sequence[Param], landed: bool = False) -> None:
    """One tab per section; only the open one runs (tabs with on_change="rerun" run lazily).

    landed: this run opened the page (from the menu or a link such as "Teach it again"). Then the step
    (the link's, or 0) decides, never a tab value an earlier visit or another lesson left in the session or
    in the browser, and the tab row is made anew with that tab as its default (the default is part of the
    tab row's identity), so a browser that kept the old row's tab cannot open the first tab instead."""
    n = len(sections)
    if n == 0:
        return
    titles = [s.tab_label for s in sections]
    step = current_step(n) if landed else _step_from_tabs(titles, n)
    if landed:
        st.session_state[TABS_OPENED_AT_KEY] = titles[step]
    st.session_state[STEP.key] = step
    st.session_state[SECTION_TABS_KEY] = st.session_state[SHOWN_TAB_KEY] = titles[step]
    default = st.session_state.get(TABS_OPENED_AT_KEY)
    tabs = st.tabs(titles, key=SECTION_TABS_KEY, on_change="rerun", default=default if default in titles else None)
    with tabs[step]:
        _run_section(sections[step], OPEN_SECTION, params, alone=True, index=step)
        if step < n - 1:
            st.button(
                f"Next: {titles[step + 1]}",
                key="section_next",
                on_click=_next_section,
                args=(n,),
                icon=":material/arrow_forward:",
            )
    if st.session_state.pop(SCROLL_TO_TABS_KEY, False):
        # The button sits at the bottom of a long section: without this the next one opens out of view.
        st.html(SCROLL_SCRIPT.format(step=step, anchor=TABS_SELECTOR), unsafe_allow_javascript=True)


def _render_lecture(sections: list[Section], params: Sequence[Param]) -> None:
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
    _run_section(s, OPEN_SECTION, params, alone=True, index=step)


def finish(params: list[Param]) -> None:
    """Call last: mirrors the view into the URL; with every section on one page, offers all their
    figures as one file (a section shown alone offers its own, under it)."""
    write_url(params)
    if every_section() and not lecture_mode():
        all_figures_download()
