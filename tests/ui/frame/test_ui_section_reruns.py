"""A section reruns alone (a Streamlit fragment) when only it is affected, and the page reruns when more is.

AppTest keeps, after a section's own rerun, only what that rerun sent: so "the title is not there" is the
check that the page above the section did not run again. The link must be exact either way."""

from urllib.parse import parse_qsl, urlsplit

import numpy as np
from apptest_helpers import commit_prediction, figures, open_linked, sidebar_link

from encoder_core.lessons.attention import compare_masks
from ui.models import lesson_model


def shared_link(at) -> dict:
    """The sidebar's "Share this view" link, as a dict of its query parameters."""
    return dict(parse_qsl(urlsplit(sidebar_link(at)).query, keep_blank_values=True))


def test_the_layer_slider_reruns_only_the_attention_section_and_the_link_follows():
    at = open_linked("attention", every_section=False)
    assert at.title and not at.exception
    before = figures(at)["attention_bidirectional"]["data"][0]["z"]
    at.slider(key="attention.layer").set_value(1).run()
    assert not at.exception
    assert not at.title  # the page above the section was not run again
    after = figures(at)["attention_bidirectional"]["data"][0]["z"]
    chosen = lesson_model("small", 0)
    ids = chosen.tokenizer.encode("the cat sat down").ids
    expected = compare_masks(chosen.encoder, ids, 1, 0).bidirectional
    assert not np.allclose(after, before)
    np.testing.assert_allclose(np.asarray(after, dtype=float), expected.numpy(), atol=1e-6)
    assert shared_link(at).get("layer") == "1"


def test_a_control_inside_a_section_writes_the_link():
    # (AppTest runs the whole page for a widget inside a fragment; the browser test checks that it is not.)
    at = open_linked("attention", {"step": "1"}, every_section=False)
    at.radio(key="attention.drop").set_value("sep").run()
    assert not at.exception
    assert shared_link(at).get("drop") == "sep"


def test_a_page_control_still_reruns_the_whole_page():
    at = open_linked("attention", every_section=False)
    at.text_input(key="attention.sentence").input("a dog ran").run()
    assert not at.exception and at.title
    assert shared_link(at).get("sentence") == "a dog ran"


def test_a_committed_prediction_reruns_the_page_so_the_sidebar_counts_it():
    at = open_linked("attention", every_section=False, skip=False)
    at = commit_prediction(at, "attention-rows", guess="the first row ([CLS])")
    assert not at.exception and at.title  # the whole page ran: the sidebar's record is drawn anew
    record = " ".join(str(c.value) for c in at.sidebar.caption)
    assert "of 1 right" in record, record


def test_the_heads_sliders_rerun_only_the_open_section_and_it_reads_the_new_head():
    at = open_linked("heads", {"step": "3"}, every_section=False)
    assert at.title and not at.exception
    at.slider(key="heads.heads_head").set_value(1).run()
    assert not at.exception and not at.title
    assert any(str(m.label).startswith("Layer 0, head 1") for m in at.metric), [m.label for m in at.metric]
    assert shared_link(at).get("heads_head") == "1"


def test_the_padding_head_slider_reruns_only_its_attention_section():
    at = open_linked("padding", {"n_pads": "2"}, every_section=False)  # the pad count, answered (skipped) first
    at = at.button(key="section_next").click().run()
    before = figures(at)["padded_attention_masked"]["data"][0]["z"]
    at.slider(key="padding.head").set_value(1).run()
    assert not at.exception and not at.title
    assert not np.allclose(figures(at)["padded_attention_masked"]["data"][0]["z"], before)
    assert shared_link(at).get("head") == "1"
