"""The block page in Streamlit's AppTest: numbers drawn == encoder_core's, every control and step, bad input, links."""

from __future__ import annotations

import apptest_helpers as helpers
import numpy as np
import pytest
from apptest_helpers import all_text, figures
from streamlit.testing.v1 import AppTest

from encoder_core import POST_NORM_STAGES, TEACHING_INIT_STD, WordTokenizer, build_encoder, preset
from encoder_core.lessons import block as core

DEFAULT = "the cat sat on the mat"
TOK = WordTokenizer()


def open_page(query: dict | None = None) -> AppTest:
    return helpers.open_linked("block", query)


def expected(sentence=DEFAULT, norm="post", seed=0, layer=0):
    model = build_encoder(preset("small", norm=norm), seed=seed, init_std=TEACHING_INIT_STD)
    enc = TOK.encode(sentence, max_length=model.config.max_positions, truncate=True)
    return core.walk_block(model, enc.ids, enc.segments, layer), enc


def z(fig) -> np.ndarray:
    return np.asarray(fig["data"][0]["z"], dtype=np.float64)


def ys(fig) -> list[np.ndarray]:
    return [np.asarray(trace["y"], dtype=np.float64) for trace in fig["data"]]


def equivalence_shown(at) -> float:
    [value] = [m.value for m in at.metric if m.label.startswith("Largest |ours")]
    return float(value)


def assert_stage_drawn(at, walk, step: str) -> None:
    figs = figures(at)
    np.testing.assert_array_equal(z(figs["stage_tensor"]), walk.trace[step].double().numpy())
    stats = walk.stats[step]
    for drawn, want in zip(ys(figs["stage_stats"]), (stats.mean, stats.std, stats.l2)):
        np.testing.assert_allclose(drawn, want.double().numpy(), rtol=0, atol=1e-6)
    np.testing.assert_allclose(ys(figs["stage_profile"])[0], core.mean_norm_per_stage(walk), rtol=1e-6)
    assert any(core.STAGE_FORMULAS[walk.norm][step] in el.value for el in at.latex)
    src = core.stage_source(step, walk.norm)
    assert "\n".join(src.lines) in [el.value for el in at.code]
    assert f"line {src.first_line}" in all_text(at)


def test_defaults_draw_encoder_core_numbers():
    at = open_page()
    assert not at.exception
    walk, enc = expected()
    figs = figures(at)
    parts = walk.embeddings
    for key, tensor in (
        ("emb_token", parts.token),
        ("emb_position", parts.position),
        ("emb_segment", parts.segment),
        ("emb_sum", parts.summed),
        ("emb_norm", parts.normed),
    ):
        np.testing.assert_array_equal(z(figs[key]), tensor.double().numpy())
    assert list(figs["emb_token"]["data"][0]["y"]) == [f"{i} {t}" for i, t in enumerate(enc.tokens)]
    assert_stage_drawn(at, walk, "input")
    # the deep stack: both placements, same seed, BERT's std, 12 blocks
    study = core.deep_stack_study(enc.ids, enc.segments, 12, 0, core.BERT_INIT_STD)
    post, pre = ys(figs["deep_residual"])
    np.testing.assert_allclose(post, study.post.residual_norms, rtol=1e-6)
    np.testing.assert_allclose(pre, study.pre.residual_norms, rtol=1e-6)
    gpost, gpre = ys(figs["deep_grad"])
    np.testing.assert_allclose(gpost, study.post.grad_norms, rtol=1e-5)
    np.testing.assert_allclose(gpre, study.pre.grad_norms, rtol=1e-5)
    # GELU vs ReLU counts, from the trace's ffn_hidden
    units = core.active_units(walk.trace["ffn_hidden"])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["GELU > 0"] == metrics["ReLU > 0"] == f"{units.gelu_positive:,}"
    assert metrics["ReLU = 0 exactly"] == f"{units.relu_zero:,}"
    # the PyTorch check, the cap's real refusal, the parameter table
    assert equivalence_shown(at) <= 1e-5
    text = all_text(at)
    assert "longer than max_positions=512" in text
    assert "share 39 parameter tensors, largest difference 0" in text
    table = next(df.value for df in at.dataframe if "counted from the modules" in df.value.columns)
    assert (table["counted from the modules"] == table["from the formula"]).all()
    assert 7_087_872 in table["counted from the modules"].tolist()


