"""Encoder Lab: the frame. Page config, navigation over the finished lessons, the sidebar."""

import streamlit as st

from ui.state import GLOBAL_PARAMS, MODEL, SEED, read_url, show_notices

st.set_page_config(page_title="Encoder Lab", page_icon=":material/school:", layout="wide")

# Only finished lessons are listed here.
LESSONS = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/attention.py", title="Attention", icon=":material/visibility:", url_path="attention"),
    st.Page("pages/padding.py", title="Padding", icon=":material/space_bar:", url_path="padding"),
    st.Page("pages/block.py", title="The block", icon=":material/layers:", url_path="block"),
    st.Page("pages/quiz.py", title="Quiz", icon=":material/quiz:", url_path="quiz"),
]

show_notices(read_url("app", list(GLOBAL_PARAMS)))

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
    st.markdown("**Presenting**")
    st.toggle("Lecture mode", key="lecture", help="Large type, one step at a time, notes folded away.")
    st.toggle("High contrast", key="contrast", help="Black on white, thicker lines and outlines.")

if st.session_state.get("lecture"):
    # Our own stylesheet, not user text: larger type for a projector.
    st.markdown(
        "<style>.stMarkdown p, .stMarkdown li {font-size: 1.35rem !important;}"
        " h1 {font-size: 3rem !important;} h3 {font-size: 2.1rem !important;}</style>",
        unsafe_allow_html=True,
    )
if st.session_state.get("contrast"):
    st.markdown("<style>.stApp {background: #ffffff; color: #000000;}</style>", unsafe_allow_html=True)

st.navigation(LESSONS).run()
