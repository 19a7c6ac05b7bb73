"""The masked-LM lesson's computations, checked against mask_tokens, exact_counts and PyTorch's own loss,
and the view's tables and words checked against those numbers and codes."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from independent import reference_draw

from encoder_core import MaskedLanguageModel, preset
from encoder_core.lessons import masking as lesson
from encoder_core.objectives.mlm_masking import IGNORE_INDEX, KEPT, MASKED, NOT_CHOSEN, RANDOM, MaskCounts, exact_counts
from ui.views import masking as figs

SENTENCE = "the cat sat on the mat and the dog slept on the floor"
ACTION_OF_FATE = {"not_chosen": NOT_CHOSEN, "masked": MASKED, "random": RANDOM, "kept": KEPT}


@pytest.fixture(scope="module")
def model():
    """An untrained MLM (encoder + head) at seed 0: the shared small_model fixture has no head."""
    torch.manual_seed(0)
    return MaskedLanguageModel(preset("small")).eval()


def _ids(tok, text=SENTENCE):
    return tok.encode(text).ids


@pytest.mark.parametrize(("rate", "exact", "seed"), [(0.15, True, 0), (0.5, True, 7), (0.4, False, 3), (1.0, True, 1)])
def test_positions_are_mask_tokens_output(tok, rate, exact, seed):
    draw = lesson.draw_masks(tok, _ids(tok), rate=rate, exact=exact, seed=seed)
    ids, ref = reference_draw(tok, SENTENCE, rate, exact, seed)
    positions = draw.positions
    assert [p.position for p in positions] == list(range(ids.shape[1]))
    assert [p.original_id for p in positions] == ids[0].tolist()
    assert [p.input_id for p in positions] == ref.inputs[0].tolist()
    assert [p.label for p in positions] == ref.labels[0].tolist()
    assert [p.chosen for p in positions] == (ref.actions[0] != NOT_CHOSEN).tolist()
    assert [p.input_token for p in positions] == tok.decode(ref.inputs[0])
    assert [p.token for p in positions] == tok.encode(SENTENCE).tokens
    for p, action, eligible in zip(positions, ref.actions[0].tolist(), ref.eligible[0].tolist()):
        assert (p.fate == "never_eligible") == (not eligible)
        if eligible:
            assert ACTION_OF_FATE[p.fate] == action and p.reason is None
        # a label is the original id exactly where the position was chosen
        assert p.label == (p.original_id if p.chosen else IGNORE_INDEX)


@pytest.mark.parametrize("text", [SENTENCE, "the 🙂 cat [MASK] sat", "[CLS] [SEP]", "[MASK] [PAD] qqq the"])
@pytest.mark.parametrize("exact", [True, False])
def test_every_position_gets_one_fate_and_the_counts_add_up(tok, text, exact):
    draw = lesson.draw_masks(tok, _ids(tok, text), rate=0.6, exact=exact, seed=2)
    fates = [p.fate for p in draw.positions]
    assert len(fates) == len(draw.tokens) and set(fates) <= set(lesson.FATES)
    counts = draw.counts
    by_fate = {fate: fates.count(fate) for fate in lesson.FATES}
    assert by_fate == {
        "never_eligible": len(fates) - counts.eligible,
        "not_chosen": counts.eligible - counts.chosen,
        "masked": counts.masked,
        "random": counts.random,
        "kept": counts.kept,
    }


def test_never_eligible_exactly_at_special_unknown_and_typed_mask_positions(tok):
    text = "the 🙂 cat [MASK] sat [SEP] on [PAD] 🙂"
    ids = _ids(tok, text)
    draw = lesson.draw_masks(tok, ids, rate=1.0, exact=True, seed=0)
    expected = {}
    for t, token_id in enumerate(ids):
        if token_id == tok.unk_id:
            expected[t] = "unknown"
        elif token_id == tok.mask_id:
            expected[t] = "typed_mask"
        elif token_id in (tok.cls_id, tok.sep_id, tok.pad_id):
            expected[t] = "special"
    assert set(expected.values()) == set(lesson.REASONS)  # the sentence holds every reason
    assert {p.position: p.reason for p in draw.positions if p.fate == "never_eligible"} == expected
    assert all(p.reason is None for p in draw.positions if p.fate != "never_eligible")
    # at rate 1 every other position is chosen
    assert all(p.chosen for p in draw.positions if p.position not in expected)


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.15, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_draw_counts_follow_the_rule(tok, rate, seed):
    draw = lesson.draw_masks(tok, _ids(tok), rate=rate, exact=True, seed=seed)
    eligible = len(_ids(tok)) - 2  # every word is in the vocabulary; only [CLS] and [SEP] are excluded
    assert draw.counts == exact_counts(eligible, rate) == draw.rule
    assert draw.follows_rule


def test_default_draw_counts(tok):
    # 13 eligible words at 15%: round(1.95) = 2 chosen, round(1.6) = 2 [MASK], none random or kept.
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.15, exact=True, seed=0)
    assert draw.counts == MaskCounts(13, 2, 2, 0, 0)


def test_rate_showing_every_fate_is_the_first_slider_rate_with_all_three():
    def all_three(n, rate):
        c = exact_counts(n, rate)
        return c.masked > 0 and c.random > 0 and c.kept > 0

    for n in (0, 3, 8, 13, 40, 200):
        rate = lesson.rate_showing_every_fate(n)
        rates = [k / 100 for k in range(101)]
        first = next((r for r in rates if all_three(n, r)), None)
        assert rate == first
    assert lesson.rate_showing_every_fate(13) == 0.58  # 8 chosen: 6 / 1 / 1 (7 chosen gives 6 / 1 / 0)
    assert lesson.rate_showing_every_fate(7) is None  # 7 chosen at most: round(0.7) = 1 random, none kept


def test_the_default_draw_says_which_fates_it_lacks(tok):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.15, exact=True, seed=0)
    text = figs.every_fate_text(draw, lesson.rate_showing_every_fate(draw.counts.eligible))
    assert "no random token and no kept" in text and "from a rate of 0.58" in text
    full = lesson.draw_masks(tok, _ids(tok), rate=0.58, exact=True, seed=0)
    assert full.counts.random and full.counts.kept and figs.every_fate_text(full, 0.58) is None


def test_fill_mask_rest_is_the_probability_outside_the_top_k(tok, model):
    view = lesson.fill_mask_view(model, tok, "the [MASK] sat on the mat", top_k=5)
    (pred,) = view.predictions
    with torch.inference_mode():
        enc = tok.encode(view.query)
        logits = model(torch.tensor([enc.ids]))[0][0, pred.position]
    p = F.softmax(logits.double(), dim=-1)
    top = p.topk(5).values
    assert pred.rest == pytest.approx(float(p.sum() - top.sum()), abs=1e-6)
    assert pred.rest + sum(pred.probabilities) == pytest.approx(1.0, abs=1e-6)


def test_coin_flip_average_and_spread(tok):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.3, exact=False, seed=0)
    assert draw.expected_chosen == pytest.approx(0.3 * 13)
    assert draw.chosen_spread == pytest.approx(math.sqrt(13 * 0.3 * 0.7))
    counts = [lesson.draw_masks(tok, _ids(tok), rate=0.3, exact=False, seed=s).counts.chosen for s in range(400)]
    assert np.mean(counts) == pytest.approx(3.9, abs=0.3)
    assert len(set(counts)) > 3  # the count varies from draw to draw


def test_special_tokens_and_unknown_words_never_chosen(tok):
    text = "[CLS] [SEP]"
    draw = lesson.draw_masks(tok, _ids(tok, text), rate=1.0, exact=True, seed=0)
    assert draw.counts == MaskCounts(0, 0, 0, 0, 0)
    draw = lesson.draw_masks(tok, _ids(tok, "the 🙂 cat [MASK] sat"), rate=1.0, exact=True, seed=0)
    assert [p.token for p in draw.positions if not p.chosen] == ["[CLS]", "[UNK]", "[MASK]", "[SEP]"]
    assert draw.counts.eligible == 3 and draw.counts.chosen == 3


def test_loss_mean_equals_pytorch_ignore_index(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=3)
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels)
    with torch.no_grad():
        logits, _ = model(draw.result.inputs)
    reference = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), draw.result.labels.reshape(-1), ignore_index=-100)
    assert fwd.breakdown.mean == pytest.approx(float(reference), rel=1e-5)
    assert fwd.pytorch_loss == pytest.approx(float(reference), rel=1e-5)
    # by hand: -log softmax at each chosen position, averaged over the chosen ones
    logp = torch.log_softmax(logits[0], dim=-1)
    chosen = (draw.result.labels[0] != -100).nonzero().flatten().tolist()
    by_hand = [-float(logp[t, draw.result.labels[0, t]]) for t in chosen]
    assert fwd.breakdown.mean == pytest.approx(sum(by_hand) / len(by_hand), rel=1e-5)
    assert fwd.breakdown.wrong_mean_all_positions == pytest.approx(sum(by_hand) / len(_ids(tok)), rel=1e-5)
    assert torch.allclose(fwd.label_probability[0, chosen], torch.exp(-torch.tensor(by_hand)), rtol=1e-5)


def test_loss_figure_shows_the_right_mean(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=3)
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels)
    b = fwd.breakdown
    fig = figs.loss_bars(
        draw.tokens,
        draw.input_tokens,
        b.per_position[0],
        b.counted[0],
        mean=b.mean,
        wrong_mean=b.wrong_mean_all_positions,
    )
    counted_bars, ignored_bars, right_line, wrong_line = fig.data
    assert len(counted_bars.x) == b.n_counted == 7  # round(0.5 x 13) = round(6.5) = 7
    assert float(np.mean(counted_bars.y)) == pytest.approx(fwd.pytorch_loss, rel=1e-5)
    assert np.all(np.asarray(ignored_bars.y) == 0.0) and set(ignored_bars.text) == {"ignored"}
    assert len(ignored_bars.x) == len(_ids(tok)) - 7
    assert right_line.y[0] == pytest.approx(fwd.pytorch_loss, rel=1e-5)
    assert wrong_line.y[0] == pytest.approx(float(np.sum(counted_bars.y)) / len(_ids(tok)), rel=1e-5)


def test_nothing_chosen_gives_no_mean(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.0, exact=True, seed=0)
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels)
    assert fwd.breakdown.n_counted == 0
    assert math.isnan(fwd.breakdown.mean) and math.isnan(fwd.pytorch_loss)
    assert fwd.selected_logits.shape == (0, tok.vocab_size)
    fig = figs.loss_bars(
        draw.tokens,
        draw.input_tokens,
        fwd.breakdown.per_position[0],
        fwd.breakdown.counted[0],
        mean=fwd.breakdown.mean,
        wrong_mean=fwd.breakdown.wrong_mean_all_positions,
    )
    assert len(fig.data) == 1 and fig.data[0].name.startswith("label -100")


def test_seed004_count_example(tok, model):
    # Seed 004: six positions, two hidden -> the loss averages two token losses, not six.
    ex = lesson.count_example(model, tok)
    assert ex.tokens == ["[CLS]", "the", "cat", "went", "home", "[SEP]"]
    assert ex.input_tokens == ["[CLS]", "the", "[MASK]", "[MASK]", "home", "[SEP]"]
    assert ex.n_positions == 6 and ex.n_counted == 2
    losses = ex.losses
    assert losses[0] == losses[1] == losses[4] == losses[5] == 0.0
    assert ex.forward.breakdown.mean == pytest.approx((losses[2] + losses[3]) / 2, rel=1e-6)
    assert ex.forward.breakdown.wrong_mean_all_positions == pytest.approx(ex.forward.breakdown.mean / 3, rel=1e-6)
    assert ex.forward.pytorch_loss == pytest.approx(ex.forward.breakdown.mean, rel=1e-5)


def test_shapes_are_read_from_the_tensors(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=0)
    steps = dict(lesson.mlm_forward(model, draw.result.inputs, draw.result.labels).shape_steps())
    T, V = len(_ids(tok)), tok.vocab_size
    assert steps == {"ids": (1, T), "hidden": (1, T, 64), "logits": (1, T, V), "chosen_logits": (7, V)}
    # Seed 004's "try it": 8 x 20, width 48, 1000 words, 12 masked.
    assert lesson.shape_exercise(**lesson.EXERCISE_SHAPE).shape_steps() == [
        ("ids", (8, 20)),
        ("hidden", (8, 20, 48)),
        ("logits", (8, 20, 1000)),
        ("chosen_logits", (12, 1000)),
    ]


def test_mask_word(tok):
    assert lesson.mask_word(tok, "The cat sat on the mat.", 2) == "The [MASK] sat on the mat ."
    assert lesson.mask_word(tok, "The cat sat", 0) == "The cat sat"
    assert tok.encode(lesson.mask_word(tok, "a b, c", 3)).tokens[3] == "[MASK]"
    with pytest.raises(ValueError):
        lesson.mask_word(tok, "the cat", 3)


def test_nsp_examples_are_half_real_and_segmented(tok):
    examples = lesson.nsp_examples(tok, n=8, seed=0)
    assert sum(e.is_next for e in examples) == 4
    for e in examples:
        n_a = len(tok.split(e.sentence_a)) + 2  # [CLS] A [SEP]
        assert e.tokens[0] == "[CLS]" and e.tokens[n_a - 1] == "[SEP]" and e.tokens[-1] == "[SEP]"
        assert e.segments == [0] * n_a + [1] * (len(e.tokens) - n_a)
    again = lesson.nsp_examples(tok, n=8, seed=0)
    assert [(e.sentence_a, e.sentence_b) for e in again] == [(e.sentence_a, e.sentence_b) for e in examples]


def test_split_bar_and_top_k_figures():
    fig = figs.split_bar(exact_counts(200))
    assert [float(t.x[0]) for t in fig.data] == [24, 3, 3, 170]
    fig = figs.top_k_bars(["cat", "<b>dog</b>"], [0.7, 0.2])
    assert list(fig.data[0].y) == ["&lt;b&gt;dog&lt;/b&gt;", "cat"]  # most likely on top, user text escaped
    assert list(fig.data[0].x) == [0.2, 0.7]


def test_running_mean_matches_numpy():
    values = [0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    for window in (1, 3, 7, 10):
        expected = [np.mean(values[max(0, i + 1 - window) : i + 1]) for i in range(len(values))]
        assert np.allclose(lesson.running_mean(values, window), expected)
    with pytest.raises(ValueError):
        lesson.running_mean(values, 0)


def leakage_runs(steps: int = 40):
    """A made-up pair of runs: the correct one learns slowly, the leaky one is perfect by step 6."""
    from encoder_core.objectives.leakage import LeakageResult, LeakageRun

    correct = LeakageRun(False, [3.0 - 0.01 * i for i in range(steps)], [0.01 * i for i in range(steps)], 0.1, 0.3, 2.0)
    leaky = LeakageRun(
        True, [3.0 / (i + 1) for i in range(steps)], [min(1.0, 0.2 * i) for i in range(steps)], 0.0, 0.02, 2.5
    )
    return LeakageResult(steps, 0, {}, correct, leaky, n_held_out=400)


def test_summarise_leakage():
    result = leakage_runs()
    correct, leaky = result.correct, result.leaky
    s = lesson.summarise_leakage(result, window=5)
    assert s.steps == list(range(1, 41))
    assert s.accuracy["leaky"] == lesson.running_mean(leaky.accuracy, 5)
    assert s.final_train_accuracy["leaky"] == pytest.approx(1.0)
    assert s.final_train_accuracy["correct"] == pytest.approx(np.mean(correct.accuracy[-5:]))
    # leaky accuracy per step: 0, .2, .4, .6, .8, 1, 1, ...; the 5-step mean is 0.88 at step 8, 0.96 at step 9
    assert s.first_step_at == {"correct": None, "leaky": 9}
    assert s.held_out_top5 == {"correct": 0.3, "leaky": 0.02} and s.n_held_out == 400


def test_context_for_chart_titles(tok):
    tokens = tok.encode("the cat sat on the big mat 🙂").tokens  # 🙂 is [UNK]
    assert figs.context(tokens, 2) == "the cat sat on the ..."
    assert figs.context(tokens, 7) == "... on the big mat [UNK]"
    assert figs.context(["[CLS]", "[MASK]", "[SEP]"], 1) == "[MASK]"


def test_leakage_run_at_step_and_the_estimate():
    # leakage_experiment counts over both runs: steps 1..n are the correct run, n+1..2n the leaky one.
    assert [lesson.leakage_run_at(step, 20) for step in (1, 10, 11, 20)] == ["correct", "correct", "leaky", "leaky"]
    assert lesson.leakage_estimate(None, 300) is None and lesson.leakage_estimate(0.0, 300) is None
    assert lesson.leakage_estimate(0.02, 300) == 6
    assert lesson.leakage_estimate(0.0001, 10) == 1  # never promises 0 s


# ---------------------------------------------------------------- the view's tables and words


@pytest.mark.parametrize(
    ("text", "rate", "exact", "seed"), [(SENTENCE, 0.5, True, 7), ("the 🙂 cat [MASK] sat", 0.6, False, 3)]
)
def test_draw_table_is_the_draw(tok, text, rate, exact, seed):
    draw = lesson.draw_masks(tok, _ids(tok, text), rate=rate, exact=exact, seed=seed)
    ids, ref = reference_draw(tok, text, rate, exact, seed)
    table = figs.draw_table(draw.positions)
    assert list(table.columns) == [
        "position",
        "original token",
        "original id",
        "chosen",
        "what happened",
        "model receives",
        "input id",
        "label",
    ]
    assert table["original id"].tolist() == ids[0].tolist()
    assert table["input id"].tolist() == ref.inputs[0].tolist()
    assert table["label"].tolist() == ref.labels[0].tolist()
    assert table["chosen"].tolist() == ref.chosen[0].tolist()
    assert table["model receives"].tolist() == tok.decode(ref.inputs[0])
    words = {NOT_CHOSEN: "not chosen", MASKED: "[MASK]", RANDOM: "random token", KEPT: "kept"}
    tokens = tok.decode(ids[0])
    expected = [
        words[a] if eligible else f"never eligible: {token}"
        for a, eligible, token in zip(ref.actions[0].tolist(), ref.eligible[0].tolist(), tokens)
    ]
    assert table["what happened"].tolist() == expected


def test_what_happened_words_every_code():
    def position(fate, reason=None, token="cat"):
        return lesson.DrawPosition(1, token, 9, fate, reason, token, 9, -100)

    assert [figs.what_happened(position(f)) for f in lesson.FATES[1:]] == [
        "not chosen",
        "[MASK]",
        "random token",
        "kept",
    ]
    assert figs.what_happened(position("never_eligible", "special", "[SEP]")) == "never eligible: [SEP]"
    assert figs.what_happened(position("never_eligible", "unknown", "[UNK]")) == "never eligible: [UNK]"
    assert figs.what_happened(position("never_eligible", "typed_mask", "[MASK]")) == "never eligible: [MASK]"
    assert set(figs.FATE_WORDS) == set(figs.FATE_COLOURS) == set(lesson.FATES)


def test_draw_figure_colours_each_position_by_its_fate(tok):
    draw = lesson.draw_masks(tok, _ids(tok, "the 🙂 cat [MASK] sat on the mat"), rate=0.8, exact=True, seed=4)
    chart = figs.draw_chart(draw)
    cells = chart.figure.data[0]
    codes = [lesson.FATES.index(p.fate) for p in draw.positions]
    assert [list(row) for row in cells.z] == [codes, codes]
    assert [c[0] for c in cells.customdata[0]] == [figs.FATE_WORDS[p.fate] for p in draw.positions]
    assert [t.name for t in chart.figure.data[1:]] == ["never eligible", "not chosen", "[MASK]", "random token", "kept"]
    assert chart.table.equals(figs.draw_table(draw.positions))
    assert chart.alt.startswith(f"Of {draw.counts.eligible} eligible tokens in the sentence, {draw.counts.chosen}")
    assert [c[1] for c in cells.customdata[0]] == [f", label {p.label}" for p in draw.positions]


def test_before_the_loss_question_the_draw_shows_no_label(tok):
    """Which positions get a label is the loss question: the draw without labels names none, anywhere."""
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=7)
    chart = figs.draw_chart(draw, labels=False)
    assert "label" not in chart.table.columns and "-100" not in chart.alt
    assert {c[1] for c in chart.figure.data[0].customdata[0]} == {""}
    assert "label " not in chart.figure.to_json()  # no "label -100" in any hover text
    assert chart.table.equals(figs.draw_table(draw.positions).drop(columns="label"))


def test_split_table_is_the_worked_count():
    worked = exact_counts(200)
    assert figs.split_table(worked).to_dict("records") == [
        {"eligible": 200, "chosen": 30, "masked": 24, "random": 3, "kept": 3}
    ]
    chart = figs.split_chart(worked, 0.15)
    assert chart.figure.layout.title.text == "200 eligible tokens at rate 0.15"


def test_shape_table_names_every_tensor(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=0)
    steps = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels).shape_steps()
    table = figs.shape_table(steps)
    assert table["tensor"].tolist() == ["token ids", "hidden states", "logits", "logits at labelled positions"]
    assert table["shape"].tolist() == [str(shape) for _, shape in steps]
    assert figs.shape_chain(steps) == " -> ".join(table["shape"])


def test_loss_table_is_the_breakdown_and_the_decoded_guesses(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=3)
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels, tokenizer=tok)
    table = figs.loss_table(fwd, draw.tokens, draw.input_tokens)
    with torch.no_grad():
        logits, _ = model(draw.result.inputs)
    logp = torch.log_softmax(logits[0], dim=-1)
    labels = draw.result.labels[0].tolist()
    assert table["label"].tolist() == labels
    assert table["model receives"].tolist() == draw.input_tokens and table["original"].tolist() == draw.tokens
    by_hand = [0.0 if lab == IGNORE_INDEX else -float(logp[t, lab]) for t, lab in enumerate(labels)]
    assert np.allclose(table["loss"], by_hand, rtol=1e-5, atol=1e-6)
    probability = table["p(original)"].tolist()
    for t, lab in enumerate(labels):
        if lab == IGNORE_INDEX:
            assert probability[t] is None or math.isnan(probability[t])
        else:
            assert probability[t] == pytest.approx(math.exp(-by_hand[t]), rel=1e-5)
    assert table["model's top guess"].tolist() == [tok.vocab[int(i)] for i in logits[0].argmax(-1)]
    plain = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels)  # no tokenizer: nothing decoded
    with pytest.raises(ValueError):
        figs.loss_table(plain, draw.tokens, draw.input_tokens)


def test_loss_words_carry_the_means(tok, model):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=3)
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels, tokenizer=tok)
    b = fwd.breakdown
    assert dict(figs.loss_metrics(fwd)) == {
        "mean over the 7 chosen positions": f"{b.mean:.4f}",
        "PyTorch cross_entropy(ignore_index=-100)": f"{fwd.pytorch_loss:.4f}",
        f"wrong: sum / all {len(_ids(tok))} positions": f"{b.wrong_mean_all_positions:.4f}",
    }
    assert figs.mean_text(float("nan")) == "undefined"
    ex = lesson.count_example(model, tok)
    chart = figs.count_example_chart(ex)
    assert chart.table["loss"].tolist() == ex.losses
    assert f"right mean {ex.forward.breakdown.mean:.4f}" in chart.alt


def test_top_k_table_and_fill_words():
    pred = lesson.MaskPrediction(2, [("cat", 0.5), ("dog", 0.25), ("mat", 0.125)], "cat", 1, 0.5, 0.125)
    assert figs.top_k_table(pred).to_dict("list") == {
        "token": ["cat", "dog", "mat"],
        "probability": [0.5, 0.25, 0.125],
        "word piece": [False, False, False],
    }
    assert figs.fill_alt(pred) == (
        "At position 2 the model's first choice is 'cat' with probability 50.0%, then 'dog' 25.0%, 'mat' 12.5%; "
        "all other words together: 12.5%."
    )
    bars = figs.fill_figure(lesson.FillMaskView("the [MASK]", ["[CLS]", "the", "[MASK]", "[SEP]"], [pred], [], 0), pred)
    assert list(bars.data[0].y) == ["all other words", "mat", "dog", "cat"]  # the rest at the bottom
    assert sum(bars.data[0].x) == pytest.approx(1.0) and list(bars.layout.xaxis.range) == [0, 1.2]
    assert figs.hidden_word_text(pred, "cat", 400) == "The hidden word 'cat' is choice 1 of 400, probability 50.0%."


def test_leakage_tables_are_the_summary():
    s = lesson.summarise_leakage(leakage_runs(), window=5)
    curves = figs.curves_table(s.steps, s.accuracy)
    assert list(curves.columns) == ["step", "correct masking", "leaky: answer left in the input"]
    assert curves["step"].tolist() == s.steps
    assert curves["leaky: answer left in the input"].tolist() == s.accuracy["leaky"]
    assert figs.curves_table(s.steps, s.loss)["correct masking"].tolist() == s.loss["correct"]
    rows = figs.leakage_table(s).to_dict("records")
    assert [r["run"] for r in rows] == ["correct masking", "leaky: answer left in the input"]
    assert [r["first step at 90%"] for r in rows] == ["not reached", "9"]
    assert [r["held-out fill-mask top-5"] for r in rows] == [0.3, 0.02]
    assert [r["training accuracy (last 5 steps)"] for r in rows] == [
        s.final_train_accuracy[k] for k in lesson.LEAKAGE_RUNS
    ]
    assert [r["seconds"] for r in rows] == [2.0, 2.5]
    chart = figs.leakage_accuracy_chart(s)
    assert [t.name for t in chart.figure.data] == ["correct masking", "leaky: answer left in the input"]
    assert list(chart.figure.data[1].y) == s.accuracy["leaky"]


def test_nsp_table_is_the_examples(tok):
    examples = lesson.nsp_examples(tok, n=6, seed=1)
    table = figs.nsp_table(examples)
    assert table["sentence A"].tolist() == [e.sentence_a for e in examples]
    assert table["label"].tolist() == ["IsNext" if e.is_next else "NotNext (random)" for e in examples]
    assert table["model input"].tolist() == [" ".join(e.tokens) for e in examples]
    assert table["segments"].tolist() == ["".join(str(x) for x in e.segments) for e in examples]
    assert "**3 of 6**" in figs.nsp_text(examples, 1)


# ---- the answers to the lesson's predictions ----


@pytest.mark.parametrize(("rate", "exact", "seed"), [(0.15, True, 0), (0.5, True, 7), (0.4, False, 3), (1.0, True, 1)])
def test_loss_positions_are_the_chosen_ones_and_what_the_loss_counts(tok, model, rate, exact, seed):
    draw = lesson.draw_masks(tok, _ids(tok), rate=rate, exact=exact, seed=seed)
    _, ref = reference_draw(tok, SENTENCE, rate, exact, seed)
    chosen = [t for t, action in enumerate(ref.actions[0].tolist()) if action != NOT_CHOSEN]
    assert lesson.loss_positions(draw) == chosen
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels)
    counted = [t for t, c in enumerate(fwd.breakdown.counted[0].tolist()) if c]
    assert lesson.loss_positions(draw) == counted  # the positions the loss actually reads
    assert lesson.loss_outcome(draw) == "chosen"
    assert "every" not in lesson.matching_loss_sets(draw)  # [CLS] and [SEP] never carry a loss


def test_a_draw_with_a_random_or_kept_position_tells_chosen_from_masked(tok):
    draw = lesson.draw_masks(tok, _ids(tok), rate=0.5, exact=True, seed=7)
    assert draw.counts.random + draw.counts.kept > 0
    sets = lesson.loss_set_positions(draw)
    assert sets["masked"] != sets["chosen"] and set(sets["masked"]) < set(sets["chosen"])
    assert lesson.matching_loss_sets(draw) == ["chosen"]


def test_draws_that_cannot_tell_two_sets_apart_say_so(tok):
    only_masks = lesson.draw_masks(tok, _ids(tok), rate=0.15, exact=True, seed=0)
    assert only_masks.counts.random == only_masks.counts.kept == 0
    assert lesson.matching_loss_sets(only_masks) == ["chosen", "masked"]
    everything = lesson.draw_masks(tok, _ids(tok), rate=1.0, exact=True, seed=1)  # every word chosen
    assert lesson.matching_loss_sets(everything) == ["chosen", "words"]
    assert lesson.loss_set_positions(everything)["words"] == list(range(1, len(_ids(tok)) - 1))
    unknown_ids = _ids(tok, "the ☃ sat on the mat and the dog slept")
    with_unknown = lesson.draw_masks(tok, unknown_ids, rate=1.0, exact=True, seed=1)
    assert lesson.matching_loss_sets(with_unknown) == ["chosen"]  # [UNK] is a word position that is never chosen
    assert [lesson.loss_outcome(d) for d in (only_masks, everything, with_unknown)] == ["chosen"] * 3


def mlm_of(request, name):
    """(model, tokenizer) of a trained MLM the masking lesson runs on: the lab's, or MiniLM under its head."""
    model, tokenizer, _ = request.getfixturevalue({"mlm": "trained_mlm", "minilm": "minilm_mlm"}[name])
    return model, tokenizer


