import pytest
import torch

from encoder_core.model.head_patterns import (
    BROAD,
    NEIGHBOUR_PATTERNS,
    PATTERNS,
    head_label,
    label_heads,
    layer_averages,
    pattern_masses,
)

TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]", "it", "purred", "[SEP]"]
T = len(TOKENS)


def previous_head(n: int = T) -> torch.Tensor:
    a = torch.zeros(n, n)
    a[0, 0] = 1.0  # [CLS] has no previous token
    a[torch.arange(1, n), torch.arange(n - 1)] = 1.0
    return a


def next_head(n: int = T) -> torch.Tensor:
    a = torch.zeros(n, n)
    a[torch.arange(n - 1), torch.arange(1, n)] = 1.0
    a[n - 1, n - 1] = 1.0
    return a


def column_head(columns: list[int], n: int = T) -> torch.Tensor:
    a = torch.zeros(n, n)
    a[:, columns] = 1.0 / len(columns)
    return a


def stack(*heads: torch.Tensor) -> torch.Tensor:
    return torch.stack(heads)[None]  # (1 layer, H, T, T)


def test_each_pure_head_gets_its_pattern_with_full_mass():
    heads = stack(previous_head(), next_head(), column_head([0]), column_head([4, 7]), torch.eye(T))
    labels = label_heads(heads, TOKENS)
    assert [lab.pattern for lab in labels] == list(PATTERNS)
    assert all(lab.mass == pytest.approx(1.0) for lab in labels)
    assert [(lab.layer, lab.head) for lab in labels] == [(0, h) for h in range(5)]


def test_uniform_head_is_broad_and_reports_its_largest_mass():
    (label,) = label_heads(stack(torch.full((T, T), 1.0 / T)), TOKENS)
    assert label.pattern == BROAD
    assert label.masses["[SEP]"] == pytest.approx(2.0 / T)  # two [SEP] columns
    assert label.mass == pytest.approx(2.0 / T)
    assert label.masses["previous token"] == pytest.approx(1.0 / T)


def test_threshold_decides_between_pattern_and_broad():
    mixed = 0.5 * previous_head() + 0.5 * torch.full((T, T), 1.0 / T)
    expected = 0.5 + 0.5 / T
    (lab,) = label_heads(stack(mixed), TOKENS, threshold=0.4)
    assert (lab.pattern, lab.mass) == ("previous token", pytest.approx(expected))
    (lab,) = label_heads(stack(mixed), TOKENS, threshold=0.6)
    assert (lab.pattern, lab.mass) == (BROAD, pytest.approx(expected))


def test_pad_rows_are_ignored_and_pad_keys_are_not_neighbours():
    n_real, n = T, T + 3
    tokens = TOKENS + ["[PAD]"] * 3
    mask = torch.tensor([False] * n_real + [True] * 3)
    head = torch.zeros(n, n)
    head[:n_real, :n_real] = previous_head(n_real)
    head[n_real:] = next_head(n)[n_real:]  # pad rows do something else entirely
    (lab,) = label_heads(stack(head), tokens, mask)
    assert (lab.pattern, lab.mass) == ("previous token", pytest.approx(1.0))
    # The last real token has no real next token: that row does not count for "next token".
    head = torch.zeros(n, n)
    head[:n_real, :n_real] = next_head(n_real)
    assert pattern_masses(stack(head), tokens, mask)[0, 0, 1] == pytest.approx(1.0)
    # Without the mask the pad rows count and dilute the pattern.
    assert pattern_masses(stack(head), tokens)[0, 0, 1] < 0.9


def test_one_token_sequence_has_no_neighbour_mass():
    m = pattern_masses(torch.ones(1, 1, 1, 1), ["[CLS]"])
    assert m[0, 0].tolist() == [0.0, 0.0, 1.0, 0.0, 1.0]


def test_layer_averages_mean_over_heads():
    layer0 = torch.stack([previous_head(), torch.eye(T)])
    layer1 = torch.stack([next_head(), next_head()])
    avg = layer_averages([layer0, layer1], TOKENS)
    assert len(avg) == 2 and set(avg[0]) == set(PATTERNS)
    assert avg[0]["previous token"] == pytest.approx(0.5)
    assert avg[0]["self"] == pytest.approx(0.5 + 0.5 / T)  # the [CLS] row of the previous-token head
    assert avg[1]["next token"] == pytest.approx(1.0)


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="layers, heads, T, T"):
        label_heads(torch.zeros(2, T, T), TOKENS)
    with pytest.raises(ValueError, match="tokens"):
        label_heads(torch.zeros(1, 1, T, T), TOKENS[:-1])
    with pytest.raises(ValueError, match="key_padding_mask"):
        label_heads(torch.zeros(1, 1, T, T), TOKENS, torch.zeros(T + 1, dtype=torch.bool))
    with pytest.raises(ValueError, match="no real token"):
        label_heads(torch.zeros(1, 1, T, T), TOKENS, torch.ones(T, dtype=torch.bool))


def test_head_label_finds_each_head_by_layer_and_head():
    layer0 = torch.stack([previous_head(), next_head(), torch.eye(T)])
    layer1 = torch.stack([column_head([0]), column_head([4, 7]), torch.full((T, T), 1.0 / T)])
    labels = label_heads([layer0, layer1], TOKENS)
    for lab in labels:
        assert head_label(labels, lab.layer, lab.head) is lab
    assert head_label(labels, 0, 1).pattern == "next token"
    assert head_label(labels, 1, 0).pattern == "[CLS]"
    with pytest.raises(ValueError, match="layer 2, head 0"):
        head_label(labels, 2, 0)


def test_neighbour_patterns_are_the_positional_ones():
    assert NEIGHBOUR_PATTERNS == ("previous token", "next token")
    labels = label_heads(stack(previous_head(), next_head(), column_head([0])), TOKENS)
    assert [lab.pattern in NEIGHBOUR_PATTERNS for lab in labels] == [True, True, False]


def test_minilm_has_a_previous_token_head_and_a_next_token_head(minilm):
    tok = minilm.tokenizer
    enc = tok.encode("the cat sat on the mat", "it was happy")
    other = tok.encode("a much longer first sentence, so that the pair above gets padded in this batch")
    batch = tok.pad([enc, other])
    with torch.inference_mode():
        out = minilm.model(batch.ids, batch.segments, batch.key_padding_mask)
    attn = torch.stack([a[0] for a in out.attentions])  # (L, H, T, T) of the pair, padded
    labels = {(lab.layer, lab.head): lab for lab in label_heads(attn, batch.tokens[0], batch.key_padding_mask[0])}
    assert labels[0, 2].pattern == "previous token" and labels[0, 2].mass > 0.9
    assert labels[1, 8].pattern == "next token" and labels[1, 8].mass > 0.5
    # The padded row gives the same masses as the sequence alone.
    with torch.inference_mode():
        alone = minilm.model(torch.tensor([enc.ids]), torch.tensor([enc.segments]))
    masses_alone = pattern_masses([a[0] for a in alone.attentions], enc.tokens)
    masses_padded = pattern_masses(attn, batch.tokens[0], batch.key_padding_mask[0])
    torch.testing.assert_close(masses_padded, masses_alone, atol=1e-5, rtol=0)
