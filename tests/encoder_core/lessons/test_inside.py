"""Looking inside: the knockouts, the five explanations, the rank scores and the logit lens, each against an
independent computation (transformers' BertModel / BertForMaskedLM, numpy, a layer written out by hand)."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from independent import hf_config, hf_masked_lm

from encoder_core.lessons import inside as core
from encoder_core.model.config import TEACHING_INIT_STD, preset
from encoder_core.model.hooks import run_with_cache
from encoder_core.model.model import init_bert_weights
from encoder_core.model.output_heads import MaskedLanguageModel
from encoder_core.model.tokenizer import MASK


@pytest.fixture(scope="module")
def mlm(minilm_mlm):
    model, tokenizer, _ = minilm_mlm
    return model, tokenizer


@pytest.fixture(scope="module", params=["minilm", "small"])
def any_mlm(request):
    """Both models the lesson runs on: MiniLM under the lab's head, and the lab's small trained MLM."""
    if request.param == "minilm":
        model, tokenizer, _ = request.getfixturevalue("minilm_mlm")
    else:
        model, tokenizer, _ = request.getfixturevalue("trained_mlm")
    return model, tokenizer


@pytest.fixture(scope="module")
def pre_mlm(tok):
    """A pre-norm MLM at the teaching init, with the small models' tokenizer: the lesson's pre-norm path."""
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = MaskedLanguageModel(preset("small", norm="pre"))
        init_bert_weights(model.bert, std=TEACHING_INIT_STD)  # the head keeps PyTorch's default init
    return model.eval(), tok


# ---- input ----------------------------------------------------------------------------------------------


def test_a_sentence_with_one_mask_is_used_as_typed(mlm):
    _, tok = mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    assert cloze.tokens[cloze.position] == MASK and not cloze.notices and not cloze.fallback
    assert len(cloze.tokens) == 12  # [CLS], ten words, [SEP]: the benchmark's length


def test_no_mask_hides_the_last_whole_word_or_the_one_asked(mlm):
    _, tok = mlm
    cloze = core.prepare_cloze(tok, "the cat sat on the mat .")
    assert cloze.tokens == ["[CLS]", "the", "cat", "sat", "on", "the", MASK, ".", "[SEP]"]
    assert "no [MASK]" in cloze.notices[0] and "“mat”" in cloze.notices[0]
    chosen = core.prepare_cloze(tok, "the cat sat on the mat .", hide=2)
    assert chosen.tokens[chosen.position] == MASK and chosen.position == 2  # "cat"


def test_several_masks_use_the_first_and_say_so(mlm):
    _, tok = mlm
    cloze = core.prepare_cloze(tok, "the [MASK] sat on the [MASK] .")
    assert cloze.position == 2 and cloze.tokens.count(MASK) == 2
    assert "2 [MASK]s" in cloze.notices[0] and "first" in cloze.notices[0]


def test_a_long_sentence_is_cut_and_a_mask_cut_off_falls_back(mlm):
    _, tok = mlm
    long_text = "the [MASK] sat . " + "word " * 200
    cloze = core.prepare_cloze(tok, long_text)
    assert len(cloze.ids) == core.MAX_TOKENS and cloze.position == 2 and "cut" in cloze.notices[0]
    late = core.prepare_cloze(tok, "word " * 200 + "the [MASK] sat .")
    assert late.fallback and late.text == core.DEFAULT_SENTENCE and "after the first" in late.notices[0]


@pytest.mark.parametrize("text", ["[MASK]", "[MASK] [SEP] [CLS]", "   ", "[MASK] [PAD]"])
def test_only_special_tokens_or_nothing_falls_back_with_a_message(mlm, text):
    _, tok = mlm
    cloze = core.prepare_cloze(tok, text)
    assert cloze.fallback and cloze.notices and cloze.tokens[cloze.position] == MASK


def test_odd_text_never_raises(mlm):
    _, tok = mlm
    for text in ["🙂🙂", "<script>alert(1)</script>", "\u200b\u200b", "שלום [MASK] עולם", "[mask] lower case", "."]:
        cloze = core.prepare_cloze(tok, text)
        assert cloze.tokens[cloze.position] == MASK


# ---- knockouts -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["any", "pre"])
def test_the_unperturbed_stream_is_the_models_own_forward(any_mlm, pre_mlm, which):
    """The same hidden states, as many of them (L + 1 post-norm, L + 2 pre-norm) and bit for bit."""
    model, tok = any_mlm if which == "any" else pre_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    ids = torch.tensor([cloze.ids])
    with torch.inference_mode():
        states, _ = core.stream(model, ids)
        logits, out = model(ids, need_weights=False)
    assert len(states) == len(out.hidden_states) == model.config.n_layers + 1 + (model.config.norm == "pre")
    assert all(torch.equal(a, b) for a, b in zip(states, out.hidden_states))
    assert torch.equal(states[-1], out.hidden)


def test_pre_norm_head_knockouts_equal_the_whole_run_with_that_head_masked(pre_mlm):
    """The knockouts start each layer's run from the clean stream there; the whole run from the ids, with that
    head masked, must give the same change."""
    model, tok = pre_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    answer, f, changes = core.head_knockouts(model, cloze)
    L, H = model.config.n_layers, model.config.n_heads
    for layer, head in [(0, 0), (L - 1, H - 1), (1, 2)]:
        mask = torch.ones(L, H)
        mask[layer, head] = 0.0
        with torch.inference_mode():
            logits, _ = model(torch.tensor([cloze.ids]), head_mask=mask, need_weights=False)
        expected = float(torch.log_softmax(logits[0, cloze.position], -1)[answer]) - f
        assert abs(expected - float(changes[layer, head])) < 1e-5, (layer, head)
    assert float(changes.abs().max()) > 1e-4  # the knockouts did change something


def test_a_head_knockout_equals_the_same_knockout_hooked_into_bert_for_masked_lm(mlm):
    model, tok = mlm
    ours, hf = copy.deepcopy(model).double(), hf_masked_lm(model)[0].double()
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    answer, f, changes = core.head_knockouts(ours, cloze)
    ids = torch.tensor([cloze.ids])
    dh = model.config.d_head

    def hf_log_prob(layer=None, head=None):
        def zero_head(module, args):
            (context,) = args
            context = context.clone()
            context[..., head * dh : (head + 1) * dh] = 0.0  # that head's slice of the context, before W_O
            return (context,)

        handle = None
        if layer is not None:
            handle = hf.bert.encoder.layer[layer].attention.output.dense.register_forward_pre_hook(zero_head)
        try:
            with torch.inference_mode():
                logits = hf(ids).logits[0, cloze.position]
        finally:
            if handle is not None:
                handle.remove()
        return float(torch.log_softmax(logits, -1)[answer])

    base = hf_log_prob()
    assert abs(base - f) < 1e-5
    for layer, head in [(0, 0), (2, 5), (5, 7), (5, 11), (3, 2)]:
        assert abs((hf_log_prob(layer, head) - base) - float(changes[layer, head])) < 1e-5, (layer, head)


def test_the_float32_head_knockouts_match_float64(mlm):
    model, tok = mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    _, _, changes32 = core.head_knockouts(model, cloze)
    _, _, changes64 = core.head_knockouts(copy.deepcopy(model).double(), cloze)
    assert float((changes32 - changes64).abs().max()) < 1e-4


def test_knocking_out_every_head_of_a_layer_leaves_the_residual_path(any_mlm):
    """Heads zeroed before W_O: the attention sublayer adds only W_O's bias, so the layer is
    LN2(h + FFN(h)) with h = LN1(x + b_O): written out here by hand."""
    model, tok = any_mlm
    L, H = model.config.n_layers, model.config.n_heads
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    ids = torch.tensor([cloze.ids])
    for layer in range(L):
        mask = torch.ones(1, L, H)
        mask[0, layer] = 0.0
        with torch.inference_mode():
            states, _ = core.stream(model, ids, head_mask=mask)
            block = model.bert.encoder.layer[layer]
            x = states[layer]
            ln1, ln2 = block.attention.output.LayerNorm, block.output.LayerNorm
            h = F.layer_norm(x + block.attention.output.dense.bias, (x.shape[-1],), ln1.weight, ln1.bias, ln1.eps)
            ffn = F.linear(F.gelu(F.linear(h, block.intermediate.dense.weight, block.intermediate.dense.bias)),
                           block.output.dense.weight, block.output.dense.bias)  # fmt: skip
            by_hand = F.layer_norm(h + ffn, (x.shape[-1],), ln2.weight, ln2.bias, ln2.eps)
        torch.testing.assert_close(states[layer + 1], by_hand, atol=1e-5, rtol=1e-5)


def test_a_token_knockout_equals_the_encoder_run_with_that_key_padded(any_mlm):
    """Hiding a token as a key is what a key padding mask does: the model's own forward, one token at a time."""
    model, tok = any_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    answer, f = core.clean_answer(model, cloze)
    changes = core.token_knockouts(model, cloze, answer, f)
    ids = torch.tensor([cloze.ids])
    assert changes[cloze.position] == 0.0
    for j in [0, 1, 3, len(cloze.ids) - 1]:
        drop = torch.zeros_like(ids, dtype=torch.bool)
        drop[0, j] = True
        with torch.inference_mode():
            logits, _ = model(ids, key_padding_mask=drop, need_weights=False)
        expected = float(torch.log_softmax(logits[0, cloze.position], -1)[answer]) - f
        assert abs(expected - float(changes[j])) < 1e-4, j