@pytest.mark.parametrize("name", ["mlm", "minilm"])
def test_a_guess_is_ranked_by_the_models_softmax(request, name):
    mlm, tokenizer = mlm_of(request, name)
    text = "the [MASK] sat on the mat"
    view = lesson.fill_mask_view(mlm, tokenizer, text)
    assert view.first_probabilities.shape == (tokenizer.vocab_size,)
    enc = tokenizer.encode(text)
    at = enc.tokens.index("[MASK]")
    with torch.inference_mode():
        logits, _ = mlm(torch.tensor([enc.ids]), torch.tensor([enc.segments]), need_weights=False)
    probs = torch.softmax(logits[0, at].double(), dim=-1)
    top = [tokenizer.vocab[int(i)] for i in probs.argsort(descending=True)[:3]]
    for guess in [top[0], top[2].upper(), f"  {top[1]} ", "dog", "the", "mat"]:
        g = lesson.rank_guess(tokenizer, view.first_probabilities, guess)
        token_id = tokenizer.token_to_id[guess.strip().lower()]
        p = float(probs[token_id])
        assert g.token == guess.strip().lower() and g.problem is None
        assert g.probability == pytest.approx(p, rel=1e-4, abs=1e-9)
        # How many entries beat it, by hand (entries within float rounding of it may fall either side).
        assert 1 + int((probs > p * (1 + 1e-4)).sum()) <= g.rank <= int((probs >= p * (1 - 1e-4)).sum())
        assert g.in_top == (g.rank <= 5)
    assert lesson.rank_guess(tokenizer, view.first_probabilities, top[0]).rank == 1


