"""The parts of the app frame every lesson shares: presenting toggles, the link to this view,
page styling for lecture and high-contrast mode, where a lecture starts on a new lesson, and
each lesson's icon in the navigation.

app.py calls these around st.navigation; the test fixture app calls the same ones.
"""

from __future__ import annotations

import streamlit as st

from encoder_core.lessons import LESSONS
from ui.views.figures import PHONE_HIDDEN_CELL_FONT

from .chart_element import PRELOAD_KEY
from .link_box import link_box
from .state import ALL_SECTIONS, CONTRAST, LECTURE, STEP, current_link

CURRENT_PAGE_KEY = "_current_page"  # the page of the previous run, to tell a move to another lesson
LANDED_KEY = "_landed_on_page"  # set when this run opened another page: the link's step wins over a tab's state

# Each lesson's icon in the navigation (a Material Symbols name), by lesson id (encoder_core.lessons.LESSONS).
LESSON_ICONS = {lesson.id: lesson.icon for lesson in LESSONS}  # declared with the lesson

# Our own stylesheets, never user text. Selectors are Streamlit's stable data-testids.

# On every page, at every width. A prediction's targets (its options, "sure" / "a guess", the number or word
# box, Commit and Skip) are at least 44 px tall: a thumb's width, WCAG 2.5.5's target size.
# A heatmap's cell text: plotly shrinks it to fit its cells (to 2 px on a phone) and writes the size it chose
# in the text's own style. Text it had to shrink below FIT_CELL_TEXT_PX is hidden: pointing at (tapping) a
# cell shows its value and tokens, and the chart's numbers panel has them all. Text fitted at FIT_CELL_TEXT_PX
# is written at READABLE_CELL_TEXT_PX: plotly allows 0.65 of the type size per character, and a character of
# the app's type takes about 0.5, so the larger text still fits the cell plotly measured.
TARGET_PX = 44
FIT_CELL_TEXT_PX = 10  # the smallest size plotly may fit a cell's text to and have it shown ...
READABLE_CELL_TEXT_PX = 11  # ... and the size it is then written at
_PREDICT = '[class*="st-key-predict-"]'
_OPTION = f'{_PREDICT} [data-testid="stRadioOption"]'
_CELL_TEXT = '.heatmap-label text[style*="font-size: {}px;"]'  # "1px;" does not match "11px;"
EVERY_SCREEN_CSS = (
    f"""
{_OPTION} {{min-height: {TARGET_PX}px; min-width: {TARGET_PX}px; display: flex; align-items: center;}}
{_OPTION} {{width: 100%; padding-right: 0.75rem; cursor: pointer;}}
{_PREDICT} [role="radiogroup"] > div {{align-self: stretch;}}
{_PREDICT} [data-baseweb="input"] {{min-height: {TARGET_PX}px;}}
{_PREDICT} button {{min-height: {TARGET_PX}px;}}
"""
    + ", ".join(_CELL_TEXT.format(px) for px in range(1, FIT_CELL_TEXT_PX))
    + " {display: none;}\n"
    + _CELL_TEXT.format(FIT_CELL_TEXT_PX)
    + f" {{font-size: {READABLE_CELL_TEXT_PX}px !important;}}\n"
    + f".st-key-{PRELOAD_KEY} {{display: none;}}\n"  # the element that only fetches plotly.js
)

# On a phone (Streamlit stacks columns below 640 px): a chart is at most 45 % of the screen's height, so the
# question under it starts within the first screen; cell text plotly does not fit to its cells and that would
# overrun them (ui.views.figures.styled marks it) is hidden; and the chart's toolbar (zoom, PNG, full screen)
# sits in a strip of its own above the chart, not over its title. Plotly draws a chart at the height of its
# element (Streamlit measures it), so a capped chart is redrawn smaller, not cut. Full screen (its toolbar
# then shows "Close fullscreen") keeps the whole screen, its toolbar lifted into the room above the chart.
PHONE_WIDTH_PX = 640
PHONE_CHART_SHARE = 45  # per cent of the screen's height (svh: of the height the browser's own bars leave)
TOOLBAR_STRIP_PX = 32
_ANY_CHART = '[data-testid="stPlotlyChart"]'
_CHART = f'{_ANY_CHART}:not(:has([data-title="Close fullscreen"]))'
NARROW_SCREEN_CSS = f"""
@media (max-width: {PHONE_WIDTH_PX}px) {{
[data-testid="stElementContainer"]:has(> [data-testid="stFullScreenFrame"] > {_ANY_CHART})
  {{flex: 0 0 auto !important; height: auto !important; padding-top: {TOOLBAR_STRIP_PX}px;}}
{_CHART} {{max-height: {PHONE_CHART_SHARE}vh; max-height: {PHONE_CHART_SHARE}svh;}}
{_ANY_CHART}, {_ANY_CHART} .js-plotly-plot, {_ANY_CHART} .plot-container, {_ANY_CHART} .svg-container
  {{overflow: visible !important;}}
{_ANY_CHART} .modebar-container {{top: -{TOOLBAR_STRIP_PX}px !important;}}
{_CELL_TEXT.format(PHONE_HIDDEN_CELL_FONT)} {{display: none;}}
}}
"""

