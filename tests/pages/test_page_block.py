"""The block page in Streamlit's AppTest: numbers drawn == encoder_core's, every control and step, bad input, links."""

from __future__ import annotations

import math

import apptest_helpers as helpers
import numpy as np
import pytest
import torch
from apptest_helpers import all_text, commit_nothing, figures
from streamlit.testing.v1 import AppTest

from encoder_core import POST_NORM_STAGES, TEACHING_INIT_STD, build_encoder, english_tokenizer, preset
from encoder_core.lessons import block as core
from encoder_core.model import reference as reference_module
from ui.frame.predict import judge_number, tolerance_for
from ui.questions import block as questions
from ui.views import block as fb
from ui.views.figures import matrix_heatmap

DEFAULT = "the cat sat on the mat"
TOK = english_tokenizer()


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
    # the function that computed the stage (test_lesson_block_core.py checks it is the one that ran)
    code = core.stage_code(step, walk.norm)
    assert code.source in [el.value for el in at.code]
    assert f"{code.qualname} in {code.path}, line {code.first_line}" in all_text(at)


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
    [verdict] = [s.value for s in at.success if "float32 rounding" in s.value]
    assert verdict.endswith("within float32 rounding (tolerance 1e-5).")
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
        at.select_slider(key="block.block_step").set_value(step).run()
        assert not at.exception
        assert_stage_drawn(at, walk, step)
    at.radio(key="block.block_norm").set_value("pre").run()
    walk, _ = expected(norm="pre")
    assert at.select_slider(key="block.block_step").options[:3] == ["0. input x", "1. LayerNorm 1", "2. attention"]
    for step in ("norm_1", "attention", "residual_2"):  # the stages whose place or meaning differ
        at.select_slider(key="block.block_step").set_value(step).run()
        assert not at.exception
        assert_stage_drawn(at, walk, step)
    assert equivalence_shown(at) <= 1e-5


def test_every_other_control():
    at = open_page()
    at.text_input(key="block.block_sentence").input("a dog ran home").run()
    at.slider(key="block.block_layer").set_value(1).run()
    at.number_input(key="seed").set_value(5).run()  # the sidebar seed
    at.select_slider(key="block.block_step").set_value("residual_1").run()
    assert not at.exception
    walk, enc = expected("a dog ran home", seed=5, layer=1)
    assert_stage_drawn(at, walk, "residual_1")
    assert equivalence_shown(at) <= 1e-5
    at.slider(key="block.block_depth").set_value(24).run()
    at.radio(key="block.block_init").set_value("width").run()
    assert not at.exception
    helpers.skip_predictions(at)  # a new setting asks again
    study = core.deep_stack_study(enc.ids, enc.segments, 24, 5, core.width_matched_std(64))
    post, pre = ys(figures(at)["deep_residual"])
    assert len(pre) == 25
    np.testing.assert_allclose(pre, study.pre.residual_norms, rtol=1e-6)
    np.testing.assert_allclose(post, study.post.residual_norms, rtol=1e-6)


@pytest.mark.parametrize("choice", ["mlm", "minilm"])
def test_another_encoder_in_the_sidebar_is_said_and_the_small_seeded_model_still_drawn(choice):
    at = open_page({"model": choice, "seed": "3"})
    assert not at.exception
    [note] = [el.value for el in at.info if "whatever the sidebar's encoder" in el.value]
    assert note == fb.model_choice_note(choice, 3) and "seed 3" in note
    walk, _ = expected(seed=3)
    assert_stage_drawn(at, walk, "input")


def test_the_small_model_in_the_sidebar_needs_no_note():
    at = open_page()
    assert fb.model_choice_note("small", 0) is None
    assert not [el for el in at.info if "whatever the sidebar's encoder" in el.value]


# Every linked control but the sentence: its widget, a good link value and what the control then
# shows, a malformed value and the default the control keeps instead.
LINKED = {
    "block_layer": ("slider", "1", 1, "9", 1),
    "block_norm": ("radio", "pre", "pre", "sideways", "post"),
    "seed": ("number_input", "7", 7, "abc", 0),
    "block_step": ("select_slider", "ffn_hidden", "ffn_hidden", "<script>", "input"),
    "block_depth": ("slider", "20", 20, "99", 24),
    "block_init": ("radio", "width", "width", "loud", "bert"),
}


def widget_key(name: str) -> str:
    """The session key of a linked control: the lesson's own are namespaced, the sidebar's seed is not."""
    return name if name == "seed" else f"block.{name}"


