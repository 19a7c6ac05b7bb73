"""The masked-LM lesson's computations, checked against mask_tokens, exact_counts and PyTorch's own loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from encoder_core import IGNORE_INDEX, KEPT, MASKED, NOT_CHOSEN, RANDOM, MaskedLanguageModel, WordTokenizer, preset
from encoder_core.lessons import masking as lesson
from encoder_core.masking import MaskCounts, exact_counts, mask_tokens
from ui.views import masking as figs

TOK = WordTokenizer()
SENTENCE = "the cat sat on the mat and the dog slept on the floor"


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return MaskedLanguageModel(preset("small")).eval()


def _ids(text=SENTENCE):
    return TOK.encode(text).ids


@pytest.mark.parametrize(("rate", "exact", "seed"), [(0.15, True, 0), (0.5, True, 7), (0.4, False, 3), (1.0, True, 1)])
def test_table_rows_are_mask_tokens_output(rate, exact, seed):
    draw = lesson.draw_masks(TOK, _ids(), rate=rate, exact=exact, seed=seed)
    ref = mask_tokens(
        torch.tensor([_ids()]),
        mask_id=TOK.mask_id,
        special_ids=TOK.special_ids,
        vocab_size=TOK.vocab_size,
        rate=rate,
        exact=exact,
        generator=torch.Generator().manual_seed(seed),
    )
    rows = draw.rows()
    assert [r["input id"] for r in rows] == ref.inputs[0].tolist()
    assert [r["label"] for r in rows] == ref.labels[0].tolist()
    assert [r["chosen"] for r in rows] == (ref.actions[0] != NOT_CHOSEN).tolist()
    assert [r["model receives"] for r in rows] == TOK.decode(ref.inputs[0])
    assert [r["original token"] for r in rows] == TOK.encode(SENTENCE).tokens
    names = {NOT_CHOSEN: "not chosen", MASKED: "[MASK]", RANDOM: "random token", KEPT: "kept"}
    for row, action, eligible in zip(rows, ref.actions[0].tolist(), ref.eligible[0].tolist()):
        assert row["what happened"] == (names[action] if eligible else f"never eligible: {row['original token']}")
        # a label is the original id exactly where the position was chosen
        assert row["label"] == (row["original id"] if row["chosen"] else IGNORE_INDEX)


@pytest.mark.parametrize("rate", [0.0, 0.1, 0.15, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_draw_counts_follow_the_rule(rate, seed):
    draw = lesson.draw_masks(TOK, _ids(), rate=rate, exact=True, seed=seed)
    eligible = len(_ids()) - 2  # every word is in the vocabulary; only [CLS] and [SEP] are excluded
    assert draw.counts == exact_counts(eligible, rate) == draw.rule
    assert draw.follows_rule


def test_default_draw_counts():
    # 13 eligible words at 15%: round(1.95) = 2 chosen, round(1.6) = 2 [MASK], none random or kept.
    draw = lesson.draw_masks(TOK, _ids(), rate=0.15, exact=True, seed=0)
    assert draw.counts == MaskCounts(13, 2, 2, 0, 0)


def test_coin_flip_average_and_spread():
    draw = lesson.draw_masks(TOK, _ids(), rate=0.3, exact=False, seed=0)
    assert draw.expected_chosen == pytest.approx(0.3 * 13)
    assert draw.chosen_spread == pytest.approx(math.sqrt(13 * 0.3 * 0.7))
    counts = [lesson.draw_masks(TOK, _ids(), rate=0.3, exact=False, seed=s).counts.chosen for s in range(400)]
    assert np.mean(counts) == pytest.approx(3.9, abs=0.3)
    assert len(set(counts)) > 3  # the count varies from draw to draw


def test_special_tokens_and_unknown_words_never_chosen():
    text = "[CLS] [SEP]"
    draw = lesson.draw_masks(TOK, _ids(text), rate=1.0, exact=True, seed=0)
    assert draw.counts == MaskCounts(0, 0, 0, 0, 0)
    draw = lesson.draw_masks(TOK, _ids("the zzyzx cat [MASK] sat"), rate=1.0, exact=True, seed=0)
    rows = draw.rows()
    assert [r["original token"] for r in rows if not r["chosen"]] == ["[CLS]", "[UNK]", "[MASK]", "[SEP]"]
    assert draw.counts.eligible == 3 and draw.counts.chosen == 3


def test_loss_mean_equals_pytorch_ignore_index(model):
    draw = lesson.draw_masks(TOK, _ids(), rate=0.5, exact=True, seed=3)
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
    assert fwd.breakdown.wrong_mean_all_positions == pytest.approx(sum(by_hand) / len(_ids()), rel=1e-5)
    assert torch.allclose(fwd.label_probability[0, chosen], torch.exp(-torch.tensor(by_hand)), rtol=1e-5)


def test_loss_figure_shows_the_right_mean(model):
    draw = lesson.draw_masks(TOK, _ids(), rate=0.5, exact=True, seed=3)
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
    assert len(ignored_bars.x) == len(_ids()) - 7
    assert right_line.y[0] == pytest.approx(fwd.pytorch_loss, rel=1e-5)
    assert wrong_line.y[0] == pytest.approx(float(np.sum(counted_bars.y)) / len(_ids()), rel=1e-5)


def test_nothing_chosen_gives_no_mean(model):
    draw = lesson.draw_masks(TOK, _ids(), rate=0.0, exact=True, seed=0)
    fwd = lesson.mlm_forward(model, draw.result.inputs, draw.result.labels)
    assert fwd.breakdown.n_counted == 0
    assert math.isnan(fwd.breakdown.mean) and math.isnan(fwd.pytorch_loss)
    assert fwd.selected_logits.shape == (0, TOK.vocab_size)
    fig = figs.loss_bars(
        draw.tokens,
        draw.input_tokens,
        fwd.breakdown.per_position[0],
        fwd.breakdown.counted[0],
        mean=fwd.breakdown.mean,
        wrong_mean=fwd.breakdown.wrong_mean_all_positions,
    )
    assert len(fig.data) == 1 and fig.data[0].name.startswith("label -100")


def test_seed004_count_example(model):
    # Seed 004: six positions, two hidden -> the loss averages two token losses, not six.
    ex = lesson.count_example(model, TOK)
    assert ex.tokens == ["[CLS]", "the", "cat", "went", "home", "[SEP]"]
    assert ex.input_tokens == ["[CLS]", "the", "[MASK]", "[MASK]", "home", "[SEP]"]
    assert ex.n_positions == 6 and ex.n_counted == 2
    losses = ex.losses
    assert losses[0] == losses[1] == losses[4] == losses[5] == 0.0
    assert ex.forward.breakdown.mean == pytest.approx((losses[2] + losses[3]) / 2, rel=1e-6)
    assert ex.forward.breakdown.wrong_mean_all_positions == pytest.approx(ex.forward.breakdown.mean / 3, rel=1e-6)
    assert ex.forward.pytorch_loss == pytest.approx(ex.forward.breakdown.mean, rel=1e-5)


def test_shapes_are_read_from_the_tensors(model):
    draw = lesson.draw_masks(TOK, _ids(), rate=0.5, exact=True, seed=0)
    steps = dict(lesson.mlm_forward(model, draw.result.inputs, draw.result.labels).shape_steps())
    T, V = len(_ids()), TOK.vocab_size
    assert steps == {
        "token ids": (1, T),
        "hidden states": (1, T, 64),
        "logits": (1, T, V),
        "logits at chosen positions": (7, V),
    }
    # Seed 004's "try it": 8 x 20, width 48, 1000 words, 12 masked.
    assert lesson.shape_exercise(**lesson.EXERCISE_SHAPE).shape_steps() == [
        ("token ids", (8, 20)),
        ("hidden states", (8, 20, 48)),
        ("logits", (8, 20, 1000)),
        ("logits at chosen positions", (12, 1000)),
    ]


def test_mask_word():
    assert lesson.mask_word(TOK, "The cat sat on the mat.", 2) == "the [MASK] sat on the mat ."
    assert lesson.mask_word(TOK, "The cat sat", 0) == "The cat sat"
    assert TOK.encode(lesson.mask_word(TOK, "a b, c", 3)).tokens[3] == "[MASK]"
    with pytest.raises(ValueError):
        lesson.mask_word(TOK, "the cat", 3)


def test_nsp_examples_are_half_real_and_segmented():
    examples = lesson.nsp_examples(TOK, n=8, seed=0)
    assert sum(e.is_next for e in examples) == 4
    for e in examples:
        n_a = len(TOK.split(e.sentence_a)) + 2  # [CLS] A [SEP]
        assert e.tokens[0] == "[CLS]" and e.tokens[n_a - 1] == "[SEP]" and e.tokens[-1] == "[SEP]"
        assert e.segments == [0] * n_a + [1] * (len(e.tokens) - n_a)
    again = lesson.nsp_examples(TOK, n=8, seed=0)
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


def test_summarise_leakage():
    from encoder_core.leakage import LeakageResult, LeakageRun

    steps = 40
    correct = LeakageRun(False, [3.0 - 0.01 * i for i in range(steps)], [0.01 * i for i in range(steps)], 0.1, 0.3, 2.0)
    leaky = LeakageRun(
        True, [3.0 / (i + 1) for i in range(steps)], [min(1.0, 0.2 * i) for i in range(steps)], 0.0, 0.02, 2.5
    )
    s = lesson.summarise_leakage(LeakageResult(steps, 0, {}, correct, leaky, n_held_out=400), window=5)
    assert s.steps == list(range(1, 41))
    assert s.accuracy["leaky"] == lesson.running_mean(leaky.accuracy, 5)
    assert s.final_train_accuracy["leaky"] == pytest.approx(1.0)
    assert s.final_train_accuracy["correct"] == pytest.approx(np.mean(correct.accuracy[-5:]))
    # leaky accuracy per step: 0, .2, .4, .6, .8, 1, 1, ...; the 5-step mean is 0.88 at step 8, 0.96 at step 9
    assert s.first_step_at == {"correct": None, "leaky": 9}
    assert s.held_out_top5 == {"correct": 0.3, "leaky": 0.02} and s.n_held_out == 400


def test_context_for_chart_titles():
    tokens = TOK.encode("the cat sat on the big mat today").tokens  # today is [UNK]
    assert lesson.context(tokens, 2) == "the cat sat on the ..."
    assert lesson.context(tokens, 7) == "... on the big mat [UNK]"
    assert lesson.context(["[CLS]", "[MASK]", "[SEP]"], 1) == "[MASK]"