def test_a_guess_that_is_not_one_ordinary_token_has_no_rank(tok, model):
    ranking = lesson.fill_mask_view(model, tok, "the [MASK] sat on the mat").first_probabilities
    cases = {"": "empty", "   ": "empty", "the cat": "several", "xylophonists": "several", "☃": "unknown"}
    cases.update({"[mask]": "special", "[SEP]": "special"})
    for guess, problem in cases.items():
        g = lesson.rank_guess(tok, ranking, guess)
        assert (g.token, g.problem, g.rank, g.probability, g.in_top) == (None, problem, None, None, False), guess
    assert lesson.rank_guess(tok, ranking, "xylophonists").pieces == ["x", "##yl", "##op", "##hon", "##ists"]


def test_fill_mask_view_keeps_the_first_blanks_whole_distribution(tok, model):
    view = lesson.fill_mask_view(model, tok, "the [MASK] sat on the [MASK]")
    probs = view.first_probabilities
    order = probs.argsort(descending=True)[:5]
    assert [tok.vocab[int(i)] for i in order] == view.predictions[0].words
    assert float(probs.double().sum()) == pytest.approx(1.0, abs=1e-4)
    empty = lesson.fill_mask_view(model, tok, "no blank here")
    assert empty.first_probabilities is None and empty.predictions == [] and empty.n_blanks == 0