def test_a_link_sets_every_control():
    at = open_page({"block_sentence": "the bird flew", **{key: good for key, (_, good, *_) in LINKED.items()}})
    assert not at.exception
    assert at.text_input(key="block.block_sentence").value == "the bird flew"
    for key, (widget, _, shown, _, _) in LINKED.items():
        assert getattr(at, widget)(key=widget_key(key)).value == shown, key
    walk, _ = expected("the bird flew", norm="pre", seed=7, layer=1)
    assert_stage_drawn(at, walk, "ffn_hidden")
    assert len(ys(figures(at)["deep_grad"])[0]) == 20


def test_malformed_link_values_give_a_notice():
    at = open_page({key: bad for key, (_, _, _, bad, _) in LINKED.items()})
    assert not at.exception
    notice = " ".join(w.value for w in at.warning)
    for key, (widget, _, _, _, default) in LINKED.items():
        assert f"`{key}=" in notice
        assert getattr(at, widget)(key=widget_key(key)).value == default, key


@pytest.mark.parametrize(
    ("typed", "message", "rows"),
    [
        ("   ", "The sentence is empty", len(TOK.encode(DEFAULT))),
        (". " * 700, "cut from the end", 512),
    ],
)
def test_bad_sentences_are_handled(typed, message, rows):
    at = open_page()
    helpers.skip_predictions(at.text_input(key="block.block_sentence").input(typed).run())  # asked again
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
    # the first stage is the embeddings' LayerNorm output: held back until step 0's prediction is answered
    assert set(figures(at)) == {"stage_profile", "stage_ffn_hidden"}
    assert fb.wait_note("Input", fb.HELD_NORM) in takeaways
    at.button(key="lecture_next").click().run()
    assert not at.exception
    assert not figures(at) and at.radio(key=f"_predict_guess_{FFN_TOKEN}")  # the trained FFN: asked first
    at.button(key="lecture_next").click().run()
    assert set(figures(at)) == {"activations"}


def test_a_failed_check_against_pytorch_is_shown_as_an_error(monkeypatch):
    original = reference_module.to_torch_layer

    def perturbed(block):
        layer = original(block)
        with torch.no_grad():
            layer.linear2.bias[0] += 0.5  # PyTorch's copy only: the two must now disagree by 0.5
        return layer

    monkeypatch.setattr(reference_module, "to_torch_layer", perturbed)
    at = open_page()
    assert not at.exception
    assert equivalence_shown(at) > 0.1
    [error] = [e.value for e in at.error]
    assert error.endswith("more than the 1e-5 tolerance.")
    assert not [s.value for s in at.success if "float32 rounding" in s.value]


# ---- the view's tables and figures: pure functions of the core results ---------------------


@pytest.fixture(scope="module")
def walk_and_tokens():
    walk, enc = expected()
    return walk, enc.tokens


def test_tensor_tables_hold_the_walks_numbers(walk_and_tokens):
    walk, tokens = walk_and_tokens
    token = fb.tensor_table(walk.embeddings.token, tokens)
    assert list(token.columns) == ["token"] + [f"f{j}" for j in range(64)]
    assert token["token"].tolist() == list(tokens)
    np.testing.assert_array_equal(token.iloc[:, 1:].to_numpy(), walk.embeddings.token.numpy())
    assert token["f0"].dtype == np.float32  # the CSV download shows the tensor's own digits
    hidden = fb.stage_table(walk, "ffn_hidden", tokens)
    assert list(hidden.columns)[1:3] == ["u0", "u1"] and hidden.shape == (len(tokens), 1 + 256)
    np.testing.assert_array_equal(hidden.iloc[:, 1:].to_numpy(), walk.trace["ffn_hidden"].numpy())
    assert list(fb.stage_table(walk, "norm_1", tokens).columns)[1] == "f0"
    tables = fb.embedding_tables(walk.embeddings, tokens)
    assert list(tables) == ["emb_token", "emb_position", "emb_segment", "emb_sum", "emb_norm"]
    np.testing.assert_array_equal(tables["emb_norm"].iloc[:, 1:].to_numpy(), walk.embeddings.normed.numpy())


def test_stats_and_profile_tables(walk_and_tokens):
    walk, tokens = walk_and_tokens
    stats = walk.stats["residual_1"]
    table = fb.stats_table(stats, tokens)
    assert list(table.columns) == ["token", "mean", "std", "L2 norm"]
    for column, values in (("mean", stats.mean), ("std", stats.std), ("L2 norm", stats.l2)):
        np.testing.assert_array_equal(table[column].to_numpy(), values.numpy())
    profile = fb.stage_profile_table(walk.stages, core.mean_norm_per_stage(walk))
    assert profile["stage"].tolist() == list(walk.stages)
    assert profile["mean L2 norm"].tolist() == [walk.stats[s].mean_l2 for s in walk.stages]
    assert fb.stage_labels(walk.stages)[:2] == ["input x", "attention"]


