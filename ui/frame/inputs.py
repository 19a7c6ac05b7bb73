"""Sentence inputs: what a student typed, made safe to run, with a message when it was changed."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from encoder_core.model.tokenizer import clean_text

from .params import Param
from .state import ensure_valid


def usable_sentence(text: str, default: str) -> str:
    """The text to run. Empty or whitespace-only input falls back to the default example."""
    if not clean_text(text or "").strip():
        st.info(f"The sentence is empty, so the lesson shows the example instead: “{default}”.")
        return default
    return text


def report_encoding(enc, max_positions: int) -> None:
    """Say what the tokenizer did: words it does not know, tokens cut to fit."""
    if enc.truncated:
        st.warning(
            f"The input was longer than the model's {max_positions} positions: "
            f"{enc.truncated} token(s) were cut from the end."
        )
    # An Encoding or a result that carries one's truncated / unknown (/ split_words, where pieces can occur).
    splits = getattr(enc, "split_words", ())
    if splits:
        shown = "; ".join(f"{word} → {' '.join(pieces)}" for word, pieces in splits[:8])
        more = f" (and {len(splits) - 8} more)" if len(splits) > 8 else ""
        st.caption(
            f"Split into word pieces, each a token of its own (## marks a piece that continues a word): {shown}{more}"
        )
    if enc.unknown:
        shown = ", ".join(sorted(set(enc.unknown))[:12])
        st.caption(
            f"Not in this model's vocabulary, so it sees [UNK], the one token for everything it cannot "
            f"represent, for: {shown}"
        )


def show_notes(notes) -> None:
    """(level, text) pairs from a view, each as st.info / st.warning / ..., the text shown literally."""
    from .quiz_widget import escape_md

    for level, text in notes:
        getattr(st, level)(escape_md(text))


def note_long_text(params, labels: dict[str, str]) -> None:
    """Say so when typed text is longer than a control keeps (ensure_valid then cuts it)."""
    for p in params:
        value = st.session_state.get(p.key)
        if p.kind == "text" and isinstance(value, str) and len(value) > p.max_len:
            st.warning(
                f"“{labels.get(p.name, p.name)}” was {len(value):,} characters long: "
                f"the lesson keeps the first {p.max_len:,}."
            )


def show_model(chosen) -> None:
    """Say which encoder the lesson runs on (a ui.models.LessonModel), and why, if it is not the one asked for."""
    if chosen.notice:
        st.warning(chosen.notice)
    weights = "trained weights" if chosen.trained else "random weights, so its patterns are not learned"
    st.caption(f"Running on {chosen.name} ({weights}). Choose the model in the sidebar.")


def narrow_layer_head(layer: Param, head: Param, n_layers: int, n_heads: int) -> None:
    """The layer and head as the chosen model has them. Their Params allow the largest model's range (a link
    may name MiniLM's layer 5, head 11); on a smaller model they are brought into its range, and the page
    says so. Call before the sliders exist."""
    before = (st.session_state[layer.key], st.session_state[head.key])
    ensure_valid([replace(layer, hi=n_layers - 1), replace(head, hi=n_heads - 1)])
    valid = int(st.session_state[layer.key]), int(st.session_state[head.key])
    # A slider whose range changed is a new widget to Streamlit, which would start it at its minimum:
    # writing the values back makes them the ones the new sliders show.
    st.session_state[layer.key], st.session_state[head.key] = valid
    if valid != before:
        st.info(
            f"This model has {n_layers} layers and {n_heads} heads per layer, "
            f"so layer {before[0]}, head {before[1]} became layer {valid[0]}, head {valid[1]}."
        )
