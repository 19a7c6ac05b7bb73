"""The "show the code" panel: the real source of the encoder_core functions behind a figure."""

from __future__ import annotations

import inspect

import streamlit as st

USED_KEYS = "_code_panels"  # emptied by ui.frame.sections.start at the top of every run


def code_panel_key(*objects) -> str:
    return "code_" + "_".join(obj.__qualname__ for obj in objects)


def _unique_key(*objects) -> str:
    """Two sections may show the same function (both are on screen on the one-page view)."""
    base = key = code_panel_key(*objects)
    used = st.session_state.get(USED_KEYS)
    if used is None:
        return base
    n = 2
    while key in used:
        key, n = f"{base}_{n}", n + 1
    used.add(key)
    return key


def show_code(*objects, label: str = "Show the code") -> None:
    """A closed panel that reads and highlights the source only once it is opened.

    Highlighting a page's worth of Python cost the browser about a second on every first load,
    for panels most students never open, so the panel is lazy: opening it reruns the page.
    """
    with st.expander(label, key=_unique_key(*objects), on_change="rerun") as panel:
        if not panel.open:
            return
        for obj in objects:
            module = inspect.getmodule(obj)
            st.caption(f"`{module.__name__}.{obj.__qualname__}`" if module else obj.__qualname__)
            st.code(inspect.getsource(obj), language="python")