def test_activation_and_active_unit_tables(walk_and_tokens):
    walk, tokens = walk_and_tokens
    curves = core.activation_curves()
    table = fb.activation_table(curves)
    assert list(table.columns) == ["u", "GELU", "ReLU"] and len(table) == 161
    np.testing.assert_array_equal(table["GELU"].to_numpy(), curves.gelu.numpy())
    units = core.active_units(walk.trace["ffn_hidden"])
    active = fb.active_units_table(units, tokens)
    assert list(active.columns) == ["token", "active under GELU", "active under ReLU"]
    assert active["active under GELU"].tolist() == units.per_token_gelu_positive
    assert active["active under ReLU"].sum() == units.relu_positive


def test_position_tables_and_heatmaps():
    model = build_encoder(preset("small"), seed=0, init_std=TEACHING_INIT_STD)
    pos = core.position_tables(model, 64)
    sinusoid = fb.position_table(pos.sinusoid)
    assert list(sinusoid.columns)[:2] == ["f0", "f1"] and sinusoid.shape == (64, 64)
    np.testing.assert_array_equal(sinusoid.to_numpy(), pos.sinusoid.numpy())
    similarity = fb.similarity_table(pos.sinusoid_similarity)
    assert list(similarity.columns)[:2] == [0, 1]
    np.testing.assert_array_equal(similarity.to_numpy(), pos.sinusoid_similarity.numpy())
    # built on the shared matrix_heatmap: numbered rows, a fixed cosine scale, the position lesson's height
    fig = fb.sinusoid_similarity_heatmap(pos)
    title = "cosine similarity between sinusoid positions"
    same = matrix_heatmap(
        pos.sinusoid_similarity, None, title=title, x_title="position", y_title="position", zrange=(-1, 1), height=420
    )
    assert fig.to_plotly_json() == same.to_plotly_json()
    heat = fig.data[0]
    assert (heat.zmin, heat.zmax, heat.zmid, heat.y) == (-1, 1, 0, None)
    assert fig.layout.yaxis.title.text == "position" and fig.layout.height == 420
    assert heat.hovertemplate.startswith("position %{y}, position %{x}")
    waves = fb.sinusoid_heatmap(pos)
    assert waves.layout.title.text == "sinusoidal table, first 64 positions"
    assert waves.data[0].zmax == float(np.abs(pos.sinusoid.numpy()).max())  # no zrange: fitted to the values
    assert fb.learned_similarity_heatmap(pos).data[0].zmin == -1


def test_embedding_alts_quote_the_core_numbers(walk_and_tokens):
    walk, tokens = walk_and_tokens
    parts = walk.embeddings
    sizes, normed = core.summarize_parts(parts), core.token_stats(parts.normed)
    alts = fb.embedding_alts(sizes, normed)
    assert alts["emb_token"] == (
        f"The word-embedding row of each token: {len(tokens)} tokens by 64 features, "
        f"largest magnitude {float(parts.token.abs().max()):.3f}."
    )
    assert f"{sizes['summed'].largest:.3f}" in alts["emb_sum"]
    assert f"standard deviation {float(normed.std.mean()):.4f}" in alts["emb_norm"]


def test_stage_notes_read_the_walk(walk_and_tokens):
    walk, _ = walk_and_tokens
    assert f"norm {walk.stats['norm_2'].mean_l2:.3f} ≈ √d" in fb.stage_note(walk, "norm_2")
    assert "from 64 to 256 features" in fb.stage_note(walk, "ffn_hidden")
    pre, _ = expected(norm="pre")
    assert f"mean norm {pre.stats['residual_2'].mean_l2:.3f} here (√d = 8.00)" in fb.stage_note(pre, "residual_2")
    assert all(fb.stage_note(w, s) for w in (walk, pre) for s in w.stages)


def _study(pre_grads: list[float]) -> core.DeepStackStudy:
    post = core.DeepStackRun("post", [8.0, 8.0, 8.0], [1.0, 2.0], 8.0)
    pre = core.DeepStackRun("pre", [8.0, 9.0, 10.0], pre_grads, 8.0)
    match = core.WeightMatch(39, 0.0, [], ["encoder.final_norm.weight", "encoder.final_norm.bias"])
    return core.DeepStackStudy(
        depth=2, n_tokens=6, n_tokens_given=70, d_model=64, init_std=0.02, seed=0, post=post, pre=pre, weights=match
    )