# The room below the page in lecture mode lets a short step's heading scroll to the top of the window.
LECTURE_CSS = """
[data-testid="stMainBlockContainer"] {padding-top: 2.5rem; padding-bottom: 70vh;}
[data-testid="stMain"] p {font-size: 1.2rem !important;}
[data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li {font-size: 1.3rem !important;}
[data-testid="stMain"] h1 {font-size: 2.6rem !important;}
[data-testid="stMain"] h3 {font-size: 1.9rem !important;}
#lecture-step {scroll-margin-top: 4rem;}
[data-testid="stMain"] [data-testid="stAlertContainer"] p {font-size: 1.4rem !important; font-weight: 600;}
[data-testid="stMain"] [data-testid="stCaptionContainer"] {font-size: 1.2rem !important;}
[data-testid="stMain"] [data-testid="stWidgetLabel"] p {font-size: 1.2rem !important;}
[data-testid="stMain"] button p {font-size: 1.2rem !important;}
[data-testid="stMain"] [data-testid="stMetricLabel"] p {font-size: 1.25rem !important;}
[data-testid="stMain"] [data-testid="stMetricValue"],
[data-testid="stMain"] [data-testid="stMetricValue"] * {font-size: 2.6rem !important;}
[data-testid="stMain"] table td, [data-testid="stMain"] table th {font-size: 1.2rem !important;}
[data-testid="stMain"] [data-testid="stExpander"] summary p {font-size: 1.2rem !important;}
[data-testid="stMain"] [data-testid="stCode"] code {font-size: 1.2rem !important;}
[data-testid="stMain"] input, [data-testid="stMain"] textarea {font-size: 1.2rem !important;}
[data-testid="stMain"] label p, [data-testid="stMain"] [data-testid^="stSliderTickBar"],
[data-testid="stMain"] [data-testid="stSliderThumbValue"] {font-size: 1.2rem !important;}
[data-testid="stMain"] [class*="st-key-predict-"] p, [data-testid="stMain"] [class*="st-key-predict-"] label p
  {font-size: 1.6rem !important;}
[data-testid="stMain"] [class*="st-key-predict-"] [role="radio"] {transform: scale(1.4); margin-right: 0.4rem;}
"""

HIGH_CONTRAST_CSS = """
.stApp, [data-testid="stSidebar"], [data-testid="stHeader"] {background: #ffffff !important; color: #000000 !important;}
[data-testid="stSidebar"] {border-right: 2px solid #000000;}
.stApp p, .stApp li, .stApp label, .stApp h1, .stApp h2, .stApp h3, .stApp span {color: #000000;}
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] * {color: #000000 !important;}
[data-testid="stAlertContainer"] {border: 2px solid #000000; background: #ffffff !important;}
[data-testid="stAlertContainer"] * {color: #000000 !important;}
[data-testid="stExpander"] details {border: 2px solid #000000;}
.stApp a {color: #0000ee !important; text-decoration: underline !important;}
.stApp [data-testid^="stBaseButton"] {border: 2px solid #000000 !important;}
.stApp input, .stApp textarea, [data-baseweb="select"] > div {border: 2px solid #000000 !important;}
.stApp *:focus-visible {outline: 3px solid #000000 !important; outline-offset: 2px !important;}
"""


# Streamlit 1.67 has no option to turn its old pages/-folder mode off, and the only supported way out
# (no folder named pages/ beside app.py) would break the project's layout. So this one private flag is
# set here and nowhere else; tests/test_streamlit_contract.py fails, naming it, the day it disappears.
LEGACY_PAGES_FLAG = ("streamlit.runtime.pages_manager", "PagesManager", "uses_pages_directory")


