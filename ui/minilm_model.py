"""The pretrained all-MiniLM-L6-v2, loaded once per server process, and its cached runs.

Like ui.models, everything returned here is shared by all sessions: pages only read it.
When the model package is missing or its files fail their checksum, minilm() returns
(None, message) and the page carries on with the small model.
"""

from __future__ import annotations

import streamlit as st
import torch

from encoder_core.lessons.heads import (
    AttentionRun,
    Similarities,
    WordVectorCosines,
    run_encoder,
    similarities,
    word_vector_cosines,
)
from encoder_core.pretrained import PretrainedEncoder, PretrainedUnavailable, load_minilm


@st.cache_resource(show_spinner="Loading all-MiniLM-L6-v2 ...")
def _load() -> tuple[PretrainedEncoder | None, str | None]:
    torch.set_num_threads(1)  # as ui.models: many small requests, one thread each
    try:
        return load_minilm(), None
    except PretrainedUnavailable as err:
        return None, str(err)


def minilm() -> tuple[PretrainedEncoder | None, str | None]:
    """(the model, None), or (None, why it cannot be used, with the install command)."""
    return _load()


# A 512-token run keeps 6 x 12 x 512 x 512 attention weights (75 MB): keep few runs, shared.
@st.cache_resource(show_spinner=False, max_entries=16)
def minilm_run(text_a: str, text_b: str | None) -> AttentionRun:
    pre, _ = minilm()
    enc = pre.tokenizer.encode(text_a, text_b, max_length=pre.config.max_positions, truncate=True)
    return run_encoder(pre.model, enc)


@st.cache_data(show_spinner=False, max_entries=32)
def minilm_similarities(texts: tuple[str, ...]) -> Similarities:
    pre, _ = minilm()
    return similarities(pre, list(texts))


@st.cache_data(show_spinner=False, max_entries=8)
def minilm_word_cosines(sentence_a: str, sentence_b: str, word: str) -> WordVectorCosines:
    pre, _ = minilm()
    return word_vector_cosines(pre.model, pre.tokenizer, sentence_a, sentence_b, word)