def test_deep_stack_tables_and_reading():
    study = _study([3.0, 4.0])
    residual, grad = fb.deep_stack_tables(study)
    assert list(residual.columns) == ["stage", "post-norm", "pre-norm"]
    assert residual["stage"].tolist() == ["embeddings", "after block 0", "after block 1"]  # blocks from 0
    assert residual["pre-norm"].tolist() == [8.0, 9.0, 10.0]
    assert list(grad.columns) == ["block", "post-norm", "pre-norm"]
    assert grad["post-norm"].tolist() == [1.0, 2.0] and grad["pre-norm"].tolist() == [3.0, 4.0]
    assert "(×1.25)" in fb.deep_stack_reading(study, width_scaled=False)
    assert "(here 8.000)" in fb.deep_stack_reading(study, width_scaled=False)  # not "between 8.000 and 8.000"
    assert fb.residual_alt(study).startswith("Post-norm: the stream stays at 8.000 after every block.")
    figure = fb.deep_stack_figure(study, "residual")
    assert list(figure.data[0].x) == ["embeddings", "after block 0", "after block 1"]
    assert figure.layout.yaxis.rangemode == "tozero"  # a drift of 1% drawn as 1%
    assert fb.deep_stack_figure(study, "grad").layout.yaxis.rangemode == "tozero"
    assert "the first 6 of 70" in fb.deep_stack_setup(study)
    stable = "no block's gradient explodes or vanishes"
    assert stable in fb.deep_stack_reading(study, width_scaled=False)
    assert stable not in fb.deep_stack_reading(_study([3.0, 40.0]), width_scaled=False)
    assert "encoder.final_norm.weight, encoder.final_norm.bias" in fb.same_weights_note(study.weights, 0)


def test_param_table_counts_from_the_modules():
    counts = {name: core.block_params(preset(name)) for name in ("small", "bert-base")}
    table = fb.param_table(counts)
    assert list(table.columns) == ["model", "part", "formula", "counted from the modules", "from the formula"]
    assert table["model"].tolist() == ["small"] * 4 + ["bert-base"] * 4
    whole = table[table["part"].str.startswith("whole block")]
    assert whole["counted from the modules"].tolist() == [counts["small"].total, counts["bert-base"].total]
    assert whole["from the formula"].tolist() == [c.total_formula for c in counts.values()]
    ffn = table[table["part"].str.startswith("FFN")]
    assert ffn["counted from the modules"].tolist() == [c.ffn for c in counts.values()]


def test_short_sci():
    assert fb.short_sci(1e-5) == "1e-5"
    assert fb.short_sci(3e-7) == "3e-7"
    assert fb.short_sci(0.01) == "1e-2"


# ---- a pasted text longer than the control keeps ----


def test_a_sentence_over_the_length_limit_is_cut_with_a_notice():
    at = open_page()
    long = "the cat sat on the mat " * 120  # 2,760 characters
    at.text_input(key="block.block_sentence").input(long).run()
    assert not at.exception
    assert f"“Sentence” was {len(long):,} characters long: the lesson keeps the first 2,000." in all_text(at)
    assert at.text_input(key="block.block_sentence").value == long[:2000]
    helpers.skip_predictions(at)  # a new sentence: asked again
    walk, _ = expected(long[:2000])
    assert_stage_drawn(at, walk, "input")


# ---- predict, then see: the questions the lesson asks before it shows ----

NORM_STD, FFN_SHAPE, DEEP, FFN_TOKEN = "block-norm-std", "block-ffn-shape", "block-deep-growth", "block-ffn-token"


def open_asking(query: dict | None = None) -> AppTest:
    """The page as a student first meets it: every section, no prediction committed."""
    return helpers.open_linked("block", query, skip=False)


commit = helpers.commit_prediction  # choose or type the guess, then commit


REVEALS = {"emb_norm", "stage_ffn_hidden", "deep_residual", "deep_grad", "ffn_token_norms"}


def test_before_a_commit_no_reveal_is_drawn():
    at = open_asking()
    assert not at.exception
    figs = figures(at)
    assert {"emb_token", "emb_position", "emb_segment", "emb_sum", "stage_profile"} <= set(figs)  # the worked half
    assert not REVEALS & set(figs)
    assert "stage_tensor" not in figs  # the first stage's input is the embeddings' LayerNorm output: held back
    text = all_text(at)
    for said in ("After the LayerNorm, the row of", "u is 8 × 256", "post-norm stream is ×"):
        assert said not in text
    assert at.number_input(key=f"_predict_guess_{NORM_STD}").value is None
    asked = [r.key for r in at.radio if str(r.key).startswith("_predict_guess_")]
    assert asked[0] == f"_predict_guess_{FFN_SHAPE}" and asked[-1] == f"_predict_guess_{DEEP}"


