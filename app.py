"""Encoder Lab: the frame. Page config, navigation over the finished lessons, the sidebar."""

import streamlit as st

from encoder_core.lessons import LESSON_IDS, LESSONS
from ui.frame import learner
from ui.frame.chart_element import preload_charts
from ui.frame.modes import lecture_mode
from ui.frame.quiz_widget import QUIZ_PAGE
from ui.frame.review import progress_panel
from ui.frame.shell import (
    LESSON_ICONS,
    enter_page,
    leave_legacy_pages_mode,
    page_style,
    presenting_controls,
    share_link,
)
from ui.frame.state import DECK, GLOBAL_PARAMS, MODEL, MODEL_LABELS, SEED, read_url, show_notices

leave_legacy_pages_mode()  # the first session after a restart would otherwise skip this frame
st.set_page_config(page_title="Encoder Lab", page_icon=":material/school:", layout="wide")

# Home, every finished lesson in encoder_core.lessons.LESSONS, then the quiz, the learner's progress, the class room
# and the lecturer's deck builder.
PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    *(
        st.Page(
            f"pages/{lesson.id}.py",
            title=lesson.title,
            icon=f":material/{LESSON_ICONS[lesson.id]}:",
            url_path=lesson.id,
        )
        for lesson in LESSONS
    ),
    st.Page(QUIZ_PAGE, title="Quiz", icon=":material/quiz:", url_path="quiz"),
    st.Page("pages/progress.py", title="My progress", icon=":material/timeline:", url_path="progress"),
    st.Page("pages/room.py", title="Class room", icon=":material/groups:", url_path="room"),
    st.Page("pages/deck.py", title="Deck builder", icon=":material/slideshow:", url_path="deck"),
]

show_notices(read_url("app", list(GLOBAL_PARAMS), report_unknown=False))
if st.session_state.get(DECK.key):  # a lecturer's deck is open: its page changes keep the sidebar's values
    from ui.room.deck import keep_sidebar

    keep_sidebar()
if lecture_mode():  # the hall needs the width: the sidebar folds away, and its arrow (top left) reopens it
    st.set_page_config(initial_sidebar_state="collapsed")

with st.sidebar:
    preload_charts()
    st.markdown("**Model**")
    st.selectbox(
        "Encoder",
        MODEL.options,
        key=MODEL.key,
        format_func=MODEL_LABELS.get,
        help="small: seeded random weights (d=64, 4 heads, 2 layers); the lab's MLM: the same shape, trained "
        "here on WordNet's English and the lab's sentences; all-MiniLM-L6-v2: pretrained (d=384, 12 heads, "
        "6 layers). All three read BERT's English vocabulary. Attention, Padding, Heads and Trade-offs run on "
        "this model. Masked LM needs an MLM head: it fills in with MiniLM under the lab's head when MiniLM is "
        "picked, and with the lab's MLM otherwise. The block builds post- and pre-norm small models from the "
        "seed; Using the outputs fine-tunes copies of the lab's MLM.",
    )
    st.number_input(
        "Seed",
        min_value=int(SEED.lo),
        max_value=int(SEED.hi),
        step=1,
        key=SEED.key,
        help="Same seed, same weights, same numbers: on every run and for everyone with the link.",
    )
    link_slot = presenting_controls()

page_style()
page = st.navigation(PAGES)
enter_page(page.url_path)
if page.url_path in LESSON_IDS:  # under the link's slot: the view can go into the deck being built
    from ui.room.draft import add_view_button

    with st.sidebar:
        add_view_button(page.url_path)
if st.session_state.get(DECK.key):  # a lecturer's deck is open: its bar, above every page (ui/room/deck.py)
    from ui.room.deck import deck_bar

    deck_bar()
page.run()
with st.sidebar:
    progress_panel()  # after the page: it counts the predictions committed on this run too
    learner.keep_cookie()  # the record's signed id, once a first answer has made it
share_link(link_slot)  # after the page: the link shows the values the page has just written to the URL
