"""Encoder Lab: the frame. Page config, navigation over the finished lessons, the sidebar."""

import streamlit as st

from ui.frame import enter_page, leave_legacy_pages_mode, page_style, presenting_controls, share_link
from ui.state import GLOBAL_PARAMS, MODEL, SEED, read_url, show_notices

leave_legacy_pages_mode()  # the first session after a restart would otherwise skip this frame
st.set_page_config(page_title="Encoder Lab", page_icon=":material/school:", layout="wide")

# Only finished lessons are listed here.
LESSONS = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/attention.py", title="Attention", icon=":material/visibility:", url_path="attention"),
    st.Page("pages/padding.py", title="Padding", icon=":material/space_bar:", url_path="padding"),
    st.Page("pages/masking.py", title="Masked LM", icon=":material/masks:", url_path="masking"),
    st.Page("pages/block.py", title="The block", icon=":material/layers:", url_path="block"),
    st.Page("pages/heads.py", title="Heads", icon=":material/grid_view:", url_path="heads"),
    st.Page("pages/quiz.py", title="Quiz", icon=":material/quiz:", url_path="quiz"),
]

show_notices(read_url("app", list(GLOBAL_PARAMS), report_unknown=False))

with st.sidebar:
    st.markdown("**Model**")
    st.selectbox(
        "Encoder",
        MODEL.options,
        key=MODEL.key,
        format_func={"small": "small (d=64, 4 heads, 2 layers)"}.get,
        help="The model every lesson runs on.",
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
page = st.navigation(LESSONS)
enter_page(page.url_path)
page.run()
share_link(link_slot)  # after the page: the link shows the values the page has just written to the URL