def test_the_layernorm_prediction_is_scored_against_the_models_row():
    walk, enc = expected()
    summed, normed = walk.embeddings.summed[1].double(), walk.embeddings.normed[1].double()
    std_before = float(((summed - summed.mean()) ** 2).mean().sqrt())
    std_after = float(((normed - normed.mean()) ** 2).mean().sqrt())  # by hand: population std of row 1
    at = open_asking()
    prompt = at.number_input(key=f"_predict_guess_{NORM_STD}").label
    assert f"“{enc.tokens[1]}” (position 1) has a standard deviation of {std_before:.3f}" in prompt
    at = commit(at, NORM_STD, 1.0)
    assert not at.exception
    assert any(s.value.startswith("Right: within") for s in at.success)
    text = all_text(at)
    assert f"standard deviation {std_after:.3f} (before it: {std_before:.3f})" in text
    assert "γ = 1 and β = 0 here, as initialised" in text
    np.testing.assert_array_equal(z(figures(at)["emb_norm"]), walk.embeddings.normed.double().numpy())

    at = commit(open_asking(), NORM_STD, round(std_before, 2))  # the spread before: kept, not divided out
    assert "too small" in " ".join(e.value for e in at.error)
    assert "does not keep or shrink a row's spread" in all_text(at)
    at = commit(open_asking(), NORM_STD, 8.0)  # sqrt(d): the row's length
    assert "√d is the row's length, not its spread" in all_text(at)


def test_the_ffn_shape_prediction_reveals_the_hidden_layer():
    walk, enc = expected()
    rows, cols = walk.trace["ffn_hidden"].shape
    assert (rows, cols) == (len(enc), 4 * walk.d_model)
    at = commit(open_asking(), FFN_SHAPE, f"T × 4d = ({rows}, {cols})")
    assert not at.exception
    assert "Right." in [s.value for s in at.success]
    assert f"u is {rows} × {cols}: one row per token" in all_text(at)
    np.testing.assert_array_equal(z(figures(at)["stage_ffn_hidden"]), walk.trace["ffn_hidden"].double().numpy())

    at = commit(open_asking(), FFN_SHAPE, f"T × T = ({rows}, {rows})")
    assert f"the model says “T × 4d = ({rows}, {cols})”" in " ".join(e.value for e in at.error)
    assert "A T × T grid is attention's, token against token" in all_text(at)


def test_the_deep_stack_prediction_follows_the_initial_weights():
    _, enc = expected()
    at = commit(open_asking(), DEEP, "pre-norm's")
    assert not at.exception
    study = core.deep_stack_study(enc.ids, enc.segments, 12, 0, core.BERT_INIT_STD)
    grown = (study.pre.residual_norms[-1] / study.pre.residual_norms[0], study.post.residual_norms[-1] / 8.0)
    assert grown[0] < 1.1 and abs(grown[1] - 1) < 1e-3  # measured here: neither stream grew
    assert "the model says “neither”" in " ".join(e.value for e in at.error)
    loud, bert = 0.02 * math.sqrt(64), 0.02 * math.sqrt(768)  # std × √d of these blocks and of BERT-base's
    text = all_text(at)
    said = f"std × √d = {loud:.2f}, {bert / loud:.1f} times quieter than BERT-base's {bert:.2f}"
    assert said in text and f"grow it only ×{grown[0]:.2f}" in text  # the feedback's facts ...
    assert f"{loud:.2f} for these blocks" in text and f"{bert:.2f} for BERT-base's" in text  # ... the reading's
    assert f"the pre-norm stream ×{grown[0]:.2f}" in text
    np.testing.assert_allclose(ys(figures(at)["deep_residual"])[1], study.pre.residual_norms, rtol=1e-6)

    at.radio(key="block.block_init").set_value("width").run()  # a new setting: asked again
    assert "deep_residual" not in figures(at)
    at = commit(at, DEEP, "pre-norm's")
    loud = core.deep_stack_study(enc.ids, enc.segments, 12, 0, core.width_matched_std(64))
    assert loud.pre.residual_norms[-1] / loud.pre.residual_norms[0] >= 1.1
    assert "Right." in [s.value for s in at.success]


def test_a_new_sentence_asks_again_and_skip_reveals_without_a_score():
    at = commit(open_asking(), FFN_SHAPE, "T × 4d = (8, 256)")
    at = commit(at, NORM_STD, 1.0)
    assert {"stage_ffn_hidden", "emb_norm"} <= set(figures(at))
    at.text_input(key="block.block_sentence").input("a dog ran home").run()
    assert not REVEALS & set(figures(at))  # a new sentence: every question is back
    assert any(o.endswith("T × 4d = (6, 256)") for o in at.radio(key=f"_predict_guess_{FFN_SHAPE}").options)
    at = at.button(key=f"_predict_skip_{FFN_SHAPE}").click().run()
    assert "stage_ffn_hidden" in figures(at) and not at.error
    assert not [s for s in at.success if s.value.startswith("Right")]  # skipped: not scored
    assert "The model's answer: **T × 4d = (6, 256)**." in all_text(at)