# ---- the loss question's facts, and where the loss is largest (the trained MLM) ----

ORDINARY = (
    "the ferry was late because of fog over the harbour",
    "she put the milk in the fridge to keep it cold",
    "he opened the door with a key and walked in",
    "paris is the capital of france and a large city",
    "my brother bought a new bike for his birthday",
    "it rained all day so we stayed at home",
)


def test_what_the_loss_options_say_holds_on_a_draw_with_random_and_kept_words(tok):
    """The LOSS options' feedback states these facts: [CLS] and [SEP] are never chosen and get -100; every
    position not chosen gets -100; every chosen one, random and kept included, its original id; a kept word is
    read as it is and scored all the same."""
    draw = lesson.draw_masks(tok, _ids(tok), rate=1.0, exact=True, seed=0)
    fates = {p.fate for p in draw.positions}
    assert {"random", "kept", "masked"} <= fates
    for p in draw.positions:
        if p.token in ("[CLS]", "[SEP]"):
            assert not p.chosen and p.label == IGNORE_INDEX
        assert p.label == (p.original_id if p.chosen else IGNORE_INDEX)
        if p.fate == "kept":
            assert p.input_id == p.original_id and p.label == p.original_id
    words = [p for p in lesson.draw_masks(tok, _ids(tok), rate=0.15, exact=True, seed=0).positions if p.reason is None]
    assert any(not p.chosen and p.label == IGNORE_INDEX for p in words)  # an unchosen word is not scored