def test_the_most_important_head_is_the_largest_drop(mlm):
    model, tok = mlm
    k = core.knockouts(model, tok, core.prepare_cloze(tok, core.DEFAULT_SENTENCE))
    layer, head = k.most_important_head()
    assert float(k.heads[layer, head]) == float(k.heads.min()) < 0
    assert 0 < k.probability <= 1 and k.answer == tok.vocab[k.answer_id]


# ---- explanations ----------------------------------------------------------------------------------------


def numpy_rollout(attentions: list[np.ndarray]) -> np.ndarray:
    """Abnar & Zuidema's rollout written independently: mean heads, add I, renormalise, multiply up."""
    result = None
    for a in attentions:  # (H, T, T) each, first layer first
        m = a.mean(axis=0)
        m = 0.5 * m + 0.5 * np.eye(m.shape[0])
        m = m / m.sum(axis=1, keepdims=True)
        result = m if result is None else m @ result
    return result


def test_rollout_equals_numpy_on_bert_models_attentions(minilm):
    transformers = pytest.importorskip("transformers")
    hf = transformers.BertModel(hf_config(transformers, minilm.config), add_pooling_layer=False).eval()
    state = {k: v for k, v in minilm.model.state_dict().items() if not k.startswith("pooler")}
    hf.load_state_dict(state, strict=False)
    enc = minilm.tokenizer.encode(core.DEFAULT_SENTENCE)
    ids = torch.tensor([enc.ids])
    with torch.inference_mode():
        theirs = hf(ids, output_attentions=True).attentions
        ours = minilm.model(ids).attentions
    expected = numpy_rollout([a[0].double().numpy() for a in theirs])
    got = core.attention_rollout(torch.stack([a[0] for a in ours])).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)


