"""Every control bound to the URL, so a link reproduces the view.

On a page's first run in a session the URL's values are read, checked (ui.params) and
put into st.session_state under the widget keys; every notice of a changed value is
shown. After the widgets run, the URL is rewritten from the current values (defaults
are left out, to keep links short).
"""

from __future__ import annotations

import streamlit as st

from .params import Param

LECTURE = Param("lecture", False, "bool")
CONTRAST = Param("contrast", False, "bool")
STEP = Param("step", 0, "int", 0, 50)
SEED = Param("seed", 0, "int", 0, 10_000)
MODEL = Param("model", "small", "choice", options=("small",))
GLOBAL_PARAMS = (LECTURE, CONTRAST, STEP, SEED, MODEL)


def read_url(page: str, params: list[Param]) -> list[str]:
    """Seed session_state from the URL once per page per session; return the notices."""
    flag = f"_url_read_{page}"
    notices: list[str] = []
    if not st.session_state.get(flag):
        st.session_state[flag] = True
        known = {p.key for p in params} | {p.key for p in GLOBAL_PARAMS}
        for p in params:
            if p.key in st.query_params:
                value, notice = p.parse(st.query_params[p.key])
                st.session_state[p.key] = value
                if notice:
                    notices.append(notice)
        unknown = [k for k in st.query_params.keys() if k not in known]
        if unknown:
            notices.append("Ignored unknown link parameters: " + ", ".join(f"`{k[:24]}`" for k in unknown[:5]) + ".")
    for p in params:
        if p.key not in st.session_state:
            st.session_state[p.key] = p.default
    st.session_state.setdefault(f"_notices_{page}", [])
    if notices:
        st.session_state[f"_notices_{page}"] = notices
    return st.session_state[f"_notices_{page}"]


def ensure_valid(params: list[Param]) -> None:
    """Clamp session values that a config change made invalid (e.g. a layer that no longer exists)."""
    for p in params:
        value = st.session_state.get(p.key, p.default)
        if p.kind in ("int", "float"):
            st.session_state[p.key] = p.clamp(value)
        elif p.kind == "choice" and value not in p.options:
            st.session_state[p.key] = p.default


def write_url(params: list[Param]) -> None:
    """Mirror the current values into the URL (only those that differ from the default)."""
    wanted = {}
    for p in list(GLOBAL_PARAMS) + list(params):
        value = st.session_state.get(p.key, p.default)
        if value != p.default:
            wanted[p.key] = p.to_url(value)
    if dict(st.query_params.to_dict()) != wanted:
        st.query_params.from_dict(wanted)


def show_notices(notices: list[str]) -> None:
    if notices:
        st.warning("This link had values that could not be used as given:\n\n" + "\n".join(f"- {n}" for n in notices))
