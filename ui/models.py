"""Models shared by every session, built once per server process.

st.cache_resource hands the SAME object to every session: pages only read these
(eval mode, under torch.inference_mode) and never train, edit or change their mode.
"""

from __future__ import annotations

import streamlit as st
import torch

from encoder_core import WordTokenizer, build_encoder, preset

# A random model with BERT's init (std 0.02) attends almost uniformly; a larger std
# gives the seeded teaching model sharper, readable attention patterns.
TEACHING_INIT_STD = 0.2
MAX_SEED = 10_000


@st.cache_resource(show_spinner=False)
def small_model(seed: int):
    torch.set_num_threads(1)  # many small requests: one thread each serves a class better
    return build_encoder(preset("small"), seed=seed, init_std=TEACHING_INIT_STD)


@st.cache_resource(show_spinner=False)
def word_tokenizer() -> WordTokenizer:
    return WordTokenizer()
