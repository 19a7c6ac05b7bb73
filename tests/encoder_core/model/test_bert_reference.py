"""encoder_core against Hugging Face's BertModel / BertForMaskedLM holding the same random weights."""

from __future__ import annotations

import pytest
import torch
from independent import hf_config

from encoder_core import Encoder, EncoderConfig, MaskedLanguageModel

transformers = pytest.importorskip("transformers")

V, D, H, L, FF, P = 100, 64, 4, 2, 256, 64
# Both sides are built from one config: ours as it is, Hugging Face's through the tests' mapping (hf_config).
CONFIG = EncoderConfig(vocab_size=V, max_positions=P, d_model=D, n_heads=H, n_layers=L, d_ff=FF)
TOL = 1e-5


def _perturb(model, seed=0):
    # Off BERT's init: LayerNorm gains/biases and linear biases become non-trivial, so a
    # swapped or unused parameter shows up in the outputs.
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn(p.shape, generator=g))
    return model.eval()


def _batch():
    # A padded batch with both segments: a 12-token pair and a 5-token single with 7 pads.
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(5, V, (2, 12), generator=g)
    ids[:, 0] = 2
    segments = torch.zeros(2, 12, dtype=torch.long)
    segments[0, 6:] = 1
    ids[1, 5:] = 0
    key_padding_mask = torch.zeros(2, 12, dtype=torch.bool)
    key_padding_mask[1, 5:] = True
    return ids, segments, key_padding_mask


@pytest.fixture(scope="module")
def pair():
    torch.manual_seed(0)
    bc = hf_config(transformers, CONFIG)
    theirs = _perturb(transformers.BertModel(bc))
    ours = Encoder(CONFIG)
    result = ours.load_state_dict(theirs.state_dict(), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    return ours.eval(), theirs


def test_state_dict_names_and_shapes_line_up(pair):
    ours, theirs = pair
    a, b = ours.state_dict(), theirs.state_dict()
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_hidden_states_attentions_and_pooler_match(pair):
    ours, theirs = pair
    ids, segments, kpm = _batch()
    with torch.no_grad():
        out = ours(ids, segments, kpm)
        ref = theirs(
            input_ids=ids,
            token_type_ids=segments,
            attention_mask=(~kpm).long(),
            output_hidden_states=True,
            output_attentions=True,
        )
    assert len(out.hidden_states) == len(ref.hidden_states) == L + 1
    for a, b in zip(out.hidden_states, ref.hidden_states):
        assert float((a - b).abs().max()) <= TOL  # pad rows included: both attend real keys only
    assert len(out.attentions) == len(ref.attentions) == L
    for a, b in zip(out.attentions, ref.attentions):
        assert a.shape == b.shape == (2, H, 12, 12)
        assert float((a - b).abs().max()) <= TOL
        assert torch.all(a[1, :, :, 5:] == 0)
    assert float((out.hidden - ref.last_hidden_state).abs().max()) <= TOL
    with torch.no_grad():
        assert float((ours.pooler(out.hidden) - ref.pooler_output).abs().max()) <= TOL


def test_fused_path_matches_transformers_sdpa(pair):
    ours, theirs = pair
    sdpa = transformers.BertModel(hf_config(transformers, CONFIG, attn_implementation="sdpa")).eval()
    sdpa.load_state_dict(theirs.state_dict())
    ids, segments, kpm = _batch()
    with torch.no_grad():
        out = ours(ids, segments, kpm, need_weights=False)
        ref = sdpa(input_ids=ids, token_type_ids=segments, attention_mask=(~kpm).long())
    assert out.attentions is None
    real = ~kpm
    assert float((out.hidden - ref.last_hidden_state).abs()[real].max()) <= TOL


def test_the_comparison_can_fail(pair):
    # A wrong segment id must move the hidden states far beyond the tolerance.
    ours, theirs = pair
    ids, segments, kpm = _batch()
    with torch.no_grad():
        out = ours(ids, 1 - segments, kpm)
        ref = theirs(input_ids=ids, token_type_ids=segments, attention_mask=(~kpm).long())
    assert float((out.hidden - ref.last_hidden_state).abs().max()) > 1e-2


# BertForMaskedLM has no pooler, and lists the (tied) output bias twice:
# cls.predictions.bias and cls.predictions.decoder.bias are one tensor.
EXPECTED_MISSING = {"bert.pooler.dense.weight", "bert.pooler.dense.bias"}
EXPECTED_UNEXPECTED = {"cls.predictions.decoder.bias"}


def test_masked_lm_logits_match():
    torch.manual_seed(1)
    bc = hf_config(transformers, CONFIG)
    theirs = _perturb(transformers.BertForMaskedLM(bc), seed=1)
    # Tied in both: one embedding table read in and read out; one output bias.
    assert theirs.cls.predictions.decoder.weight is theirs.bert.embeddings.word_embeddings.weight
    assert theirs.cls.predictions.decoder.bias is theirs.cls.predictions.bias
    ours = MaskedLanguageModel(CONFIG)
    assert ours.cls.predictions.decoder.weight is ours.bert.embeddings.word_embeddings.weight

    result = ours.load_state_dict(theirs.state_dict(), strict=False)
    assert set(result.missing_keys) == EXPECTED_MISSING
    assert set(result.unexpected_keys) == EXPECTED_UNEXPECTED
    assert ours.cls.predictions.decoder.weight is ours.bert.embeddings.word_embeddings.weight  # still tied
    ours.eval()

    ids, segments, kpm = _batch()
    with torch.no_grad():
        logits, out = ours(ids, segments, kpm)
        ref = theirs(input_ids=ids, token_type_ids=segments, attention_mask=(~kpm).long())
    assert logits.shape == ref.logits.shape == (2, 12, V)
    assert float((logits - ref.logits).abs().max()) <= TOL
    assert torch.equal(logits.argmax(-1), ref.logits.argmax(-1))
