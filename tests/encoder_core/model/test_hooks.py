"""The named hook points: on MiniLM against transformers' BertModel on the same files (hidden states,
attentions, a per-head mask, each sublayer's output read with PyTorch hooks); replacements against the layer
written out by hand; a run started at layer k against the full run; a plain run against a hooked one, bit
for bit; and the documented names against the ones a forward pass reaches."""

import re
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from hf_reference import reference_run

from encoder_core.model import model as model_module
from encoder_core.model import self_attention
from encoder_core.model.hooks import (
    BLOCK_HOOKS,
    NO_HOOK,
    HookPoints,
    hook_names,
    run_with_cache,
    run_with_hooks,
)
from encoder_core.model.model import teaching_model

ROOT = Path(__file__).resolve().parents[3]
TOL = 1e-4  # as test_pretrained.py: float32 sums over d_model = 384
SENTENCES = [("The cat sat on the mat.", None), ("How old are you?", "I am twenty years old."), ("Hi", None)]


@pytest.fixture(scope="module")
def batch(minilm):
    tok = minilm.tokenizer
    return tok.pad([tok.encode(a, b) for a, b in SENTENCES])


def hf_run(reference, batch, head_mask=None):
    """transformers' outputs, plus what each layer's sublayers returned, read with PyTorch forward hooks.
    head_mask (L, H) scales each head's slice of the context before W_O: what transformers' head_mask did
    (it multiplied the attention probabilities; transformers 5 has no such argument any more)."""
    seen, handles = {}, []
    d_head = reference.config.hidden_size // reference.config.num_attention_heads
    for i, layer in enumerate(reference.encoder.layer):

        def keep(name, i=i):
            def hook(module, args, output):
                seen[f"blocks.{i}.{name}"] = output[0] if isinstance(output, tuple) else output

            return hook

        handles.append(layer.attention.self.register_forward_hook(keep("attn.head_out")))
        handles.append(layer.attention.output.dense.register_forward_hook(keep("attn.out")))
        handles.append(layer.attention.register_forward_hook(keep("resid_mid")))
        handles.append(layer.intermediate.register_forward_hook(keep("ffn.activated")))
        if head_mask is not None:

            def scale(module, args, i=i):
                (context,) = args
                per_head = context.unflatten(-1, (-1, d_head)) * head_mask[i][:, None]
                return (per_head.flatten(-2),)

            handles.append(layer.attention.output.dense.register_forward_pre_hook(scale))
    try:
        with torch.inference_mode():
            out = reference_run(reference, batch)
    finally:
        for h in handles:
            h.remove()
    return out, seen


def assert_real_rows_close(ours, theirs, real, what):
    diff = (ours - theirs).abs()[real].max().item()  # pad rows are never read
    assert diff <= TOL, f"{what}: max abs diff {diff}"


@pytest.mark.parametrize("masked", [False, True])
def test_every_hook_on_minilm_equals_transformers(minilm, minilm_reference, batch, masked):
    c = minilm.config
    head_mask = None
    if masked:  # a knocked-out head, a halved one and a doubled one in every layer
        head_mask = torch.ones(c.n_layers, c.n_heads)
        for i in range(c.n_layers):
            head_mask[i, i % c.n_heads], head_mask[i, (i + 3) % c.n_heads], head_mask[i, (i + 7) % c.n_heads] = (
                0,
                0.5,
                2,
            )
    ref, seen = hf_run(minilm_reference, batch, head_mask)
    with torch.inference_mode():
        out, cache = run_with_cache(
            minilm.model, batch.ids, batch.segments, batch.key_padding_mask, head_mask=head_mask, need_weights=False
        )
    real = ~batch.key_padding_mask
    assert len(ref.hidden_states) == c.n_layers + 1 and len(out.hidden_states) == c.n_layers + 1
    assert_real_rows_close(cache["embed"], ref.hidden_states[0], real, "embed")
    for i in range(c.n_layers):
        assert_real_rows_close(cache[f"blocks.{i}.resid_post"], ref.hidden_states[i + 1], real, f"layer {i}")
        assert torch.equal(cache[f"blocks.{i}.resid_post"], out.hidden_states[i + 1])
        for name in ("attn.out", "resid_mid", "ffn.activated"):
            assert_real_rows_close(cache[f"blocks.{i}.{name}"], seen[f"blocks.{i}.{name}"], real, f"{i} {name}")
        context = seen[f"blocks.{i}.attn.head_out"]  # before the emulated mask, which scales it on the way to W_O
        if head_mask is not None:
            context = (context.unflatten(-1, (c.n_heads, c.d_head)) * head_mask[i][:, None]).flatten(-2)
        head_out = cache[f"blocks.{i}.attn.head_out"].transpose(1, 2).flatten(-2)  # (B, T, D) as transformers'
        assert_real_rows_close(head_out, context, real, f"{i} head_out")
        pattern = cache[f"blocks.{i}.attn.pattern"]  # the softmax's, before the head mask, as transformers'
        rows = real[:, None, :, None].expand_as(pattern)
        assert (pattern - ref.attentions[i]).abs()[rows].max().item() <= TOL, f"pattern {i}"


