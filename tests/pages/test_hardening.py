"""Hostile and clumsy input on every page: never an exception; shared models never change."""

from __future__ import annotations

import hashlib

import pytest
import torch

from encoder_core.lessons import LESSON_IDS
from tests.apptest_helpers import open_page

HOSTILE = [
    "",
    "   \t  ",
    "the cat " * 1250,  # 10,000 characters
    "the 🐈 sat on the 🧶 😀",
    "الْقِطُّ جَلَسَ عَلَى الحَصِيرِ",  # right-to-left
    "the\u200bcat\u200c sat\u200d on\ufeff the mat",  # zero-width characters
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[MASK] [PAD] [CLS] [SEP] [UNK]",
    "the cat\x00\x07\x1b[31m sat\r\non the mat",  # control characters
    "&amp; &lt;b&gt; ** _ ` $x$ | # >",
]


PAGES = [*LESSON_IDS, "quiz"]  # every page in the navigation but home


def text_widgets(at):
    return list(at.text_input) + list(at.text_area)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_text_input_survives_hostile_text(page):
    at = open_page(page, timeout=120)
    assert not at.exception, at.exception
    n_inputs = len(text_widgets(at))
    for text in HOSTILE:
        for i in range(n_inputs):
            widgets = text_widgets(at)
            if i < len(widgets):
                widgets[i].set_value(text)
        at.run()
        assert not at.exception, f"{page} with {text[:40]!r}: {at.exception}"


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_slider_and_number_at_its_bounds(page):
    at = open_page(page, timeout=120)
    for kind in ("slider", "number_input"):
        for i in range(len(getattr(at, kind))):
            for end in ("min", "max"):
                widget = getattr(at, kind)[i]
                bound = getattr(widget, end, None)
                if bound is None or widget.key in (None, "seed"):
                    continue
                widget.set_value(bound)
                at.run()
                assert not at.exception, f"{page} {kind} {widget.key}={bound}: {at.exception}"


def weights_digest(model: torch.nn.Module) -> str:
    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def shared_models() -> dict[str, torch.nn.Module]:
    """Every model the pages share through st.cache_resource (same process as AppTest)."""
    from ui.models import minilm, small_model, trained_mlm

    models = {"small": small_model(0)}
    mlm = trained_mlm().model
    if mlm is not None:
        models["trained MLM"] = mlm.model
    pre = minilm().model
    if pre is not None:
        models["MiniLM"] = pre.model
    return models


@pytest.mark.slow
def test_shared_model_is_never_changed_by_a_session():
    before = {k: (weights_digest(m), m.training) for k, m in shared_models().items()}
    for page in PAGES:
        at = open_page(page, timeout=120)
        for w in text_widgets(at)[:1]:
            w.set_value("the dog ran to the park")
        at.run()
        assert not at.exception
    after = {k: (weights_digest(m), m.training) for k, m in shared_models().items()}
    assert after == before
    assert all(not training for _, training in after.values())
