"""The MiniLM head's second stage: the everyday sentences it draws, and going on from a saved first stage."""

from __future__ import annotations

import pytest
import torch
from independent import damaged_copy

from encoder_core.data.ding import DingUnavailable, read_ding
from encoder_core.pretrained.minilm_mlm import (
    DEFAULT_DIR,
    WEIGHTS_FILE,
    everyday_texts,
    load_trained_part,
    new_minilm_mlm,
    trained_keys,
)
from encoder_core.training.checkpoint import CheckpointError
from encoder_core.training.everyday_probes import EVERYDAY_PROBES, probes_in
from encoder_core.training.files import file_sha256
from encoder_core.training.probes import PROBES
from tests.needs import missing


def test_the_everyday_draw_is_ding_without_any_probe():
    try:
        ding = read_ding()
    except DingUnavailable as err:
        missing("Ding (trans-de-en)", str(err))
    texts = everyday_texts()
    assert set(texts) <= set(ding) and len(texts) > 0.99 * len(ding)
    assert probes_in(texts, PROBES + EVERYDAY_PROBES) == []


def test_a_saved_first_stage_is_loaded_whole_and_checked(minilm, tmp_path, minilm_mlm):
    committed, _, meta = minilm_mlm
    model = new_minilm_mlm(minilm, 0)
    sha = load_trained_part(model, DEFAULT_DIR)
    assert sha == file_sha256(DEFAULT_DIR / WEIGHTS_FILE)
    for k in trained_keys(model, meta.get("frozen_layers", meta["settings"]["frozen_layers"])):
        assert torch.equal(model.state_dict()[k], committed.state_dict()[k]), k
    bad = damaged_copy(DEFAULT_DIR, tmp_path, WEIGHTS_FILE)
    with pytest.raises(CheckpointError, match=WEIGHTS_FILE):
        load_trained_part(new_minilm_mlm(minilm, 0), bad)