def test_the_knocked_out_head_adds_nothing_and_its_weights_are_kept(minilm, batch):
    head_mask = torch.ones(minilm.config.n_layers, minilm.config.n_heads)
    head_mask[2, 5] = 0.0
    with torch.inference_mode():
        _, cache = run_with_cache(minilm.model, batch.ids, batch.segments, batch.key_padding_mask, head_mask=head_mask)
    assert float(cache["blocks.2.attn.head_out"][:, 5].abs().max()) == 0.0
    assert float(cache["blocks.2.attn.head_out"][:, 4].abs().max()) > 0.0
    sums = cache["blocks.2.attn.pattern"][:, 5].sum(-1)[~batch.key_padding_mask]  # each real query's row
    torch.testing.assert_close(sums, torch.ones_like(sums))


def test_attention_scores_are_the_scaled_dot_products_before_the_mask(minilm, batch):
    block = minilm.model.encoder.layer[1]
    with torch.inference_mode():
        _, cache = run_with_cache(minilm.model, batch.ids, batch.segments, batch.key_padding_mask)
        sa, x = block.attention.self, cache["blocks.1.attn.in"]
        q, k = sa.split_heads(sa.query(x)), sa.split_heads(sa.key(x))
    scores = cache["blocks.1.attn.scores"]
    torch.testing.assert_close(scores, q @ k.transpose(-2, -1) / minilm.config.d_head**0.5)
    pad = batch.key_padding_mask[:, None, :].expand(-1, scores.shape[2], -1)
    expected = torch.softmax(scores.masked_fill(pad[:, None], float("-inf")), -1)
    torch.testing.assert_close(cache["blocks.1.attn.pattern"], expected)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_replacing_the_last_ffn_output_gives_the_stream_by_hand(norm):
    """With the last FFN's output replaced by zeros the last layer ends on its resid_mid alone: post-norm,
    LN2(resid_mid); pre-norm, resid_mid, then the final LayerNorm."""
    model = teaching_model(0, norm)
    ids = torch.tensor([[2, 40, 41, 42, 43, 3]])
    last = model.config.n_layers - 1
    with torch.inference_mode():
        out, cache = run_with_cache(
            model, ids, names=[f"blocks.{last}.resid_mid"], replace={f"blocks.{last}.ffn.out": torch.zeros_like}
        )
        plain = model(ids)
        mid = cache[f"blocks.{last}.resid_mid"]
        block = model.encoder.layer[last]
        if norm == "post":
            by_hand = F.layer_norm(
                mid, mid.shape[-1:], block.output.LayerNorm.weight, block.output.LayerNorm.bias, 1e-12
            )
        else:
            final = model.encoder.final_norm
            by_hand = F.layer_norm(mid, mid.shape[-1:], final.weight, final.bias, final.eps)
    torch.testing.assert_close(out.hidden, by_hand)
    assert not torch.allclose(out.hidden, plain.hidden, atol=1e-3)  # the replacement did change the output