def test_rollout_of_one_layer_of_uniform_attention_by_hand():
    a = torch.full((1, 2, 3, 3), 1 / 3)
    expected = 0.5 * torch.full((3, 3), 1 / 3) + 0.5 * torch.eye(3)
    torch.testing.assert_close(core.attention_rollout(a), expected.double())


@pytest.mark.parametrize("which", ["any", "pre"])
def test_norm_based_attention_sums_to_the_attention_output(any_mlm, pre_mlm, which):
    """Σ_j Σ_h α_h(q, j) f_h(x_j) is the attention sublayer's output at q without W_O's bias; the norm of each
    key's term, recomputed head by head with explicit slices. x is what the last attention reads: the layer's
    input post-norm, its LN1 pre-norm (taken here from the layer's input by hand)."""
    model, tok = any_mlm if which == "any" else pre_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    ids, q = torch.tensor([cloze.ids]), cloze.position
    block = model.bert.encoder.layer[-1]
    with torch.inference_mode():
        states, attentions = core.stream(model, ids, need_weights=True)
        layer_input, w = states[model.config.n_layers - 1], attentions[-1][0]
        ln1 = block.attention.output.LayerNorm
        pre = model.config.norm == "pre"
        x = (F.layer_norm(layer_input, ln1.normalized_shape, ln1.weight, ln1.bias, ln1.eps) if pre else layer_input)[0]
        got = core.norm_based(model, x, w, q)
        c = model.config
        v = block.attention.self.value(x)
        terms = torch.zeros(len(cloze.ids), c.d_model)
        for h in range(c.n_heads):
            cols = slice(h * c.d_head, (h + 1) * c.d_head)
            terms += w[h, q, :, None] * (v[:, cols] @ block.attention.output.dense.weight[:, cols].T)
        _, _, trace = block(layer_input, return_trace=True)
    torch.testing.assert_close(got, terms.norm(dim=-1).double(), atol=1e-5, rtol=1e-5)
    # the lesson's explanation hands norm_based that same x (read at the hook point attn.in)
    lesson = core.explanations(model, tok, cloze, core.clean_answer(model, cloze)[0], steps=1).norm
    torch.testing.assert_close(lesson, got)
    with_bias = terms.sum(0) + block.attention.output.dense.bias
    torch.testing.assert_close(with_bias, trace["attention"][0, q], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("baseline", core.BASELINES)
def test_integrated_gradients_are_complete_within_one_percent_at_64_steps(mlm, baseline):
    model, tok = mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    answer, _ = core.clean_answer(model, cloze)
    ig = core.integrated_gradients(model, tok, cloze, answer, baseline, 64)
    assert ig.completeness_error < 0.01, (ig.total, ig.gap)
    assert ig.scores[cloze.position] == 0.0  # the [MASK] is the question: it does not move
    assert abs(ig.gap) > 0.1  # a real gap, so 1% means something


def test_integrated_gradients_with_one_step_are_far_from_complete(mlm):
    """The check above can fail: one step is a single gradient, and it misses the gap."""
    model, tok = mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    answer, _ = core.clean_answer(model, cloze)
    assert core.integrated_gradients(model, tok, cloze, answer, "zeros", 1).completeness_error > 0.01


def test_gradient_x_input_matches_a_finite_difference(any_mlm):
    """Scaling every word vector by (1 + ε) changes f by about ε Σ_j x_j·∂f/∂x_j."""
    model, tok = any_mlm
    model = copy.deepcopy(model).double()
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    answer, _ = core.clean_answer(model, cloze)
    gx = core.gradient_x_input(model, cloze, answer)
    ids = torch.tensor([cloze.ids])
    x = core.word_vectors(model, ids).detach()
    eps = 1e-6
    with torch.inference_mode():
        f = [core.answer_log_probs(model, core.stream(model, ids, words=x * s)[0][-1], cloze.position)[0, answer]
             for s in (1 - eps, 1 + eps)]  # fmt: skip
    assert abs(float(f[1] - f[0]) / (2 * eps) - float(gx.sum())) < 1e-5


def test_the_shared_model_is_left_as_it_was(mlm):
    model, tok = mlm
    before = {k: v.clone() for k, v in model.state_dict().items() if "layer.5" in k}
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    core.explanations(model, tok, cloze, core.clean_answer(model, cloze)[0], "zeros", 4)
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(model.state_dict()[k], v) for k, v in before.items())
    assert not model.training