def losses_by_hand(model, draw) -> dict[int, float]:
    """Cross-entropy against the original word at every chosen position, from the model's own forward."""
    with torch.inference_mode():
        logits, _ = model(draw.result.inputs)
    chosen = [p.position for p in draw.positions if p.chosen]
    ce = F.cross_entropy(logits[0, chosen], draw.ids[0, chosen], reduction="none")
    return dict(zip(chosen, ce.tolist(), strict=True))


@pytest.mark.parametrize(("rate", "seed"), [(0.5, 7), (0.15, 1), (1.0, 0), (0.15, 0)])
def test_the_largest_loss_is_the_models_and_wins_by_the_margin(tok, trained_mlm, rate, seed):
    model = trained_mlm[0]
    draw = lesson.draw_masks(tok, _ids(tok), rate=rate, exact=True, seed=seed)
    choice = lesson.hardest_choice(draw, lesson.mlm_forward(model, draw.result.inputs, draw.result.labels))
    by_hand = losses_by_hand(model, draw)
    assert choice.n_chosen == len(by_hand) and len(choice.positions) == min(len(by_hand), lesson.MAX_LOSS_OPTIONS)
    assert max(by_hand, key=by_hand.get) == choice.positions[choice.answer]  # the largest is always offered
    np.testing.assert_allclose(choice.losses, [by_hand[t] for t in choice.positions], atol=2e-4)  # float32 sums
    best = choice.losses[choice.answer]
    for i, v in enumerate(choice.losses):
        assert (i in choice.right) == (v >= best - lesson.LOSS_MARGIN)
    assert choice.asked == (len(choice.positions) >= 2 and len(choice.right) < len(choice.positions))
    assert choice.probability(choice.answer) == pytest.approx(math.exp(-best))


def test_where_the_loss_is_largest_depends_on_the_sentence(tok, trained_mlm):
    """On ordinary sentences, drawn as the page first draws them, the question is asked and its answer moves."""
    model = trained_mlm[0]
    answers = []
    for text in ORDINARY:
        draw = lesson.draw_masks(tok, _ids(tok, text), rate=0.15, exact=True, seed=0)
        choice = lesson.hardest_choice(draw, lesson.mlm_forward(model, draw.result.inputs, draw.result.labels))
        if choice.asked:
            answers.append(draw.positions[choice.positions[choice.answer]].token)
    assert len(answers) >= 4 and len(set(answers)) == len(answers), answers


def test_nothing_or_one_chosen_asks_no_largest_loss(tok, trained_mlm):
    model = trained_mlm[0]
    for rate in (0.0, 0.08):
        draw = lesson.draw_masks(tok, _ids(tok), rate=rate, exact=True, seed=0)
        choice = lesson.hardest_choice(draw, lesson.mlm_forward(model, draw.result.inputs, draw.result.labels))
        assert choice.n_chosen == draw.counts.chosen <= 1 and not choice.asked
