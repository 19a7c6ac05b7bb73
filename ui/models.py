"""Every model the lessons run on, built or loaded once per server process, and their cached runs.

st.cache_resource hands the SAME object to every session: pages only read these (eval mode,
under torch.inference_mode) and never train, edit or change their mode. Training (the leakage
experiment) always builds fresh models of its own. When a trained checkpoint or the pretrained
package is missing or fails its check, the loader returns (None, a message naming the fix) and
the page carries on without it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

import streamlit as st
import torch

from encoder_core import teaching_model
from encoder_core.lessons.heads import (
    AttentionRun,
    Similarities,
    WordVectorCosines,
    run_encoder,
    similarities,
    word_vector_cosines,
)
from encoder_core.model.model import param_count
from encoder_core.model.tokenizer import WordPieceTokenizer, english_tokenizer
from encoder_core.objectives import leakage
from encoder_core.pretrained.minilm import PretrainedEncoder, PretrainedUnavailable, load_minilm
from encoder_core.pretrained.minilm_mlm import DEFAULT_DIR as MINILM_MLM_DEFAULT_DIR
from encoder_core.pretrained.minilm_mlm import load_minilm_mlm
from encoder_core.training.checkpoint import DEFAULT_DIR, CheckpointError, load_small_mlm


def _one_thread() -> None:
    torch.set_num_threads(1)  # many small requests: one thread each serves a class better


# ---- the seeded small model ---------------------------------------------------------------


# Each holds a 30,522 x 64 embedding table (8 MB): a few seeds per process are plenty.
@st.cache_resource(show_spinner=False, max_entries=8)
def small_model(seed: int, norm: str = "post"):
    """The seeded teaching model (post-norm unless asked otherwise). Same seed, same weights."""
    _one_thread()
    return teaching_model(seed, norm)


# A walk holds every stage of one layer for one sentence, (T, 64) to (T, 256) each: about 77 kB for a sentence
# of 15 tokens, 2.6 MB for 512. 32 kept: 2.5 MB for a class's short sentences, 84 MB at most.
@st.cache_resource(show_spinner=False, max_entries=32)
def block_walk(seed: int, norm: str, ids: tuple[int, ...], segments: tuple[int, ...], layer: int):
    """The block lesson's walk through the embeddings and one layer of the seeded small model, computed once per
    process for every student on the same sentence and settings. Shared, read only: its tensors were made under
    torch.inference_mode, so an in-place change outside it raises instead of changing what others see."""
    from encoder_core.lessons import block

    return block.walk_block(small_model(seed, norm), list(ids), list(segments), layer)


# Small results (a few floats per token): cache_data's copies cost nothing here.
@st.cache_data(show_spinner=False, max_entries=64)
def append_reuse(_model, key: tuple, new_id: int):
    """Trade-offs' one token appended to the sentence, both ways (encoder_core.lessons.tradeoffs.append_one_token),
    once per process for every student on the same model, sentence and token. key: (the sidebar's model, its seed,
    the sentence's ids), which _model follows from."""
    from encoder_core.lessons import tradeoffs

    return tradeoffs.append_one_token(_model, key[-1], new_id)


def word_tokenizer() -> WordPieceTokenizer:
    """The small models' tokenizer: BERT's uncased English WordPiece vocabulary (one per process)."""
    return english_tokenizer()


class Loaded(NamedTuple):
    """What a model loader that can fail hands a page, one shape for all of them: the model (None when it could
    not be loaded), why not, and what stands in for the choice (said on the page), if anything."""

    model: Any
    error: str | None = None
    notice: str | None = None


# ---- the lab's trained masked-language model ----------------------------------------------

# The committed checkpoint, unless the environment names another folder (a freshly trained one, say).
# A module setting, so a test can point it at a broken folder.
CHECKPOINT_DIR = os.environ.get("ENCODER_LAB_MLM_CHECKPOINT") or str(DEFAULT_DIR)


@dataclass
class TrainedMLM:
    model: object  # MaskedLanguageModel, eval mode, shared: read only
    tokenizer: object  # WordPieceTokenizer with the checkpoint's vocabulary
    metadata: dict
    name: str = "the lab's trained MLM"  # how a sentence on the page names it
    choice: str = "mlm"  # the sidebar's name for the encoder under the head

    @cached_property
    def parameters(self) -> int:
        """Every number of the model with its head, a shared tensor counted once."""
        return param_count(self.model)


@st.cache_resource(show_spinner="Loading the trained model...")
def _load_trained(path: str) -> TrainedMLM:
    _one_thread()
    model, tokenizer, metadata = load_small_mlm(path)
    return TrainedMLM(model, tokenizer, dict(metadata or {}))


def trained_mlm() -> Loaded:
    """Loaded(the model), or Loaded(None, a message naming the file and how to rebuild it)."""
    try:
        return Loaded(_load_trained(CHECKPOINT_DIR))
    except CheckpointError as err:  # not cached: the next run tries again, e.g. after a rebuild
        return Loaded(None, str(err))


# ---- the leakage experiment: two fresh tiny models trained once per setting ---------------


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


# ---- all-MiniLM-L6-v2, pretrained ----------------------------------------------------------


@st.cache_resource(show_spinner="Loading all-MiniLM-L6-v2 ...")
def _load_minilm() -> tuple[PretrainedEncoder | None, str | None]:
    _one_thread()
    try:
        return load_minilm(), None
    except PretrainedUnavailable as err:
        return None, str(err)


def minilm() -> Loaded:
    """Loaded(the model), or Loaded(None, why it cannot be used, with the install command)."""
    return Loaded(*_load_minilm())


# A 512-token run keeps 6 x 12 x 512 x 512 attention weights (75 MB): keep few runs, shared.
@st.cache_resource(show_spinner=False, max_entries=16)
def minilm_run(text_a: str, text_b: str | None) -> AttentionRun:
    pre = minilm().model
    enc = pre.tokenizer.encode(text_a, text_b, max_length=pre.config.max_positions, truncate=True)
    return run_encoder(pre.model, enc)


@st.cache_data(show_spinner=False, max_entries=32)
def minilm_similarities(texts: tuple[str, ...]) -> Similarities:
    pre = minilm().model
    return similarities(pre, list(texts))


@st.cache_data(show_spinner=False, max_entries=8)
def minilm_word_cosines(sentence_a: str, sentence_b: str, word: str) -> WordVectorCosines:
    pre = minilm().model
    return word_vector_cosines(pre.model, pre.tokenizer, sentence_a, sentence_b, word)


MINILM_MLM_DIR = str(MINILM_MLM_DEFAULT_DIR)  # a module setting, so a test can point it at a broken folder


@st.cache_resource(show_spinner="Loading all-MiniLM-L6-v2 with the lab's MLM head ...")
def _load_minilm_mlm(path: str) -> TrainedMLM:
    pre, error, _ = minilm()
    if pre is None:
        raise PretrainedUnavailable(error)
    model, tokenizer, metadata = load_minilm_mlm(path, pre)  # shares pre's frozen layers
    return TrainedMLM(model, tokenizer, metadata, "all-MiniLM-L6-v2 with the lab's MLM head", "minilm")


def masked_lm(choice: str) -> Loaded:
    """The model with an MLM head for the sidebar's choice: Loaded(model, load error, notice).

    MiniLM picked: MiniLM under the lab's head (or, with a notice saying why, the small MLM when that
    cannot load). Otherwise the lab's small trained MLM: the seeded small model has no head.
    """
    notice = None
    if choice == "minilm":
        try:
            return Loaded(_load_minilm_mlm(MINILM_MLM_DIR))
        except (CheckpointError, PretrainedUnavailable) as err:  # not cached: the next run tries again
            notice = f"all-MiniLM-L6-v2's MLM head could not be loaded, so this lesson runs on the lab's MLM. {err}"
    trained, error, _ = trained_mlm()
    return Loaded(trained, error, notice)


# ---- the sidebar's choice, as one object a lesson runs on ----------------------------------


@dataclass(frozen=True)
class LessonModel:
    """The encoder a lesson runs on, its tokenizer, and how the page names it."""

    choice: str  # what was used: "small", "mlm" or "minilm" (the small model when the choice is unavailable)
    encoder: object  # encoder_core Encoder, eval mode, shared: read only
    tokenizer: object  # WordPieceTokenizer, with encode / pad / decode
    name: str  # how a sentence on the page names it
    trained: bool  # False: random weights, so patterns are accidents of initialisation
    notice: str | None = None  # why the sidebar's choice could not be used, if it could not


def lesson_model(choice: str, seed: int) -> LessonModel:
    """The model the sidebar asks for; the seeded small model, with a notice, when that one cannot load."""
    if choice == "mlm":
        trained, error, _ = trained_mlm()
        if trained is not None:
            return LessonModel("mlm", trained.model.bert, trained.tokenizer, "the lab's trained MLM", True)
        notice = f"The lab's trained model could not be loaded, so this lesson runs on the small seeded model. {error}"
    elif choice == "minilm":
        pre, error, _ = minilm()
        if pre is not None:
            return LessonModel("minilm", pre.model, pre.tokenizer, "all-MiniLM-L6-v2", True)
        notice = f"all-MiniLM-L6-v2 is not available, so this lesson runs on the small seeded model. {error}"
    else:
        notice = None
    return LessonModel(
        "small", small_model(seed), word_tokenizer(), f"the small seeded model (seed {seed})", False, notice
    )


def trained_lesson_model(chosen: LessonModel) -> LessonModel | None:
    """A trained encoder for a question whose answer should reflect learning: the sidebar's model when it is
    trained, else the lab's trained MLM (None when that cannot load either)."""
    if chosen.trained:
        return chosen
    trained = trained_mlm().model
    if trained is None:
        return None
    return LessonModel("mlm", trained.model.bert, trained.tokenizer, trained.name, True)


# ---- the outputs lesson: fine-tuning runs, once per setting, and MiniLM's pooling ---------

FINE_TUNE_KEEP = 24  # finished runs kept; each holds its own copy of the 8 MB model


@st.cache_resource(show_spinner=False)
def _fine_tune_store() -> tuple[dict, threading.Lock]:
    """Finished fine-tuning runs by their settings, shared by every session: a class trains each once."""
    return {}, threading.Lock()


def cached_fine_tune(task: str, start: str, steps: int, seed: int, pooling: str = "cls"):
    """The finished run for these settings, or None if nobody has run it yet."""
    store, _ = _fine_tune_store()
    return store.get((task, start, int(steps), int(seed), pooling))


def run_fine_tune(task: str, start: str, steps: int, seed: int, pooling: str = "cls", progress=None):
    """Fine-tune on the lab's MLM (a copy: the shared model is only read), once per setting.

    The lock lets one run train at a time on the server; a second click, from any session, waits and
    reuses the result. A run stopped half-way (the student left the page) stores nothing.
    """
    from encoder_core.finetune.tasks import fine_tune

    store, lock = _fine_tune_store()
    key = (task, start, int(steps), int(seed), pooling)
    with lock:
        if key not in store:
            trained, error, _ = trained_mlm()
            if trained is None:
                raise CheckpointError(error)
            store[key] = fine_tune(
                trained.model.bert, trained.tokenizer, task, start, steps=key[2], seed=key[3], pooling=pooling,
                progress=progress,
            )  # fmt: skip
            while len(store) > FINE_TUNE_KEEP:
                store.pop(next(iter(store)))  # the oldest first
        return store[key]


@st.cache_resource(show_spinner="Comparing [CLS] and mean pooling on all-MiniLM-L6-v2 ...")
def minilm_pooling_ranking():
    """[CLS] against mean pooling on the lesson's paraphrase pairs (None when MiniLM is unavailable)."""
    from encoder_core.lessons.outputs import pooling_ranking

    pre = minilm().model
    return pooling_ranking(pre) if pre is not None else None


@st.cache_data(show_spinner=False, max_entries=32)
def minilm_closest(texts: tuple[str, ...]):
    """Which of the lesson's sentences is closest to the first of the student's texts that allows a fair
    question (encoder_core.lessons.outputs.closest_for_any); None when none does or MiniLM is unavailable."""
    from encoder_core.lessons.outputs import closest_for_any

    pre = minilm().model
    return closest_for_any(pre, texts) if pre is not None else None


# ---- the "Looking inside" lesson: its runs per sentence, and the fixed set's scores once per setting ----


def _inside_model(choice: str):
    trained, _, _ = masked_lm(choice)
    return trained


def _cloze(tokenizer, ids: tuple[int, ...], position: int):
    from encoder_core.lessons.inside import Cloze

    return Cloze("", list(ids), tokenizer.decode(list(ids)), position, [])


@st.cache_data(show_spinner=False, max_entries=64)
def inside_knockouts(choice: str, ids: tuple[int, ...], position: int):
    """Every head and every token knocked out on this sentence, on the MLM the sidebar's choice gives."""
    from encoder_core.lessons.inside import knockouts

    trained = _inside_model(choice)
    return knockouts(trained.model, trained.tokenizer, _cloze(trained.tokenizer, ids, position))


@st.cache_data(show_spinner=False, max_entries=64)
def inside_explanations(choice: str, ids: tuple[int, ...], position: int, answer: int, baseline: str, steps: int):
    from encoder_core.lessons.inside import explanations

    trained = _inside_model(choice)
    cloze = _cloze(trained.tokenizer, ids, position)
    return explanations(trained.model, trained.tokenizer, cloze, answer, baseline, steps)


@st.cache_data(show_spinner=False, max_entries=64)
def inside_lens_and_heads(choice: str, ids: tuple[int, ...], position: int):
    """The logit lens, and every layer's attention (L, H, T, T) for the head question's candidates."""
    from encoder_core.lessons.inside import attention_maps, logit_lens

    trained = _inside_model(choice)
    cloze = _cloze(trained.tokenizer, ids, position)
    return logit_lens(trained.model, trained.tokenizer, cloze), attention_maps(trained.model, cloze)


@st.cache_resource(show_spinner=False)
def _inside_sweep_store() -> tuple[dict, threading.Lock]:
    """Finished sweeps over the fixed sentences by (model, baseline, steps), shared by every session."""
    return {}, threading.Lock()


def cached_inside_sweep(choice: str, baseline: str, steps: int):
    store, _ = _inside_sweep_store()
    return store.get((_inside_model(choice).choice, baseline, int(steps)))


def run_inside_sweep(choice: str, baseline: str, steps: int, progress=None):
    """Score every explanation on the fixed sentences, once per setting on this server (a second click waits)."""
    from encoder_core.lessons.inside import CLOZE_SENTENCES, sweep

    trained = _inside_model(choice)
    store, lock = _inside_sweep_store()
    key = (trained.choice, baseline, int(steps))
    with lock:
        if key not in store:
            store[key] = sweep(trained.model, trained.tokenizer, CLOZE_SENTENCES, baseline, key[2], progress)
        return store[key]