def test_a_pattern_that_reads_only_itself_makes_attention_w_o_of_the_values():
    """Each query reading only its own key: every head's output is its own value vector, so attention adds
    W_O (W_V x + b_V) + b_O, written out here with F.linear."""
    model = teaching_model(0)
    ids = torch.tensor([[2, 40, 41, 42, 43, 3]])
    T = ids.shape[1]
    with torch.inference_mode():
        _, cache = run_with_cache(
            model,
            ids,
            names=["blocks.0.attn.in", "blocks.0.attn.out", "blocks.0.attn.pattern"],
            replace={"blocks.0.attn.pattern": lambda w: torch.eye(T).expand_as(w).clone()},
        )
        block = model.encoder.layer[0]
        v = F.linear(cache["blocks.0.attn.in"], block.attention.self.value.weight, block.attention.self.value.bias)
        by_hand = F.linear(v, block.attention.output.dense.weight, block.attention.output.dense.bias)
    assert torch.equal(cache["blocks.0.attn.pattern"][0, 0], torch.eye(T))  # the cache holds what was used
    torch.testing.assert_close(cache["blocks.0.attn.out"], by_hand)


def test_replacing_what_attention_reads_leaves_the_residual_alone():
    """Post-norm: attn.in is x, and the skip adds x too; replacing attn.in by zeros leaves the skip's x, so
    resid_mid = LN1(x + W_O(attention over the bias vectors alone) + b_O)."""
    model = teaching_model(0)
    ids = torch.tensor([[2, 40, 41, 42, 3]])
    with torch.inference_mode():
        _, cache = run_with_cache(
            model,
            ids,
            names=["blocks.0.resid_pre", "blocks.0.resid_mid"],
            replace={"blocks.0.attn.in": torch.zeros_like},
        )
        block = model.encoder.layer[0]
        x = cache["blocks.0.resid_pre"]
        # zeros in: every key is b_K, so every head attends uniformly to values all equal to b_V
        added = F.linear(block.attention.self.value.bias.expand_as(x), block.attention.output.dense.weight)
        added = added + block.attention.output.dense.bias
        ln = block.attention.output.LayerNorm
        by_hand = F.layer_norm(x + added, x.shape[-1:], ln.weight, ln.bias, ln.eps)
    torch.testing.assert_close(cache["blocks.0.resid_mid"], by_hand)


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_starting_at_layer_k_from_the_cached_stream_gives_the_same_output(norm):
    model = teaching_model(0, norm)
    ids = torch.tensor([[2, 40, 41, 42, 43, 44, 3], [2, 50, 51, 3, 0, 0, 0]])
    pad = ids == 0
    L = model.config.n_layers
    with torch.inference_mode():
        full, cache = run_with_cache(model, ids, None, pad)
        for k in range(L + 1):
            resid = cache["embed"] if k == 0 else cache[f"blocks.{k - 1}.resid_post"]
            part = model(ids, None, pad, start_at=k, resid=resid)
            assert torch.equal(part.hidden, full.hidden), k
            assert len(part.attentions) == L - k
            assert all(torch.equal(a, b) for a, b in zip(part.attentions, full.attentions[k:]))
            assert len(part.hidden_states) == L - k + 1 + (norm == "pre")


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_hooks_that_only_read_change_nothing_to_the_bit(norm, need_weights):
    model = teaching_model(0, norm)
    ids = torch.tensor([[2, 40, 41, 42, 43, 44, 3], [2, 50, 51, 3, 0, 0, 0]])
    pad = ids == 0
    reading = [n for n in hook_names(model.config) if not n.endswith(("scores", "pattern"))]
    with torch.inference_mode():
        plain = model(ids, None, pad, need_weights=need_weights)
        hooked, cache = run_with_cache(model, ids, None, pad, names=reading, need_weights=need_weights)
        every, _ = run_with_cache(model, ids, None, pad, need_weights=True)  # the weights path throughout
        weighted = model(ids, None, pad, need_weights=True)
    assert len(plain.hidden_states) == len(hooked.hidden_states) == model.config.n_layers + 1 + (norm == "pre")
    assert all(torch.equal(a, b) for a, b in zip(plain.hidden_states, hooked.hidden_states))
    assert all(torch.equal(a, b) for a, b in zip(weighted.hidden_states, every.hidden_states))
    assert set(cache) == set(reading)
    if norm == "pre":
        assert torch.equal(cache["final_norm"], plain.hidden)