@pytest.mark.parametrize("key", [NORM_STD, DEEP])
def test_a_commit_with_nothing_chosen_asks_for_an_answer_and_reveals_nothing(key):
    commit_nothing(open_asking(), key, REVEALS)


def test_the_questions_options_follow_the_cores_outcomes():
    study = _study([3.0, 4.0])
    growth = questions.deep_growth(study)
    assert [o.label for o in growth.options] == [questions.growth_options(study)[o].label for o in core.GROWTH_OUTCOMES]
    shape = questions.ffn_shape(5, 64, 256)
    assert [o.label.split(" = ")[1] for o in shape.options] == ["(5, 64)", "(5, 256)", "(5, 5)", "(64, 256)"]
    assert all(o.misconception for o in shape.options + growth.options)


# ---- nothing on the page answers a prediction before its commit; the feedback's facts; the quiz's idea ----

# The charts each prediction's reveal draws: none may be on the page before its commit.
EVIDENCE_CHARTS = {
    NORM_STD: {"emb_norm"},
    FFN_SHAPE: {"stage_ffn_hidden"},
    DEEP: {"deep_residual", "deep_grad"},
    FFN_TOKEN: {"ffn_token_norms"},
}


def evidence(minilm, sentence: str = DEFAULT) -> dict[str, list[str]]:
    """What would answer each prediction on this sentence, computed here from encoder_core."""
    walk, enc = expected(sentence)
    row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, 1)
    normed = core.token_stats(walk.embeddings.normed)
    T, d, d_ff = len(enc), walk.d_model, walk.d_ff
    study = core.deep_stack_study(enc.ids, enc.segments, 12, 0, core.BERT_INIT_STD)
    trained = core.ffn_norms_of(minilm.model, minilm.tokenizer, sentence, "all-MiniLM-L6-v2")
    choice = core.ffn_token_choice(trained.norms, trained.tokens)
    return {
        NORM_STD: [
            "standard deviation 1",  # a stage note's words
            "std line is flat",
            f"standard deviation {row.std_after:.3f}",  # the reveal's
            f"standard deviation {normed.mean_std:.4f}",  # the LayerNorm output's text alternative
        ],
        FFN_SHAPE: [
            f"[T, {d_ff}]",  # the stage heatmap's title
            f"u{d_ff - 1}",  # its table's last column
            f"from {d} to {d_ff} features",  # the stage note
            f"the {d_ff} units back",
            r"T \times 4d",  # the formula
            "(B, T, d_ff)",  # the stage's code
            "widened from d_model to d_ff",
            f"{T} tokens × {d_ff} units",  # the GELU counts
            f"d_ff={d_ff}",  # the parameter table
            f"u is {T} × {d_ff}",  # the reveal
        ],
        DEEP: [f"×{study.pre.growth:.2f}", "post-norm stream is ×"],
        FFN_TOKEN: ["adds its longest vector to", f"length {choice.norms[choice.best]:.2f}"],
    }


def open_every_panel(at: AppTest) -> AppTest:
    return helpers.open_numbers(at, *figures(at))


def assert_holds_none(at: AppTest, found: dict[str, list[str]], where: str) -> None:
    assert not at.exception, where
    text = helpers.page_evidence(at)
    for key, strings in found.items():
        for said in strings:
            assert said not in text, (where, key, said)
        assert not EVIDENCE_CHARTS[key] & set(figures(at)), (where, key)


def test_nothing_on_the_page_answers_a_prediction_before_its_commit(minilm):
    found = evidence(minilm)
    at = open_every_panel(open_asking())
    assert_holds_none(at, found, "every section")
    for step in ("norm_1", "norm_2", "ffn_hidden", "ffn_activated", "ffn_output"):  # the held stages
        at = open_every_panel(at.select_slider(key="block.block_step").set_value(step).run())
        assert_holds_none(at, found, f"every section, stage {step}")
        assert "stage_tensor" not in figures(at)
    # In tabs: a student may open a later tab before answering the question of an earlier one.
    at = helpers.open_linked("block", {"step": "0"}, every_section=False, skip=False)
    tabs = 0
    while True:
        assert_holds_none(open_every_panel(at), found, f"tab {tabs}")
        tabs += 1
        if not [b for b in at.button if b.key == "section_next"]:
            break
        at.button(key="section_next").click().run()
    assert tabs == 9


