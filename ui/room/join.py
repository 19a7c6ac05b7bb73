"""How students join, drawn for the back of a hall: the QR code at least a third of the screen's height and
the room code in type at least 48 px tall, before and during a round, in lecture mode or not. The room page
draws it beside the question; a lecture deck may draw it too."""

from __future__ import annotations

import streamlit as st

from classroom.codes import shown_code
from ui.frame.quiz_widget import escape_md
from ui.views import room as view

QR_SHARE_VH = 36  # per cent of the screen's height: above a third, with room for the QR code's caption
CODE_PX = 56  # the room code's type (at least 48 px, read from the back of a hall)
# Our own stylesheet, never user text. The QR code is drawn at its height (its width follows), crisp.
JOIN_CSS = f"""
.st-key-room-qr [data-testid="stImage"] img {{height: {QR_SHARE_VH}vh !important; width: auto !important;
  max-width: none; image-rendering: pixelated;}}
.st-key-room-qr [data-testid="stImage"], .st-key-room-qr [data-testid="stImageContainer"] {{width: auto !important;}}
[data-testid="stMain"] .st-key-room-code p {{font-size: {CODE_PX}px !important; font-weight: 700; line-height: 1.15;
  letter-spacing: 0.04em; margin: 0; white-space: nowrap;}}
"""


def join_panel(code: str, student_link: str) -> None:
    """The QR code of the student link and the room code, large."""
    st.html(f"<style>{JOIN_CSS}</style>")
    with st.container(key="room-qr"):
        st.image(view.qr_png(student_link), caption=f"Scan to join room {shown_code(code)}")
    with st.container(key="room-code"):
        st.markdown(escape_md(shown_code(code)))