# ---- scoring ---------------------------------------------------------------------------------------------


def test_spearman_by_hand():
    assert core.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert core.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # 1 - 6 Σd² / (n(n² - 1)) with no ties: ranks (1, 2, 3, 4, 5) against (2, 1, 4, 3, 5), Σd² = 4
    assert core.spearman([1, 2, 3, 4, 5], [0.2, 0.1, 0.4, 0.3, 0.9]) == pytest.approx(1 - 6 * 4 / (5 * 24))
    assert math.isnan(core.spearman([1, 1, 1], [1, 2, 3]))


def test_spearman_with_ties_is_pearson_of_mean_ranks():
    np.testing.assert_array_equal(core.ranks([3.0, 1.0, 3.0, 2.0]), [3.5, 1.0, 3.5, 2.0])
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.integers(0, 4, 9).astype(float), rng.normal(size=9)
        ra, rb = core.ranks(a), core.ranks(b)
        assert core.spearman(a, b) == pytest.approx(np.corrcoef(ra, rb)[0, 1])
        # with no ties the ranks are the argsort of the argsort
        np.testing.assert_array_equal(rb, np.argsort(np.argsort(b)) + 1)


def test_agreement_scores_every_method_on_every_token_but_the_mask(mlm):
    model, tok = mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    k = core.knockouts(model, tok, cloze)
    e = core.explanations(model, tok, cloze, k.answer_id)
    scores = core.agreement(e, k, cloze)
    assert set(scores) == set(core.METHODS)
    keep = core.scored_positions(cloze)
    assert cloze.position not in keep and len(keep) == len(cloze.ids) - 1
    assert scores["raw"] == pytest.approx(core.spearman(e.raw[keep].tolist(), (-k.tokens[keep]).tolist()))
    assert all(-1 <= v <= 1 for v in scores.values())
    assert core.best_method(scores) == max(scores, key=scores.get)


