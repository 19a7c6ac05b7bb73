"""What a lesson says in place of a part that needs a trained model when none could be loaded."""

from __future__ import annotations

import streamlit as st

NEEDS_TRAINED = "This part needs a trained model, and none could be loaded: the notice on this page says why."


def has_trained(model, why: str = "") -> bool:
    """True when `model` is there; otherwise the notice (and `why`, the load error) in the part's place, and False."""
    if model is None:
        st.info(f"{NEEDS_TRAINED} {why}".strip())
    return model is not None