def test_a_plain_run_keeps_nothing_and_takes_the_fused_kernel(monkeypatch):
    """No hooks asked: no weights matrix is made (the explicit attention() never runs) and no hook keeps a tensor."""
    model = teaching_model(0)
    ids = torch.tensor([[2, 40, 41, 42, 3]])

    def refuse(*args, **kwargs):
        raise AssertionError("the weights path ran")

    monkeypatch.setattr(self_attention, "attention", refuse)
    with torch.inference_mode():
        model(ids, need_weights=False)
        run_with_cache(model, ids, names=["blocks.0.resid_mid"], need_weights=False)
        with pytest.raises(AssertionError, match="weights path"):  # asking for a pattern does take it
            run_with_cache(model, ids, names=["blocks.0.attn.pattern"], need_weights=False)
    assert NO_HOOK("embed", ids) is ids and not NO_HOOK.wants("embed")


def test_a_key_mask_is_the_key_padding_rule():
    model = teaching_model(0, "pre")
    ids = torch.tensor([[2, 40, 41, 42, 43, 3]])
    hide = torch.zeros_like(ids, dtype=torch.bool)
    hide[0, 2] = True
    with torch.inference_mode():
        masked, cache = run_with_cache(model, ids, key_mask=hide)
        padded = model(ids, key_padding_mask=hide)
        both = model(ids, key_padding_mask=hide, key_mask=hide)
        causal, causal_cache = run_with_cache(model, ids, key_mask=hide, causal=True)
    assert torch.equal(masked.hidden, padded.hidden) and torch.equal(both.hidden, padded.hidden)
    for i in range(model.config.n_layers):
        assert float(cache[f"blocks.{i}.attn.pattern"][..., 2].abs().max()) == 0.0  # no query reads key 2
        above = torch.ones(6, 6, dtype=torch.bool).triu(1)
        assert float(causal_cache[f"blocks.{i}.attn.pattern"][..., above].abs().max()) == 0.0
    with pytest.raises(ValueError, match="every key"):
        model(ids, key_mask=torch.ones_like(hide))


def test_unknown_names_and_reshaping_replacements_are_refused():
    model = teaching_model(0)
    ids = torch.tensor([[2, 40, 3]])
    with pytest.raises(ValueError, match="blocks.0.attn.patern"):
        run_with_cache(model, ids, names=["blocks.0.attn.patern"])
    with pytest.raises(ValueError, match="final_norm"):  # a post-norm model has none
        run_with_hooks(model, ids, replace={"final_norm": torch.zeros_like})
    with pytest.raises(ValueError, match="keep its shape"):
        run_with_hooks(model, ids, replace={"embed": lambda x: x[:, :1]})
    with pytest.raises(ValueError, match="start_at needs resid"):
        model(ids, start_at=1)
    with pytest.raises(ValueError, match="head_mask"):
        model(ids, head_mask=torch.ones(3, 3))


def documented_names(text: str) -> set[str]:
    """The first word of each row of the hook table in model.py's docstring."""
    table = text.split("trace stage\n", 1)[1].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^([a-z_]+(?:\.[a-z_]+)?)\s+\(", table, re.M)}


@pytest.mark.parametrize("norm", ["post", "pre"])
def test_every_documented_hook_is_reached_and_every_reached_hook_documented(norm):
    model = teaching_model(0, norm)
    documented = documented_names(model_module.__doc__)
    assert documented == set(BLOCK_HOOKS) | {"embed.token", "embed", "final_norm"}
    with torch.inference_mode():
        _, cache = run_with_cache(model, torch.tensor([[2, 40, 41, 3]]))
    assert list(cache) == list(hook_names(model.config))  # each reached once, in the order of the table
    reached = {re.sub(r"^blocks\.\d+\.", "", name) for name in cache}
    assert reached == documented - ({"final_norm"} if norm == "post" else set())
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    assert all(f"`{name}`" in architecture for name in documented), documented


def test_hook_points_share_one_cache_across_blocks():
    hooks = HookPoints(["blocks.1.embed_like"])
    inner = hooks.within("blocks.1.")
    x = torch.ones(2)
    assert inner("embed_like", x) is x and hooks.cache == {"blocks.1.embed_like": x}
    assert inner.wants("embed_like") and not hooks.within("blocks.0.").wants("embed_like")