def test_each_reveal_shows_what_was_held_back(minilm):
    walk, enc = expected()
    T, d_ff = len(enc), walk.d_ff
    row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, 1)
    at = commit(open_asking(), NORM_STD, 1.0)
    assert {"emb_norm", "stage_tensor", "stage_stats"} <= set(figures(at))  # the input stage, drawn now
    assert f"standard deviation {row.std_after:.3f}" in all_text(at)
    assert "GELU > 0" not in [m.label for m in at.metric]  # the FFN's width: still held
    at = commit(at, FFN_SHAPE, f"T × 4d = ({T}, {d_ff})")
    text = helpers.page_evidence(at)
    for said in (f"u is {T} × {d_ff}", f"{T} tokens × {d_ff} units", f"d_ff={d_ff}"):
        assert said in text, said
    trained = core.ffn_norms_of(minilm.model, minilm.tokenizer, DEFAULT, "all-MiniLM-L6-v2")
    choice = core.ffn_token_choice(trained.norms, trained.tokens)
    at = commit(at, FFN_TOKEN, f"{choice.positions[0]} {trained.tokens[choice.positions[0]]}")
    assert "adds its longest vector to" in all_text(at) and "ffn_token_norms" in figures(at)


def test_the_layernorm_traps_are_judged_wrong_and_the_answer_right():
    walk, _ = expected()
    row = core.norm_row(walk.embeddings.summed, walk.embeddings.normed, 1)
    traps = core.norm_std_traps(row, walk.d_model)
    assert traps == pytest.approx({"length": math.sqrt(64), "kept": row.std_before})
    q = questions.layernorm_std("cat", 1, row.std_before, row.std_after, traps)
    tolerance = tolerance_for(q, row.std_after)
    assert tolerance == questions.NORM_STD_TOLERANCE and q.prompt.endswith("(Right within 10 %.)")
    assert judge_number(q, 1.0, row.std_after).right
    for name, value in traps.items():
        verdict = judge_number(q, value, row.std_after)
        assert not verdict.right and verdict.misconception == questions.NORM_TRAPS[name]


def test_the_trained_ffn_question_quotes_the_models_lengths(minilm):
    """Every wrong option's feedback quotes this sentence's FFN lengths, recomputed here from the trace."""
    for text in (DEFAULT, "a dog ran home", "birds migrate south in winter"):
        trained = core.ffn_norms_of(minilm.model, minilm.tokenizer, text, "all-MiniLM-L6-v2")
        choice = core.ffn_token_choice(trained.norms, trained.tokens)
        enc = minilm.tokenizer.encode(text)
        walk = core.walk_block(minilm.model, enc.ids, enc.segments, choice.layer)
        lengths = walk.trace["ffn_output"].double().norm(dim=-1)
        q = questions.ffn_token(choice, list(trained.tokens), "all-MiniLM-L6-v2", core.FFN_TOKEN_MARGIN)
        best = int(lengths[list(choice.positions)].argmax())
        assert choice.positions[best] == choice.best and f"layer {choice.layer}:" in q.prompt
        top = float(lengths[choice.best])
        said = {i: f"length {float(lengths[i]):.2f} to “{enc.tokens[i]}”, against {top:.2f}" for i in choice.positions}
        helpers.assert_token_options(q, choice.positions, enc.tokens, choice.best, said)


def test_the_trained_ffn_prediction_is_scored_and_its_chart_is_the_models(minilm):
    trained = core.ffn_norms_of(minilm.model, minilm.tokenizer, DEFAULT, "all-MiniLM-L6-v2")
    choice = core.ffn_token_choice(trained.norms, trained.tokens)
    right = f"{choice.best} {trained.tokens[choice.best]}"
    at = commit(open_asking(), FFN_TOKEN, right)
    assert "Right." in [s.value for s in at.success]
    np.testing.assert_allclose(ys(figures(at)["ffn_token_norms"])[0], choice.norms, rtol=1e-6)
    wrong = next(f"{i} {trained.tokens[i]}" for i in choice.positions if i != choice.best)
    at = commit(open_asking(), FFN_TOKEN, wrong)
    assert f"the model says “{right}”" in " ".join(e.value for e in at.error)
    assert "It reads each token's row alone" in all_text(at)


def test_each_prediction_names_a_generator_of_its_idea():
    from quiz_checks import assert_practised

    choice = core.FfnTokenChoice(1, 1, (), (1, 2, 3), 0, (0.0, 5.0, 1.0, 2.0, 0.0), (1, 2, 3))
    for q in (
        questions.layernorm_std("cat", 1, 0.3, 1.0, {}),
        questions.ffn_shape(5, 64, 256),
        questions.deep_growth(_study([3.0, 4.0])),
        questions.ffn_token(choice, ["[CLS]", "a", "b", "c", "[SEP]"], "a model", core.FFN_TOKEN_MARGIN),
    ):
        assert_practised(q)