def test_every_step_of_both_placements():
    at = open_page()
    walk, _ = expected()
    for step in POST_NORM_STAGES[1:]:
        at.select_slider(key="block_step").set_value(step).run()
        assert not at.exception
        assert_stage_drawn(at, walk, step)
    at.radio(key="block_norm").set_value("pre").run()
    walk, _ = expected(norm="pre")
    assert at.select_slider(key="block_step").options[:3] == ["1. input x", "2. LayerNorm 1", "3. attention"]
    for step in ("norm_1", "attention", "residual_2"):  # the stages whose place or meaning differ
        at.select_slider(key="block_step").set_value(step).run()
        assert not at.exception
        assert_stage_drawn(at, walk, step)
    assert equivalence_shown(at) <= 1e-5


def test_every_other_control():
    at = open_page()
    at.text_input(key="block_sentence").input("a dog ran home").run()
    at.slider(key="block_layer").set_value(1).run()
    at.number_input(key="block_seed").set_value(5).run()
    at.select_slider(key="block_step").set_value("residual_1").run()
    assert not at.exception
    walk, enc = expected("a dog ran home", seed=5, layer=1)
    assert_stage_drawn(at, walk, "residual_1")
    assert equivalence_shown(at) <= 1e-5
    at.slider(key="block_depth").set_value(24).run()
    at.radio(key="block_init").set_value("width").run()
    assert not at.exception
    study = core.deep_stack_study(enc.ids, enc.segments, 24, 5, core.width_matched_std(64))
    post, pre = ys(figures(at)["deep_residual"])
    assert len(pre) == 25
    np.testing.assert_allclose(pre, study.pre.residual_norms, rtol=1e-6)
    np.testing.assert_allclose(post, study.post.residual_norms, rtol=1e-6)


def test_a_link_sets_every_control():
    query = {
        "block_sentence": "the bird flew",
        "block_layer": "1",
        "block_norm": "pre",
        "block_seed": "7",
        "block_step": "ffn_hidden",
        "block_depth": "20",
        "block_init": "width",
    }
    at = open_page(query)
    assert not at.exception
    assert at.text_input(key="block_sentence").value == "the bird flew"
    assert at.slider(key="block_layer").value == 1
    assert at.radio(key="block_norm").value == "pre"
    assert at.number_input(key="block_seed").value == 7
    assert at.select_slider(key="block_step").value == "ffn_hidden"
    assert at.slider(key="block_depth").value == 20
    assert at.radio(key="block_init").value == "width"
    walk, _ = expected("the bird flew", norm="pre", seed=7, layer=1)
    assert_stage_drawn(at, walk, "ffn_hidden")
    assert len(ys(figures(at)["deep_grad"])[0]) == 20


def test_malformed_link_values_give_a_notice():
    query = {
        "block_layer": "9",
        "block_norm": "sideways",
        "block_seed": "abc",
        "block_step": "<script>",
        "block_depth": "99",
        "block_init": "loud",
    }
    at = open_page(query)
    assert not at.exception
    notice = " ".join(w.value for w in at.warning)
    for key in query:
        assert f"`{key}=" in notice
    assert at.slider(key="block_layer").value == 1
    assert at.slider(key="block_depth").value == 24
    assert at.radio(key="block_norm").value == "post"
    assert at.select_slider(key="block_step").value == "input"
    assert at.number_input(key="block_seed").value == 0
    assert at.radio(key="block_init").value == "bert"


@pytest.mark.parametrize(
    ("typed", "message", "rows"),
    [
        ("   ", "The sentence is empty", len(TOK.encode(DEFAULT))),
        (". " * 700, "cut from the end", 512),
    ],
)
def test_bad_sentences_are_handled(typed, message, rows):
    at = open_page()
    at.text_input(key="block_sentence").input(typed).run()
    assert not at.exception
    assert message in all_text(at)
    assert z(figures(at)["stage_tensor"]).shape == (rows, 64)
    if rows == 512:
        assert "the first 64 of 512" in all_text(at)


def test_lecture_mode_steps_through_sections():
    at = open_page({"lecture": "1", "step": "2"})
    assert not at.exception
    takeaways = [i.value for i in at.info]
    assert any("Every intermediate tensor of one layer" in t for t in takeaways)
    assert set(figures(at)) == {"stage_tensor", "stage_stats", "stage_profile"}
    at.button(key="lecture_next").click().run()
    assert not at.exception
    assert set(figures(at)) == {"activations"}