def test_the_sweep_scores_each_sentence_as_one_sentence_alone(any_mlm):
    model, tok = any_mlm
    sentences = list(core.CLOZE_SENTENCES[:3])
    seen = []
    result = core.sweep(model, tok, sentences, "[MASK]", 8, progress=lambda d, n: seen.append((d, n)))
    assert seen == [(1, 3), (2, 3), (3, 3)] and result.rho.shape == (3, len(core.METHODS))
    cloze = core.prepare_cloze(tok, sentences[1])
    k = core.knockouts(model, tok, cloze)
    alone = core.agreement(core.explanations(model, tok, cloze, k.answer_id, "[MASK]", 8), k, cloze)
    np.testing.assert_allclose(result.rho[1], [alone[m] for m in core.METHODS], atol=1e-9)
    assert sum(result.wins.values()) == 3
    assert result.mean["raw"] == pytest.approx(np.nanmean(result.rho[:, 0]))


def test_the_fixed_sentences_each_hold_one_mask(mlm):
    _, tok = mlm
    assert 45 <= len(core.CLOZE_SENTENCES) <= 55 and len(set(core.CLOZE_SENTENCES)) == len(core.CLOZE_SENTENCES)
    for text in core.CLOZE_SENTENCES:
        cloze = core.prepare_cloze(tok, text)
        assert not cloze.notices and cloze.tokens.count(MASK) == 1


# ---- logit lens and the prediction's answer ---------------------------------------------------------------


def assert_lens_reads(lens, stage: int, logp, answer: int) -> None:
    """The lens at this stage gives the answer's rank and probability under these log-probabilities."""
    assert lens.rank[stage] == int((logp > logp[answer]).sum()) + 1
    assert lens.probability[stage] == pytest.approx(float(logp[answer].exp()), rel=1e-5)


def test_the_logit_lens_ends_on_the_models_answer(any_mlm):
    model, tok = any_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    lens = core.logit_lens(model, tok, cloze)
    answer, f = core.clean_answer(model, cloze)
    assert len(lens.rank) == len(lens.probability) == len(lens.top) == model.config.n_layers + 1
    assert lens.rank[-1] == 1 and lens.top[-1] == lens.answer == tok.vocab[answer]
    assert lens.probability[-1] == pytest.approx(math.exp(f), rel=1e-5)
    with torch.inference_mode():
        _, out = model(torch.tensor([cloze.ids]), need_weights=False)
        logp = torch.log_softmax(model.cls.predictions(out.hidden_states[2][0, cloze.position]), -1)
    assert_lens_reads(lens, 2, logp, answer)


def test_the_logit_lens_of_a_pre_norm_model_reads_every_stage_through_the_final_norm(pre_mlm):
    model, tok = pre_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    lens = core.logit_lens(model, tok, cloze)
    answer, f = core.clean_answer(model, cloze)
    assert len(lens.rank) == model.config.n_layers + 1  # embeddings, then after each layer, as post-norm
    assert lens.probability[-1] == pytest.approx(math.exp(f), rel=1e-5)
    with torch.inference_mode():
        _, cache = run_with_cache(model.bert, torch.tensor([cloze.ids]), names=["blocks.0.resid_post"])
        logp = torch.log_softmax(
            model.cls.predictions(model.bert.encoder.final_norm(cache["blocks.0.resid_post"])[0, cloze.position]), -1
        )
    assert_lens_reads(lens, 1, logp, answer)


def test_the_head_question_offers_the_answer_and_three_tempting_heads(any_mlm):
    model, tok = any_mlm
    cloze = core.prepare_cloze(tok, core.DEFAULT_SENTENCE)
    k = core.knockouts(model, tok, cloze)
    with torch.inference_mode():
        _, att = core.stream(model, torch.tensor([cloze.ids]), need_weights=True)
    choice = core.head_choice(k, torch.stack([a[0] for a in att]), cloze.position)
    assert len(set(choice.candidates)) == 4 and choice.candidates == sorted(choice.candidates)
    assert choice.candidates[choice.answer] == k.most_important_head()
    assert choice.reasons[choice.answer] == "answer" and choice.reasons.count("answer") == 1
    assert min(choice.effects) == choice.effects[choice.answer]


