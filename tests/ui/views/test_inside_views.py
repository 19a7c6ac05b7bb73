"""The "Looking inside" views: each chart's data, table and text alternative read the result they are given."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from encoder_core.lessons import inside as core
from ui.views import inside as views


@pytest.fixture(scope="module")
def run(trained_mlm):
    model, tok, _ = trained_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    knock = core.knockouts(model, tok, cloze)
    expl = core.explanations(model, tok, cloze, knock.answer_id, "[MASK]", 16)
    return cloze, knock, expl, core.logit_lens(model, tok, cloze)


def test_token_chart_bars_table_and_alt(run):
    cloze, knock, _, _ = run
    chart = views.token_knockout_chart(knock, cloze)
    np.testing.assert_allclose(chart.figure.data[0].y, knock.tokens.numpy())
    assert chart.figure.data[0].text[cloze.position] == "asked"
    worst = min(core.scored_positions(cloze), key=lambda i: float(knock.tokens[i]))
    assert f"Hiding {cloze.tokens[worst]} (token {worst})" in chart.alt
    assert f"by {-float(knock.tokens[worst]):.2f}" in chart.alt
    assert list(chart.table["change in log p"]) == list(np.round(knock.tokens.numpy(), 4))


def test_head_chart_is_layer_by_head(run):
    _, knock, _, _ = run
    chart = views.head_knockout_chart(knock)
    L, H = knock.heads.shape
    np.testing.assert_allclose(chart.figure.data[0].z, knock.heads.numpy())
    layer, head = knock.most_important_head()
    assert f"layer {layer}, head {head}" in chart.alt and f"of {L * H} heads" in chart.alt
    assert chart.table.shape == (L, H + 1) and chart.figure.layout.xaxis.title.text == "head"


def test_explanations_rows_are_scaled_by_their_own_largest_value(run):
    cloze, knock, expl, _ = run
    chart = views.explanations_chart(expl, knock, cloze)
    z = np.asarray(chart.figure.data[0].z, dtype=float)
    assert z.shape == (6, len(cloze.ids)) and np.isnan(z[:, cloze.position]).all()
    assert np.nanmax(np.abs(z), axis=1) == pytest.approx(np.ones(6))
    rollout = expl.rollout.numpy()
    keep = core.scored_positions(cloze)
    np.testing.assert_allclose(z[2, keep], rollout[keep] / np.abs(rollout[keep]).max())
    assert list(chart.figure.data[0].y) == list(views.ROW_NAMES.values())
    assert "weight" not in chart.figure.data[0].colorbar.title.text  # not an attention map: its own scale


def test_before_the_token_question_the_explanations_show_no_knockout(run):
    cloze, knock, expl, _ = run
    full, held = views.explanations_chart(expl, knock, cloze), views.explanations_chart(expl, knock, cloze, truth=False)
    z = np.asarray(held.figure.data[0].z, dtype=float)
    np.testing.assert_allclose(z, np.asarray(full.figure.data[0].z, dtype=float)[1:])  # the same rows, truth left out
    assert list(held.figure.data[0].y) == list(core.METHODS.values())
    assert "knockout drop (truth)" not in held.table.columns and "costs the answer most" not in held.alt
    assert held.alt in full.alt


def test_agreement_chart_on_a_fixed_scale_with_undefined_shown_as_such():
    scores = {"raw": 0.5, "rollout": -0.25, "norm": math.nan, "grad_input": 0.1, "integrated": 0.75}
    chart = views.sentence_agreement_chart(scores)
    assert list(chart.figure.layout.yaxis.range) == [-1.1, 1.1]
    assert list(chart.figure.data[0].text) == ["+0.50", "-0.25", "undefined", "+0.10", "+0.75"]
    assert "integrated gradients agrees best" in chart.alt


def test_sweep_chart_table_and_reading():
    rho = np.array([[0.9, 0.1, 0.2, 0.0, 0.3], [0.7, 0.3, np.nan, 0.1, 0.8]])
    result = core.Sweep(["a [MASK]", "b [MASK]"], rho, "[PAD]", 64)
    chart = views.sweep_chart(result)
    np.testing.assert_allclose(chart.figure.data[0].y, [0.8, 0.2, 0.2, 0.05, 0.55])
    assert list(chart.table["sentences where it agrees best"]) == [1, 0, 0, 0, 1]
    reading = views.sweep_reading(result, "a model")
    assert "**raw attention** agrees best" in reading and "comes first" in reading
    result.rho[:, 4] = 0.95
    assert "Raw attention comes second" in views.sweep_reading(result, "a model")


def test_logit_lens_charts(run):
    *_, lens = run
    prob, rank = views.logit_lens_chart(lens), views.logit_rank_chart(lens)
    np.testing.assert_allclose(prob.figure.data[0].y, lens.probability)
    assert list(rank.figure.data[0].y) == lens.rank and rank.figure.layout.yaxis.type == "log"
    assert rank.figure.layout.yaxis.autorange == "reversed" and prob.figure.layout.yaxis.rangemode == "tozero"
    assert f"{lens.probability[-1]:.3f} after the last layer" in prob.alt


def test_typed_markup_is_shown_as_text(run):
    cloze, knock, _, _ = run
    odd = core.Cloze("", cloze.ids, ["<b>", "*x*", "[MASK]"], 2, [])
    text = views.reading_text(odd, knock)
    assert "<b>" not in text and "\\*x\\*" in text
    assert views.md("a_b") == "a\\_b" and torch is not None