def leave_legacy_pages_mode() -> None:
    """Make sure app.py, not a bare page file, runs this session.

    Streamlit starts a server in its old pages/-folder mode when the entry script sits next to a
    folder named pages/, and only leaves it when st.navigation first runs. So the very first session
    after a restart, opened on a link like /attention, would run pages/attention.py without the app
    frame (no sidebar, no lecture mode). Leaving that mode and rerunning puts the frame back.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if getattr(PagesManager, LEGACY_PAGES_FLAG[2], False):
        setattr(PagesManager, LEGACY_PAGES_FLAG[2], False)
        st.rerun()


def presenting_controls():
    """The sidebar's lecture and contrast toggles and the (still empty) slot for the link to this view.

    Call inside `with st.sidebar:`; pass the returned slot to share_link() after the page has run.
    """
    st.markdown("**Presenting**")
    st.toggle(
        "Lecture mode",
        key=LECTURE.key,
        help="Large type, one step at a time with Previous / Next (keys P / N), notes folded away.",
    )
    st.toggle("High contrast", key=CONTRAST.key, help="Black on white, thicker lines, outlines and focus rings.")
    st.toggle(
        "Every section on one page",
        key=ALL_SECTIONS.key,
        help="One long page to read or print instead of one section at a time. Slower: it draws every "
        "chart of the lesson on each change. Lecture mode always shows one step.",
    )
    slot = st.empty()
    st.session_state[LINK_SLOT_KEY] = slot
    return slot


def page_style() -> None:
    """Big enough targets and readable cell text everywhere, a phone's charts capped (EVERY_SCREEN_CSS,
    NARROW_SCREEN_CSS); larger type for a projector in lecture mode; black-on-white in high contrast."""
    css = (
        EVERY_SCREEN_CSS
        + NARROW_SCREEN_CSS
        + (LECTURE_CSS if st.session_state.get(LECTURE.key) else "")
        + (HIGH_CONTRAST_CSS if st.session_state.get(CONTRAST.key) else "")
    )
    st.html(f"<style>{css}</style>")


def enter_page(page_id: str) -> None:
    """A lesson opened from the menu starts at its first section (in a lecture: step 1); one opened by a
    link from another page (the review, "Teach it again") lands on the step and the controls the link names.

    The first page of a session keeps the step its link asked for (app.py read it from the URL).
    Either way the page is marked as just landed on (LANDED_KEY): its tabs then open the step, whatever a
    tab row of an earlier visit left behind (ui.frame.sections).
    """
    previous = st.session_state.get(CURRENT_PAGE_KEY)
    if previous != page_id:
        st.session_state[LANDED_KEY] = page_id
    if previous is not None and previous != page_id:
        linked, _ = STEP.parse(st.query_params["step"]) if "step" in st.query_params else (STEP.default, "")
        st.session_state[STEP.key] = linked
        st.session_state.pop(f"_url_read_{page_id}", None)  # the page reads the link's own controls again
    st.session_state[CURRENT_PAGE_KEY] = page_id


def share_link(slot) -> None:
    """Fill the sidebar slot with the link to this view. Run after the page, so it has the page's final state;
    unless the open section has filled it already (section_share_link)."""
    if st.session_state.pop(LINK_BY_SECTION_KEY, False):
        return
    _write_link(slot)


def _write_link(slot) -> None:
    url = current_link()
    with slot.container():
        st.markdown("**Share this view**")
        link_box(url)
        st.caption("The link opens this page as it is now.")


LINK_SLOT_KEY = "_share_link_slot"  # this run's sidebar slot for the link (presenting_controls)
LINK_BY_SECTION_KEY = "_share_link_by_section"  # the open section filled the slot on this run


def section_share_link(own_rerun: bool) -> None:
    """The link, filled in by the one section shown (a fragment) on each of its runs, so that a control that
    reruns only that section still leaves the sidebar's link exact. Streamlit lets a fragment write to a
    container outside it only if it wrote there on the page's last full run too: so it writes on every run,
    and the frame's own share_link, after the page, leaves the slot alone."""
    slot = st.session_state.get(LINK_SLOT_KEY)
    if slot is None:  # a page run without the app frame (a test of one page)
        return
    _write_link(slot)
    if not own_rerun:
        st.session_state[LINK_BY_SECTION_KEY] = True