def test_the_evidence_is_on_the_page_once_every_prediction_is_answered(minilm):
    """The strings the test above looks for are real: skipped (answered), the page shows every one of them."""
    found = evidence(minilm)
    at = open_every_panel(helpers.skip_predictions(open_asking()))
    seen, charts = helpers.page_evidence(at), set(figures(at))
    for step in ("norm_1", "ffn_hidden", "ffn_output"):
        at = open_every_panel(at.select_slider(key="block.block_step").set_value(step).run())
        seen, charts = seen + helpers.page_evidence(at), charts | set(figures(at))
    for key, strings in found.items():
        assert EVIDENCE_CHARTS[key] <= charts, key
        for said in strings:
            assert said in seen, (key, said)


def test_the_trained_ffn_question_says_when_it_asks_about_another_layer():
    tokens = ["[CLS]", "a", "b", "c", "[SEP]"]
    asked = core.FfnTokenChoice(1, 0, (0,), (1, 2, 3), 1, (0.0, 1.0, 5.0, 2.0, 0.0), (1, 2, 3))
    q = questions.ffn_token(asked, tokens, "a model", 1.2)
    assert (
        "(Layer 0 has no word whose FFN output is 20 % longer than every other's on your sentence, so this asks "
        in (q.prompt)
    )
    first = core.FfnTokenChoice(0, 0, (), (1, 2, 3), 1, (0.0, 1.0, 5.0, 2.0, 0.0), (1, 2, 3))
    assert "Layer 0 has no word" not in questions.ffn_token(first, tokens, "a model", 1.2).prompt
    assert "20 % longer than every other word's" in fb.no_clear_ffn_note(1.2, 3)


def test_a_sentence_is_walked_once_for_every_student_and_each_sentence_its_own(monkeypatch):
    """Two students typing the same sentence share one walk through the block (ui.models.block_walk); another
    sentence gets its own, and each page draws its sentence's numbers."""
    from ui.models import block_walk

    calls = []
    walk_block = core.walk_block

    def counted(model, ids, segments, layer):
        calls.append((tuple(ids), layer))
        return walk_block(model, ids, segments, layer)

    monkeypatch.setattr(core, "walk_block", counted)
    block_walk.clear()
    first, second = open_page({"block_sentence": "a garden bird sang near the old river"}), open_page()
    sentence_ids = tuple(TOK.encode("a garden bird sang near the old river").ids)
    assert calls.count((sentence_ids, 0)) == 1
    second.text_input(key="block.block_sentence").input("a garden bird sang near the old river").run()
    assert calls.count((sentence_ids, 0)) == 1  # the second student reused the first one's walk
    np.testing.assert_array_equal(z(figures(first)["emb_token"]), z(figures(second)["emb_token"]))
    second.text_input(key="block.block_sentence").input("the teacher ran to the park").run()
    other_ids = tuple(TOK.encode("the teacher ran to the park").ids)
    assert calls.count((other_ids, 0)) == 1
    walk, _ = expected("the teacher ran to the park")
    drawn = z(figures(second)["emb_token"])
    np.testing.assert_array_equal(drawn, walk.embeddings.token.double().numpy())
    assert drawn.shape != z(figures(first)["emb_token"]).shape or not np.array_equal(
        drawn, z(figures(first)["emb_token"])
    )
    assert not first.exception and not second.exception


def raw_spec(at, key: str) -> str:
    """A chart's figure as the browser receives it (JSON)."""
    [spec] = [el.proto.json for el in at.get("bidi_component") if el.proto.id.endswith(f"chart_{key}")]
    return spec


def test_the_input_charts_are_built_once_for_every_student_and_a_lecture_styles_a_copy(monkeypatch):
    """The first section's charts are kept for every session on the same sentence (shared_chart): built once,
    drawn as they are, and a lecture's larger type goes on a copy, never on what the other students get."""
    calls = []
    build = fb.embedding_charts

    def counted(parts, tokens, *rest):
        calls.append(tuple(tokens))
        return build(parts, tokens, *rest)

    monkeypatch.setattr(fb, "embedding_charts", counted)
    sentence = "the small bird read a book in the old garden"
    tokens = tuple(TOK.encode(sentence).tokens)
    first = open_page({"block_sentence": sentence})
    lecture = open_page({"block_sentence": sentence, "lecture": "1", "step": "0"})
    third = open_page({"block_sentence": sentence})
    assert calls.count(tokens) == 1
    plain, large = figures(first)["emb_token"], figures(lecture)["emb_token"]
    assert large["layout"]["font"]["size"] == 20 and "size" not in plain["layout"].get("font", {})
    assert raw_spec(third, "emb_token") == raw_spec(first, "emb_token")  # the lecture left the shared figure alone
    walk, _ = expected(sentence)
    np.testing.assert_array_equal(z(plain), walk.embeddings.token.double().numpy())
    assert not first.exception and not lecture.exception and not third.exception
