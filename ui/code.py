"""The "show the code" panel: the real source of the encoder_core functions behind a figure."""

from __future__ import annotations

import inspect

import streamlit as st


def show_code(*objects, label: str = "Show the code") -> None:
    with st.expander(label):
        for obj in objects:
            module = inspect.getmodule(obj)
            st.caption(f"`{module.__name__}.{obj.__qualname__}`" if module else obj.__qualname__)
            st.code(inspect.getsource(obj), language="python")
