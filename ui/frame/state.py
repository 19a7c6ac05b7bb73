"""Every control bound to the URL, so a link reproduces the view.

On a page's first run in a session the URL's values are read, checked (ui.frame.params) and
put into st.session_state under the widget keys; every notice of a changed value is
shown. After the widgets run, the URL is rewritten from the current values (defaults
are left out, to keep links short).
"""

from __future__ import annotations

from urllib.parse import quote, urlencode, urlsplit

import streamlit as st

from classroom.links import is_loopback, lan_address, public_base
from encoder_core.model.config import MAX_SEED

from .params import Param, snippet

LECTURE = Param("lecture", False, "bool")
CONTRAST = Param("contrast", False, "bool")
# A link may ask for any step: the lesson, which knows how many it has, brings it into range and says
# so (sections.current_step), so no frame-wide bound here can name the wrong one.
MAX_STEP = 10_000
STEP = Param("step", 0, "int", 0, MAX_STEP)
ALL_SECTIONS = Param("all", False, "bool")
SEED = Param("seed", 0, "int", 0, MAX_SEED)
# The encoder a lesson runs on: the seeded random model, the lab's trained MLM, or all-MiniLM-L6-v2.
MODEL = Param("model", "small", "choice", options=("small", "mlm", "minilm"))
# Short enough for the sidebar's select box; the box's help gives the sizes.
MODEL_LABELS = {"small": "small, random weights", "mlm": "small, trained (lab's MLM)", "minilm": "all-MiniLM-L6-v2"}
# A lecturer's deck (classroom/decks.py) being presented, and its step (from 0, as a lesson's step): every page
# keeps them in its link, so the deck's bar (ui/room/deck.py) follows the lecturer from lesson to lesson.
DECK = Param("deck", "", "text", max_len=16)
DECK_STEP = Param("deck_step", 0, "int", 0, MAX_STEP)
GLOBAL_PARAMS = (LECTURE, CONTRAST, ALL_SECTIONS, STEP, SEED, MODEL, DECK, DECK_STEP)


def read_url(page: str, params: list[Param], *, report_unknown: bool = True) -> list[str]:
    """Seed session_state from the URL once per page per session; return the notices.

    report_unknown=False is for the app frame, which reads only the global parameters and
    cannot tell a lesson's parameter from a typo; each lesson reports the ones it does not know.
    """
    flag = f"_url_read_{page}"
    notices: list[str] = []
    if not st.session_state.get(flag):
        st.session_state[flag] = True
        known = {p.name for p in params} | {p.name for p in GLOBAL_PARAMS}
        for p in params:
            if p.name in st.query_params:
                value, notice = p.parse(st.query_params[p.name])
                st.session_state[p.key] = value
                if notice:
                    notices.append(notice)
        unknown = [k for k in st.query_params.keys() if k not in known]
        if unknown and report_unknown:
            notices.append(
                "Ignored unknown link parameters: " + ", ".join(f"`{snippet(k)}`" for k in unknown[:5]) + "."
            )
    for p in params:
        if p.key not in st.session_state:
            st.session_state[p.key] = p.default
    st.session_state.setdefault(f"_notices_{page}", [])
    if notices:
        st.session_state[f"_notices_{page}"] = notices
    return st.session_state[f"_notices_{page}"]


def ensure_valid(params: list[Param]) -> None:
    """Make session values valid again after a config change (e.g. a layer that no longer exists).

    Call it before the widgets are created: session_state may not be changed after that.
    """
    for p in params:
        value = st.session_state.get(p.key, p.default)
        fixed = p.nearest_valid(value)
        if p.key not in st.session_state or fixed != value or type(fixed) is not type(value):
            st.session_state[p.key] = fixed


def url_values(params: list[Param]) -> dict[str, str]:
    """The URL parameters that reproduce the current view: every value that differs from its default.

    The step (the open section) does not matter when every section is on one page, so it is
    left out then.
    """
    wanted = {}
    lecture = bool(st.session_state.get(LECTURE.key, LECTURE.default))
    every_section = bool(st.session_state.get(ALL_SECTIONS.key, ALL_SECTIONS.default))
    for p in list(GLOBAL_PARAMS) + list(params):
        if p is STEP and every_section and not lecture:
            continue
        value = st.session_state.get(p.key, p.default)
        if value != p.default:
            wanted[p.name] = p.to_url(value)
    return wanted


def write_url(params: list[Param]) -> bool:
    """Mirror the current values into the URL (only those that differ from the default); True if it changed."""
    wanted = url_values(params)
    if dict(st.query_params.to_dict()) == wanted:
        return False
    st.query_params.from_dict(wanted)
    return True


def link_for(base: str | None, query: dict[str, str]) -> str:
    """The shareable address: the page's URL plus its query string (spaces as %20, readable)."""
    base = (base or "").split("?", 1)[0].split("#", 1)[0]
    query_string = urlencode(query, quote_via=quote, safe="")
    return f"{base}?{query_string}" if query_string else (base or "/")


PUBLIC_URL_KEY = "room_public_url"  # the public address a lecturer typed (the class room's Settings)


def reachable(url: str | None) -> str | None:
    """This page's address as others can open it: a localhost address (which no other machine reaches) becomes
    the public one, from the lecturer's setting, ENCODER_LAB_PUBLIC_URL, or this machine's network address
    (classroom.links); any other address is kept."""
    if not url or not url.startswith(("http://", "https://")) or not is_loopback(url):
        return url
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    head, _, page = path.rpartition("/") if path else ("", "", "")
    here = f"{parts.scheme}://{parts.netloc}{head}"
    base = public_base(st.session_state.get(PUBLIC_URL_KEY, ""), here, lan=lan_address())
    if base.source == "page" or not base.url:
        return url
    return f"{base.url}/{page}" if page else base.url + "/"


def current_link() -> str:
    """The link to this view as it stands after write_url: this page's address (as others reach it, see
    reachable) and the current URL parameters."""
    try:
        base = st.context.url
    except Exception:  # outside a browser session (tests, bare mode) there is no address
        base = None
    return link_for(reachable(base), st.query_params.to_dict())


def value(p: Param):
    """The control's current value (read_url and ensure_valid have made it valid)."""
    return st.session_state[p.key]


def show_notices(notices: list[str]) -> None:
    if notices:
        st.warning("This link had values that could not be used as given:\n\n" + "\n".join(f"- {n}" for n in notices))
