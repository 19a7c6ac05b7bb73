"""AppTests of the heads page: defaults, every control, model switch, missing model, bad input, links."""

import importlib.util
import os

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, figures
from streamlit.testing.v1 import AppTest

import ui.models as minilm_model
from encoder_core.head_patterns import label_heads
from encoder_core.lessons.heads import head_mechanics, run_encoder
from encoder_core.pretrained import INSTALL_HINT, PACKAGE, PretrainedUnavailable, load_minilm
from ui.views.heads import grid_gaps

pytestmark = pytest.mark.slow

HAVE_MINILM = importlib.util.find_spec(PACKAGE) is not None or os.environ.get("CI") == "true"
needs_minilm = pytest.mark.skipif(not HAVE_MINILM, reason=f"pretrained MiniLM not installed: {INSTALL_HINT}")


@pytest.fixture(scope="module")
def minilm():
    return load_minilm()


def open_page(page: str, query: dict | None = None) -> AppTest:
    return helpers.open_linked(page, query)


def no_exception(at):
    assert not at.exception, [e.value for e in at.exception]


def grid_block(fig, layer: int, head: int, T: int) -> np.ndarray:
    """Cut one head's thumbnail out of the mosaic (same layout as ui.views.heads.head_grid)."""
    z = np.asarray(fig["data"][0]["z"], dtype=np.float64)
    gap_x, gap_y = grid_gaps(len(fig["layout"]["xaxis"]["tickvals"]), T)
    r, c = layer * (T + gap_y) + gap_y, head * (T + gap_x)
    return z[r : r + T, c : c + T]


@needs_minilm
def test_defaults_show_minilm_numbers(minilm):
    at = open_page("heads")
    no_exception(at)
    figs = figures(at)
    for key in ("heads_q", "heads_concat", "heads_w_o", "heads_grid", "heads_chosen", "heads_layer_averages"):
        assert key in figs
    tok = minilm.tokenizer
    enc = tok.encode("the cat sat on the mat", "it was happy")
    run = run_encoder(minilm.model, enc)
    T = len(enc)
    # The chosen map (layer 0, head 2) and the grid's thumbnails are the model's weights.
    chosen = np.asarray(figs["heads_chosen"]["data"][0]["z"])
    assert np.allclose(chosen, run.attentions[0, 2].numpy(), atol=1e-6)
    assert np.allclose(grid_block(figs["heads_grid"], 0, 2, T), run.attentions[0, 2].numpy(), atol=1e-6)
    assert np.allclose(grid_block(figs["heads_grid"], 5, 11, T), run.attentions[5, 11].numpy(), atol=1e-6)
    labels = label_heads(run.attentions, run.tokens)
    captions = figs["heads_grid"]["data"][1]["text"]  # one caption per head, layer by layer
    assert captions[2] == f"prev {labels[2].mass:.2f}" and labels[2].mass > 0.9
    text = all_text(at)
    assert "Clark et al." in text
    assert f"{labels[2].mass:.2f}" in text  # the metric of the chosen head
    assert INSTALL_HINT not in text
    # The mechanics run on the small model, and the page says the identity holds.
    assert np.asarray(figs["heads_q"]["data"][0]["z"]).shape == (12, 16)  # the small model: d/h = 64/4
    assert "gives the block's own attention output: the largest difference is" in text
    # The sentence vectors: matrices symmetric with ones on the diagonal.
    sim = np.asarray(figs["heads_sim_mean"]["data"][0]["z"])
    assert sim.shape == (4, 4) and np.allclose(sim, sim.T, atol=1e-6) and np.allclose(np.diag(sim), 1, atol=1e-5)
    bank = figs["heads_bank"]["data"]
    assert bank[0]["y"][0] == pytest.approx(1.0, abs=1e-6) and bank[0]["y"][-1] < bank[1]["y"][-1]


@needs_minilm
def test_every_control_and_the_model_switch(minilm):
    at = open_page("heads")
    at.text_input(key="heads_sentence").input("unbelievably, the cat sat").run()
    no_exception(at)
    figs = figures(at)
    assert "heads_same_word" in figs and "heads_pieces_map" in figs
    pieces = {tuple(r) for r in _fragment_rows(at)}
    expected = minilm.tokenizer.split_words("unbelievably, the cat sat")
    assert {(w, " ".join(p)) for w, p in expected} <= pieces

    at.text_input(key="heads_sentence_b").input("").run()  # a single sentence
    no_exception(at)
    assert "[SEP] it" not in " ".join(figures(at)["heads_chosen"]["data"][0]["y"])

    at.slider(key="heads_layer").set_value(5).run()
    at.slider(key="heads_head").set_value(11).run()
    no_exception(at)
    enc = minilm.tokenizer.encode("unbelievably, the cat sat")
    run = run_encoder(minilm.model, enc)
    assert np.allclose(np.asarray(figures(at)["heads_chosen"]["data"][0]["z"]), run.attentions[5, 11], atol=1e-6)

    at.radio(key="heads_model").set_value("small").run()  # 2 layers, 4 heads: clamped, with a notice
    no_exception(at)
    assert (at.slider(key="heads_layer").value, at.slider(key="heads_head").value) == (1, 3)
    assert "became layer 1, head 3" in all_text(at)
    grid = figures(at)["heads_grid"]
    assert [t for t in grid["layout"]["xaxis"]["ticktext"]] == [f"head {h}" for h in range(4)]

    at.radio(key="heads_model").set_value("MiniLM").run()  # back: 1, 3 is valid, kept silently
    no_exception(at)
    assert (at.slider(key="heads_layer").value, at.slider(key="heads_head").value) == (1, 3)
    assert "became layer" not in all_text(at)

    lines = "\n".join(f"sentence number {i}" for i in range(10))
    at.text_area(key="heads_sentences").input(lines).run()
    no_exception(at)
    assert "10 sentences given; the first 8" in all_text(at)
    assert np.asarray(figures(at)["heads_sim_cls"]["data"][0]["z"]).shape == (8, 8)


