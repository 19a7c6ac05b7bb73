"""The lab's trained masked-language model, loaded once per server process, and the leakage
experiment's results, kept once per setting.

st.cache_resource hands the SAME model to every session: pages only read it (eval mode,
under torch.inference_mode) and never train, edit or change its mode. When the checkpoint
is missing or fails its check, the page gets None and the loader's message to show.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import streamlit as st
import torch

from encoder_core import leakage
from encoder_core.checkpoint import DEFAULT_DIR, CheckpointError, load_small_mlm

# The committed checkpoint, unless the environment names another folder (a freshly trained one, say).
# A module setting, so a test can point it at a broken folder.
CHECKPOINT_DIR = os.environ.get("ENCODER_LAB_MLM_CHECKPOINT") or str(DEFAULT_DIR)


@dataclass
class TrainedMLM:
    model: object  # MaskedLanguageModel, eval mode, shared: read only
    tokenizer: object  # WordTokenizer with the checkpoint's vocabulary
    metadata: dict


@st.cache_resource(show_spinner="Loading the trained model...")
def _load(path: str) -> TrainedMLM:
    torch.set_num_threads(1)  # many small requests: one thread each serves a class better
    model, tokenizer, metadata = load_small_mlm(path)
    return TrainedMLM(model, tokenizer, dict(metadata or {}))


def trained_mlm() -> tuple[TrainedMLM | None, str | None]:
    """(the model, None), or (None, a message naming the file and how to rebuild it)."""
    try:
        return _load(CHECKPOINT_DIR), None
    except CheckpointError as err:  # not cached: the next run tries again, e.g. after a rebuild
        return None, str(err)


@st.cache_resource(show_spinner=False)
def _leakage_store() -> tuple[dict, threading.Lock]:
    """Finished leakage experiments by (steps, seed), shared by every session: a class trains each once."""
    return {}, threading.Lock()


def cached_leakage(steps: int, seed: int):
    """The finished experiment for these settings, or None if nobody has run it yet."""
    store, _ = _leakage_store()
    return store.get((int(steps), int(seed)))


def run_leakage(steps: int, seed: int, progress=None):
    """Train the two tiny models (fresh ones: no shared model is touched), once per setting.

    The lock makes a second click, from this or another session, wait and then reuse the result.
    """
    store, lock = _leakage_store()
    key = (int(steps), int(seed))
    with lock:
        if key not in store:
            store[key] = leakage.leakage_experiment(steps=key[0], seed=key[1], progress=progress)
        return store[key]


def seconds_per_step() -> float | None:
    """Measured on this server by the runs kept so far (both models together), or None before the first."""
    store, _ = _leakage_store()
    runs = list(store.values())
    if not runs:
        return None
    return sum(r.correct.seconds + r.leaky.seconds for r in runs) / sum(r.steps for r in runs)