# ---- the predictions: margins, and answers that move with the sentence ----------------------------------

ORDINARY = (
    "the ferry was late because of [MASK] over the harbour",
    "she put the milk in the [MASK] to keep it cold",
    "he opened the door with a [MASK]",
    "paris is the capital of [MASK]",
    "the dog chased the [MASK] up the tree",
    "i drink my coffee with milk and [MASK]",
)


def choices(model, tok, text):
    cloze = core.prepare_cloze(tok, text)
    k = core.knockouts(model, tok, cloze)
    a = core.attention_maps(model, cloze)
    return cloze, k, a, core.token_choice(k, a, cloze), core.head_choice(k, a, cloze.position)


@pytest.mark.parametrize("text", [core.DEFAULT_SENTENCE, *ORDINARY[:3]])
def test_the_token_question_offers_the_largest_drop_and_only_tokens_apart_from_it(any_mlm, text):
    model, tok = any_mlm
    cloze, k, attentions, choice, _ = choices(model, tok, text)
    keep = core.scored_positions(cloze)
    best = min(keep, key=lambda i: float(k.tokens[i]))
    assert choice.candidates[choice.answer] == best and choice.candidates == sorted(set(choice.candidates))
    assert 2 <= len(choice.candidates) <= core.N_OPTIONS and cloze.position not in choice.candidates
    for i, change in zip(choice.candidates, choice.changes, strict=True):
        assert change == pytest.approx(float(k.tokens[i]))
        assert i == best or change >= float(k.tokens[best]) + core.KNOCKOUT_MARGIN  # no coin toss
    assert choice.close == [i for i in keep if i != best and float(k.tokens[i]) < float(k.tokens[best]) + 0.3]
    raw = attentions[-1, :, cloze.position].mean(0)  # as the "raw attention" explanation reads it
    assert choice.attention == pytest.approx([float(raw[i]) for i in choice.candidates])
    assert choice.reasons[choice.answer] == "answer" and choice.reasons.count("answer") == 1


@pytest.mark.parametrize("text", [core.DEFAULT_SENTENCE, *ORDINARY[:3]])
def test_the_head_question_offers_only_heads_apart_from_the_right_one(any_mlm, text):
    model, tok = any_mlm
    cloze, k, attentions, _, choice = choices(model, tok, text)
    best = float(k.heads.min())
    assert choice.candidates[choice.answer] == k.most_important_head()
    for c, effect, (peak, at) in zip(choice.candidates, choice.effects, choice.peaks, strict=True):
        assert effect == pytest.approx(float(k.heads[c]))
        assert c == k.most_important_head() or effect >= best + core.KNOCKOUT_MARGIN
        row = attentions[c[0], c[1], cloze.position]
        assert peak == pytest.approx(float(row.max())) and at == int(row.argmax())
    L, H = k.heads.shape
    close = [(l, h) for l in range(L) for h in range(H) if (l, h) != k.most_important_head()]
    assert choice.close == [c for c in close if float(k.heads[c]) < best + core.KNOCKOUT_MARGIN]


def test_which_token_matters_most_depends_on_the_sentence(any_mlm):
    """On ordinary sentences the token question is asked, and its right option is not the same word each time."""
    model, tok = any_mlm
    answers = []
    for text in ORDINARY:
        cloze, _, _, choice, _ = choices(model, tok, text)
        assert choice.asked
        answers.append(cloze.tokens[choice.candidates[choice.answer]])
    assert len(set(answers)) >= 3, answers


def test_explanations_within_the_margin_count_and_a_question_needs_one_outside():
    scores = {"raw": 0.38, "rollout": 0.29, "norm": 0.36, "grad_input": -0.05, "integrated": 0.38}
    assert core.best_methods(scores) == ["raw", "rollout", "norm", "integrated"] and core.explanation_asked(scores)
    assert core.best_methods({**scores, "grad_input": 0.3}) == list(core.METHODS)
    assert not core.explanation_asked({**scores, "grad_input": 0.3})  # all within 0.1: nothing to ask
    assert core.best_methods(dict.fromkeys(core.METHODS, float("nan"))) == []
    assert core.best_methods({**scores, "rollout": float("nan")}) == ["raw", "norm", "integrated"]