def _fragment_rows(at):
    for df in at.dataframe:
        v = df.value
        if "pieces" in v.columns:
            return list(zip(v["word"], v["pieces"]))
    return []


@needs_minilm
def test_bad_input_is_explained(minilm):
    at = open_page("heads", query={"heads_sentence": "😀 🎉", "heads_sentence_b": ""})
    no_exception(at)
    text = all_text(at)
    assert "Every word became [UNK]" in text
    assert ("😀", "[UNK]") in set(_fragment_rows(at))

    at.text_input(key="heads_sentence").input("   ").run()  # empty: the example is used
    no_exception(at)
    assert "the sentence is empty" in all_text(at).lower()

    at.text_input(key="heads_sentence").input("word " * 600).run()  # 602 pieces > 512 positions
    no_exception(at)
    text = all_text(at)
    assert "90 token(s) were cut" in text
    assert "The thumbnails show the first 40 of 512 tokens" in text

    at.text_area(key="heads_sentences").input("only one").run()
    no_exception(at)
    assert "at least two sentences" in all_text(at)


def test_missing_model_shows_how_to_install_and_runs_the_small_model(monkeypatch):
    def unavailable(*args, **kwargs):
        raise PretrainedUnavailable(f"the pretrained model is not installed; install it with: {INSTALL_HINT}")

    monkeypatch.setattr(minilm_model, "load_minilm", unavailable)
    minilm_model._load_minilm.clear()
    try:
        at = open_page("heads", query={"heads_layer": "4", "heads_head": "9"})
        no_exception(at)
        text = all_text(at)
        assert INSTALL_HINT in text
        assert at.radio(key="heads_model").value == "small" and at.radio(key="heads_model").disabled
        assert (at.slider(key="heads_layer").value, at.slider(key="heads_head").value) == (1, 3)
        figs = figures(at)
        assert "heads_grid" in figs and "heads_sim_mean" not in figs
        # The small model's numbers: the mechanics figures come from head_mechanics on the seed-0 model.
        from ui.models import small_model, word_tokenizer

        enc = word_tokenizer().encode("the cat sat on the mat", "it was happy")
        mech = head_mechanics(small_model(0), enc, 1, 3)
        assert np.allclose(np.asarray(figs["heads_q"]["data"][0]["z"]), mech.q.numpy(), atol=1e-6)
        assert np.allclose(np.asarray(figs["heads_chosen"]["data"][0]["z"]), mech.weights.numpy(), atol=1e-6)
        at.text_input(key="heads_sentence").input("a dog ran").run()
        no_exception(at)
    finally:
        minilm_model._load_minilm.clear()


@needs_minilm
def test_url_sets_every_control_and_bad_values_give_notices():
    query = {
        "heads_sentence": "a dog ran home",
        "heads_sentence_b": "it was late",
        "heads_model": "small",
        "heads_layer": "1",
        "heads_head": "3",
        "heads_sentences": "one cat\ntwo dogs\nthree birds",
    }
    at = open_page("heads", query=query)
    no_exception(at)
    assert at.text_input(key="heads_sentence").value == "a dog ran home"
    assert at.text_input(key="heads_sentence_b").value == "it was late"
    assert at.radio(key="heads_model").value == "small"
    assert (at.slider(key="heads_layer").value, at.slider(key="heads_head").value) == (1, 3)
    assert at.text_area(key="heads_sentences").value == "one cat\ntwo dogs\nthree birds"
    assert np.asarray(figures(at)["heads_sim_mean"]["data"][0]["z"]).shape == (3, 3)

    bad = {"heads_model": "gpt", "heads_layer": "seven", "heads_head": "99"}
    at = open_page("heads", query=bad)
    no_exception(at)
    text = all_text(at)
    assert "`heads_model=gpt` is not one of" in text
    assert "`heads_layer=seven` is not a number" in text
    assert "`heads_head=99` is outside" in text
    assert at.radio(key="heads_model").value == "MiniLM"
    assert (at.slider(key="heads_layer").value, at.slider(key="heads_head").value) == (0, 11)


def test_lecture_mode_shows_one_step():
    at = open_page("heads", query={"lecture": "1", "step": "3", "heads_model": "small"})
    no_exception(at)
    headings = [h.value for h in at.subheader]
    assert any("Step 4 of 7" in h and "What each head does" in h for h in headings), headings
    assert "Each head named by where its weight goes" in all_text(at)  # the step's takeaway
    assert set(figures(at)) == {"heads_layer_averages"}
