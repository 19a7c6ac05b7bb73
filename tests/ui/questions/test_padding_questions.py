"""The padding lesson's predictions: every fact their feedback states, recomputed by hand on the input it is asked
on; every named misconception's value judged wrong; each names the quiz generator that practises its idea."""

import pytest
import torch
from independent import gap_with_pads_by_hand
from quiz_checks import assert_practised

from encoder_core.lessons.padding import (
    LEAK_MIN_PADS,
    LEAK_TRENDS,
    PAD_SHARE_TOLERANCE,
    PadLeak,
    even_share,
    leak_trend,
    mean_pad_share,
    pad_count,
    pad_leak,
    padded_attention,
)
from ui.frame.predict import judge, tolerance_for
from ui.questions import padding as questions

BATCHES = (
    ("the cat sat on the mat", "it was happy", "the cat sat", 0),
    ("the ferry was late", "fog covered the harbour", "she slept", 2),
    ("a dog barked", "it was late", "the unbelievably fluffy cat sat on the doormat", 3),
)


@pytest.mark.parametrize("a, b, single, extra", BATCHES)
def test_the_pad_count_question_offers_the_count_and_the_miscounts(tok, a, b, single, extra):
    count = pad_count(tok.encode(a, b), tok.encode(single), extra)
    q = questions.pad_count(count, extra)
    labels = [o.label for o in q.options]
    assert len(q.options) == 4 == len(set(labels)) and all(int(x) >= 0 for x in labels)
    right = questions.pad_count_answer(q, count)
    batch = tok.pad([tok.encode(a, b), tok.encode(single)], extra_pads=extra)
    assert int(labels[right]) == int(batch.key_padding_mask[1].sum()) and q.options[right].misconception == ""
    for name, n in count.miscounts.items():
        if str(n) not in labels:  # at most three miscounts are offered
            continue
        text = next(o.misconception for o in q.options if o.label == str(n))
        assert questions.miscount_text(name, count, extra) in text.split(" Or: ")
        if name == "words":  # a fact about this input: the word and its pieces, by hand
            word, pieces = count.split
            assert tok.encode(word).tokens[1:-1] == pieces and f"is {len(pieces)} tokens here" in text
        if name == "no_extra":
            assert f"The {extra} extra pads" in text
    for option in q.options:
        if option.label != labels[right]:
            assert not judge(q, labels.index(option.label), right).right
    assert str(count.answer) not in q.prompt.replace(f"{extra} extra", "")
    assert_practised(q)


def share_by_hand(model, batch, layer, head) -> tuple[float, float]:
    """(the real rows' mean weight on pad keys without the mask, an even spread's share), from a plain run."""
    n = batch.lengths[1]
    with torch.inference_mode():
        w = model(batch.ids, batch.segments).attentions[layer][1, head]
    return float(w[:n, n:].sum(-1).mean()), (w.shape[-1] - n) / w.shape[-1]


def test_the_pad_share_question_judges_every_named_misconception_wrong(lesson_model):
    model, tok = lesson_model.encoder, lesson_model.tokenizer
    batch = tok.pad([tok.encode("the cat sat on the mat", "it was happy"), tok.encode("the cat sat")])
    named_even = 0
    for layer in range(lesson_model.config.n_layers):
        for head in range(lesson_model.config.n_heads):
            pa = padded_attention(model, batch, 1, layer, head)
            share, even = mean_pad_share(pa), even_share(pa)
            by_hand, even_by_hand = share_by_hand(model, batch, layer, head)
            assert share == pytest.approx(by_hand, abs=1e-6) and even == even_by_hand
            q = questions.pad_share(5, 7, layer, head, share, even)
            assert tolerance_for(q, share) == PAD_SHARE_TOLERANCE and "right within 25 %" in q.prompt
            assert f"keep {1 - by_hand:.3f} of their attention" in q.too_high
            assert f"the 7 pads take {by_hand:.3f} together" in q.too_low
            for trap in q.traps:  # every named misconception's value is judged wrong
                verdict = judge(q, trap.value, share)
                assert not verdict.right
            assert judge(q, share * 1.2, share).right and not judge(q, share * 1.3, share).right
            if any(t.value == even for t in q.traps):
                named_even += 1
                assert abs(even / share - 1) >= 2 * PAD_SHARE_TOLERANCE
                assert judge(q, even, share).misconception.startswith("Attention is not shared out evenly")
                assert f"an even {even_by_hand:.3f}, but this head gives them {by_hand:.3f}" in q.traps[1].misconception
    assert named_even > 0
    assert_practised(q)


def synthetic_leak(curve) -> PadLeak:
    counts = list(range(len(curve)))
    return PadLeak(0, counts[-1], 0.0, curve[-1], [], [], counts, [0.0] * len(curve), curve)


def test_the_leak_verdict_counts_both_neighbours_on_an_edge_and_states_the_gaps():
    q = questions.leak_trend(LEAK_MIN_PADS)
    edge = synthetic_leak([0.0, 1.0, 1.12])  # just above the "grows" edge at 1.1
    grows, same = LEAK_TRENDS.index("grows"), LEAK_TRENDS.index("same")
    assert leak_trend(edge) == "grows"
    assert questions.leak_verdict(q, edge, grows, grows).right
    neighbour = questions.leak_verdict(q, edge, same, grows)
    assert neighbour.right and "on the edge" in neighbour.said
    still = questions.leak_verdict(q, edge, LEAK_TRENDS.index("still"), grows)
    assert not still.right and still.misconception.endswith("Here the gap is 1 with 1 pad and 1.12 with 2.")
    assert not questions.leak_verdict(q, synthetic_leak([0.0, 1.0, 2.0]), same, grows).right
    assert_practised(q)


def test_the_leak_feedback_states_this_sentences_gaps(small_model, tok):
    leak = pad_leak(small_model, tok.pad([tok.encode("the cat sat")]), 0, min_pads=LEAK_MIN_PADS)
    q = questions.leak_trend(LEAK_MIN_PADS)
    answer = LEAK_TRENDS.index(leak_trend(leak))
    verdict = questions.leak_verdict(q, leak, LEAK_TRENDS.index("still"), answer)
    one, most = (gap_with_pads_by_hand(small_model, tok, "the cat sat", p) for p in (1, LEAK_MIN_PADS))
    assert verdict.misconception.endswith(f"Here the gap is {one:.3g} with 1 pad and {most:.3g} with 16.")
