"""The block: one sentence through the embeddings and one whole encoder layer; post-norm or pre-norm."""

from __future__ import annotations

import pandas as pd
import streamlit as st
import torch

from encoder_core import MAX_SEED, POST_NORM_STAGES, EncoderBlock, preset
from encoder_core.lessons import block as core
from encoder_core.model import Embeddings, sinusoidal_table
from encoder_core.reference import block_equivalence, to_torch_layer
from ui.frame import sections as lesson
from ui.frame.charts import show_figure
from ui.frame.code import show_code
from ui.frame.inputs import report_encoding, usable_sentence
from ui.frame.params import MAX_TEXT, Param
from ui.frame.quiz_widget import QUIZ_SEED, check_yourself_section
from ui.frame.sections import Section, narrative
from ui.frame.state import ensure_valid
from ui.models import small_model, word_tokenizer
from ui.views import block as fb

CONFIG = preset("small")
DEFAULT_SENTENCE = "the cat sat on the mat"
N_POSITIONS_SHOWN = 64
INIT_LABELS = {
    "bert": f"BERT's std {core.BERT_INIT_STD}",
    "width": f"scaled to BERT-base's width (std {core.width_matched_std(CONFIG.d_model):.3f})",
}
STAGE_LABELS = {
    "input": "input x",
    "attention": "attention",
    "residual_1": "x + attention",
    "norm_1": "LayerNorm 1",
    "ffn_hidden": "FFN expand",
    "ffn_activated": "GELU",
    "ffn_output": "FFN project",
    "residual_2": "+ FFN",
    "norm_2": "LayerNorm 2",
}

PARAMS = [
    Param("block_sentence", DEFAULT_SENTENCE, "text"),
    Param("block_layer", 0, "int", 0, CONFIG.n_layers - 1),
    Param("block_norm", "post", "choice", options=("post", "pre")),
    Param("block_seed", 0, "int", 0, MAX_SEED),
    Param("block_step", "input", "choice", options=POST_NORM_STAGES),
    Param("block_depth", 12, "int", 12, 24),
    Param("block_init", "bert", "choice", options=tuple(INIT_LABELS)),
    QUIZ_SEED,
]
P = {p.key: p for p in PARAMS}


def init_std(key: str) -> float:
    return core.BERT_INIT_STD if key == "bert" else core.width_matched_std(CONFIG.d_model)


@st.cache_data(show_spinner=False, max_entries=64)
def deep_stack(ids: tuple, segments: tuple, depth: int, seed: int, init_std: float) -> core.DeepStackStudy:
    return core.deep_stack_study(list(ids), list(segments), depth, seed, init_std)


@st.cache_data(show_spinner=False)
def param_counts(name: str) -> core.BlockParams:
    return core.block_params(preset(name))


# ---- controls ---------------------------------------------------------------------------

lesson.start("block", PARAMS)
ensure_valid(PARAMS)
st.title("The block")
st.caption(
    "One sentence through the input embeddings and one whole encoder layer: every intermediate tensor, "
    "and what changes when the LayerNorm moves."
)

top = st.columns([4, 1.3, 1.3, 1.1])
top[0].text_input("Sentence", key="block_sentence", max_chars=MAX_TEXT, help="Type any sentence and press Enter.")
top[1].slider("Layer", min_value=int(P["block_layer"].lo), max_value=int(P["block_layer"].hi), key="block_layer")
top[2].radio(
    "LayerNorm placement",
    P["block_norm"].options,
    key="block_norm",
    horizontal=True,
    format_func={"post": "post-norm (BERT)", "pre": "pre-norm"}.get,
)
top[3].number_input("Seed", min_value=0, max_value=MAX_SEED, step=1, key="block_seed", help="This lesson's weights.")

norm = st.session_state["block_norm"]
stages = core.stages_for(norm)
row = st.columns([4, 1.3, 2.4])
row[0].select_slider(
    "Step through the block",
    options=stages,
    key="block_step",
    format_func=lambda s: f"{stages.index(s) + 1}. {STAGE_LABELS[s]}",
    help="The stages in the order this block computes them.",
)
row[1].slider(
    "Deep-stack depth",
    min_value=int(P["block_depth"].lo),
    max_value=int(P["block_depth"].hi),
    key="block_depth",
    help="Blocks in the post-norm vs pre-norm comparison.",
)
row[2].radio("Deep-stack initial weights", tuple(INIT_LABELS), key="block_init", format_func=INIT_LABELS.get)

# ---- compute ----------------------------------------------------------------------------

sentence = usable_sentence(st.session_state["block_sentence"], DEFAULT_SENTENCE)
seed, layer, step = (
    int(st.session_state["block_seed"]),
    int(st.session_state["block_layer"]),
    st.session_state["block_step"],
)
model = small_model(seed, norm)
tokenizer = word_tokenizer()
enc = tokenizer.encode(sentence, max_length=model.config.max_positions, truncate=True)
report_encoding(enc, model.config.max_positions)
tokens = enc.tokens
walk = core.walk_block(model, enc.ids, enc.segments, layer)
d, d_ff = model.config.d_model, model.config.d_ff


def _table(values, cols_prefix: str) -> pd.DataFrame:
    arr = values.detach().numpy()
    frame = pd.DataFrame(arr, columns=[f"{cols_prefix}{j}" for j in range(arr.shape[1])])
    frame.insert(0, "token", tokens)
    return frame


# ---- sections -----------------------------------------------------------------------------


def render_input() -> None:
    parts = walk.embeddings
    narrative(
        f"The model never sees words, only ids. Each of the {len(tokens)} tokens picks a row of three tables "
        f"of width d = {d}: its word's row, its position's row and its segment's row (sentence A = 0, B = 1). "
        "The three are added, then one LayerNorm rescales each token's vector. "
        "Colours: red negative, blue positive, white 0."
    )
    cols = st.columns(3)
    for col, (name, values, what) in zip(
        cols,
        (
            ("token", parts.token, "word-embedding row of each token"),
            ("position", parts.position, "row t of the learned position table"),
            ("segment", parts.segment, "segment-A row, the same for every token of one sentence"),
        ),
    ):
        with col:
            fig = fb.tensor_heatmap(values, tokens, title=f"{name} embedding [T, d]", x_title="feature")
            show_figure(
                fig,
                f"emb_{name}",
                alt=f"The {what}: {values.shape[0]} tokens by {values.shape[1]} features, "
                f"largest magnitude {float(values.abs().max()):.3f}.",
                table=_table(values, "f"),
            )
    normed = core.token_stats(parts.normed)
    cols = st.columns(2)
    with cols[0]:
        show_figure(
            fb.tensor_heatmap(parts.summed, tokens, title="sum: token + position + segment"),
            "emb_sum",
            alt=f"The sum of the three embeddings; its largest magnitude is {float(parts.summed.abs().max()):.3f}.",
            table=_table(parts.summed, "f"),
        )
    with cols[1]:
        show_figure(
            fb.tensor_heatmap(parts.normed, tokens, title="after the embedding LayerNorm (layer 0's input)"),
            "emb_norm",
            alt=f"After LayerNorm every token has mean {float(normed.mean.abs().max()):.1e} or less in size "
            f"and standard deviation {float(normed.std.mean()):.4f}.",
            table=_table(parts.normed, "f"),
        )
    show_code(Embeddings.parts)


def render_positions() -> None:
    pos = core.position_tables(model, N_POSITIONS_SHOWN)
    cap = core.length_cap(model, tokenizer, sentence)
    narrative(
        "Attention on its own ignores order: shuffle the tokens and each one gets the same mix. The position "
        "row is what tells *cat at 2* from *cat at 5*. BERT learns its position table; the original Transformer "
        "used a fixed table of sine and cosine waves, one frequency per pair of features, fast on the left, slow "
        "on the right."
    )
    cols = st.columns(2)
    with cols[0]:
        show_figure(
            fb.position_heatmap(
                pos.sinusoid, title=f"sinusoidal table, first {pos.n_positions} positions", x_title="feature"
            ),
            "pos_sinusoid",
            alt=f"Sine and cosine waves for {pos.n_positions} positions and {d} features, values in [-1, 1].",
            table=pd.DataFrame(pos.sinusoid.numpy()).rename(columns=lambda j: f"f{j}"),
        )
    sim_s = pos.sinusoid_similarity
    with cols[1]:
        show_figure(
            fb.position_heatmap(
                sim_s, title="cosine similarity between sinusoid positions", x_title="position", zrange=(-1, 1)
            ),
            "pos_similarity",
            alt=f"Neighbouring sinusoid positions are similar (cos(0, 1) = {float(sim_s[0, 1]):.3f}), "
            f"distant ones less so (cos(0, {pos.n_positions - 1}) = {float(sim_s[0, -1]):.3f}).",
            table=pd.DataFrame(sim_s.numpy()),
        )
    if pos.learned_similarity is not None:
        sim_l = pos.learned_similarity
        off = pos.learned_off_diagonal()
        show_figure(
            fb.position_heatmap(
                sim_l,
                title="cosine similarity between this model's learned positions",
                x_title="position",
                zrange=(-1, 1),
            ),
            "pos_learned_similarity",
            alt=f"The untrained learned table: off-diagonal similarities average {float(off.mean()):.3f} "
            f"(largest {float(off.abs().max()):.3f}); nearness has to be learned in training.",
            table=pd.DataFrame(sim_l.numpy()),
        )
    st.markdown(f"**The {cap.max_positions}-position cap.** A learned table has exactly {cap.max_positions} rows.")
    c1, c2, c3 = st.columns(3)
    c1.metric("This sentence repeated: tokens", cap.n_tokens)
    c2.metric("Kept by the tokenizer (truncate=True)", cap.kept)
    c3.metric("Cut from the end", cap.truncated)
    st.markdown("Handed to the encoder uncut, the same input is refused before any computation, with this message:")
    st.code(cap.refusal, language=None)
    narrative(
        "The sine formula itself has no last row, so a sinusoidal model could in principle be given more "
        "positions; a learned table cannot, and this encoder refuses any input longer than its table either way."
    )
    show_code(sinusoidal_table, core.length_cap)


def render_stage() -> None:
    t = walk.trace[step]
    stats = walk.stats[step]
    i = walk.stages.index(step)
    src = core.stage_source(step, norm)
    st.markdown(f"**Stage {i + 1} of {len(walk.stages)}: {STAGE_LABELS[step]}** — layer {layer}, {norm}-norm")
    st.latex(core.STAGE_FORMULAS[norm][step])
    st.caption(
        f"Computed by encoder_core/model.py, line {src.first_line} (EncoderBlock.forward, read from the running code):"
    )
    st.code("\n".join(src.lines), language="python")
    narrative(stage_note(step))
    width = t.shape[1]
    fig = fb.tensor_heatmap(
        t, tokens, title=f"{STAGE_LABELS[step]} [T, {width}]", x_title="FFN unit" if width == d_ff else "feature"
    )
    show_figure(
        fig,
        "stage_tensor",
        alt=f"The {STAGE_LABELS[step]} tensor: {t.shape[0]} tokens by {width} features, "
        f"values from {float(t.min()):.3f} to {float(t.max()):.3f}.",
        table=_table(t, "u" if width == d_ff else "f"),
    )
    cols = st.columns(2)
    with cols[0]:
        show_figure(
            fb.token_stats_chart(stats, tokens, title="per token: mean, std, L2 norm"),
            "stage_stats",
            alt=f"Per token at this stage: L2 norm from {float(stats.l2.min()):.3f} to {float(stats.l2.max()):.3f}, "
            f"standard deviation from {float(stats.std.min()):.3f} to {float(stats.std.max()):.3f}.",
            table=pd.DataFrame(
                {"token": tokens, "mean": stats.mean.numpy(), "std": stats.std.numpy(), "L2 norm": stats.l2.numpy()}
            ),
        )
    norms = core.mean_norm_per_stage(walk)
    with cols[1]:
        labels = [STAGE_LABELS[s] for s in walk.stages]
        show_figure(
            fb.stage_profile_chart(labels, norms, i, title="mean ||x|| at each stage"),
            "stage_profile",
            alt="Mean token L2 norm at each stage: "
            + ", ".join(f"{lab} {v:.2f}" for lab, v in zip(labels, norms))
            + ".",
            table=pd.DataFrame({"stage": list(walk.stages), "mean L2 norm": norms}),
        )
    show_code(EncoderBlock.forward)


def stage_note(stage: str) -> str:
    stats = walk.stats[stage]
    sqrt_d = d**0.5
    notes = {
        "input": "What enters this layer, one row per token: the embeddings' output at layer 0, "
        "otherwise the previous layer's output.",
        "attention": "The only place where tokens exchange information: each token's row is a weighted mix "
        "of every token's value vector, projected back to d features by W^O.",
        "residual_1": "The skip connection: attention's output is added to the block's input, so a token keeps "
        "what it had and receives a correction.",
        "ffn_hidden": f"Each token on its own is expanded from {d} to {d_ff} features by W₁. "
        "No token sees another here.",
        "ffn_activated": "GELU keeps positive values almost unchanged and squashes negative ones towards 0, "
        "not all the way (see the next section).",
        "ffn_output": f"W₂ projects the {d_ff} units back to {d} features: the FFN's correction to each token.",
    }
    if norm == "post":
        notes |= {
            "norm_1": f"LayerNorm rescales each token's row to mean 0 and standard deviation 1 (γ = 1, β = 0 at "
            f"initialisation): the std line is flat at {float(stats.std.mean()):.3f}, every norm ≈ √d = {sqrt_d:.2f}.",
            "residual_2": "The second skip connection adds the FFN's correction to its own input h.",
            "norm_2": f"Post-norm ends every block on a LayerNorm, so each token leaves with norm "
            f"{float(stats.l2.mean()):.3f} ≈ √d whatever happened inside. This is what the next layer receives.",
        }
    else:
        notes |= {
            "norm_1": "Pre-norm normalises a copy for attention to read; the stream x itself is left as it was.",
            "norm_2": "The FFN reads a normalised copy of the stream; the stream goes on unnormalised.",
            "residual_2": f"Pre-norm's block output is a plain sum: mean norm {float(stats.l2.mean()):.3f} here "
            f"(√d = {sqrt_d:.2f}). Nothing in the block pulls it back, so it can drift from layer to layer.",
        }
    return notes[stage]


def render_activations() -> None:
    units = core.active_units(walk.trace["ffn_hidden"])
    curves = core.activation_curves()
    narrative(
        "BERT's FFN uses GELU, u·Φ(u) with Φ the standard normal CDF; the original Transformer used ReLU. Both are "
        "positive exactly where u > 0, so they leave the same units *active*. The difference is the negative side: "
        "ReLU outputs exactly 0 there (and passes no gradient back), GELU a small negative value."
    )
    show_figure(
        fb.activation_chart(curves),
        "activations",
        alt=f"GELU and ReLU on [{float(curves.x[0]):g}, {float(curves.x[-1]):g}]; "
        f"GELU's lowest value is {float(curves.gelu.min()):.3f}.",
        table=pd.DataFrame({"u": curves.x.numpy(), "GELU": curves.gelu.numpy(), "ReLU": curves.relu.numpy()}),
    )
    st.markdown(
        f"On this sentence, layer {layer}'s FFN has {units.total:,} pre-activations "
        f"({len(tokens)} tokens × {d_ff} units):"
    )
    c = st.columns(4)
    c[0].metric("GELU > 0", f"{units.gelu_positive:,}")
    c[1].metric("ReLU > 0", f"{units.relu_positive:,}")
    c[2].metric("GELU < 0 (kept, small)", f"{units.gelu_negative:,}")
    c[3].metric("ReLU = 0 exactly", f"{units.relu_zero:,}")
    st.caption(f"GELU's most negative output on this input: {units.gelu_min:.4f}.")
    st.dataframe(
        pd.DataFrame(
            {
                "token": tokens,
                "active under GELU": units.per_token_gelu_positive,
                "active under ReLU": units.per_token_relu_positive,
            }
        ),
        hide_index=True,
    )
    show_code(core.active_units)


def render_norms() -> None:
    other = "pre" if norm == "post" else "post"
    match = core.compare_weights(small_model(seed, norm), small_model(seed, other))
    extra = ", ".join(match.only_in_first + match.only_in_second)
    st.markdown(
        f"**Same seed, same weights.** The post-norm and pre-norm models built from seed {seed} share "
        f"{match.compared} parameter tensors, largest difference {match.max_abs_diff:g}; the only extra tensors "
        f"are the pre-norm stack's final LayerNorm ({extra}). So any difference below comes from where the "
        "LayerNorm sits, nothing else."
    )
    depth = int(st.session_state["block_depth"])
    init = st.session_state["block_init"]
    study = deep_stack(tuple(enc.ids), tuple(enc.segments), depth, seed, init_std(init))
    used = f", the first {study.n_tokens} of {len(tokens)}" if study.n_tokens < len(tokens) else ""
    narrative(
        f"A fresh stack of {depth} blocks of width {d}, built twice from seed {seed}: once post-norm, once "
        f"pre-norm. The sentence ({study.n_tokens} tokens{used}) runs through both; "
        "then one backward pass of L = Σ y ⊙ R, where R is a fixed "
        "standard-normal tensor (drawn from the seed) of the output's shape, a random projection that gives every "
        "output feature a gradient. The gradient norm of a block is over all of its parameters."
    )
    post, pre = study.post, study.pre
    cols = st.columns(2)
    with cols[0]:
        show_figure(
            fb.deep_stack_chart(study, "residual"),
            "deep_residual",
            alt=f"Post-norm stream stays between {min(post.residual_norms):.3f} and {max(post.residual_norms):.3f}; "
            f"pre-norm goes from {pre.residual_norms[0]:.3f} to {pre.residual_norms[-1]:.3f} over {depth} blocks.",
            table=pd.DataFrame(
                {"after block": range(depth + 1), "post-norm": post.residual_norms, "pre-norm": pre.residual_norms}
            ),
        )
    with cols[1]:
        show_figure(
            fb.deep_stack_chart(study, "grad"),
            "deep_grad",
            alt=f"Gradient norms per block: post-norm {min(post.grad_norms):.3g} to {max(post.grad_norms):.3g}, "
            f"pre-norm {min(pre.grad_norms):.3g} to {max(pre.grad_norms):.3g} "
            f"(first block {pre.grad_norms[0]:.3g}, last {pre.grad_norms[-1]:.3g}).",
            table=pd.DataFrame({"block": range(depth), "post-norm": post.grad_norms, "pre-norm": pre.grad_norms}),
        )

    hint = (
        "Switch the initial weights to the width-scaled start to give these blocks BERT-base's loudness."
        if init == "bert"
        else "These blocks now start as loud as BERT-base's; switch back to BERT's std to compare."
    )
    spread = study.grad_spread
    verdict = ": at initialisation and this depth no block's gradient explodes or vanishes" if spread < 10 else ""
    narrative(
        f"**Read the numbers.** Post-norm: every block ends on a LayerNorm, so the stream's norm is pinned at "
        f"√d = {d**0.5:.2f} (here {min(post.residual_norms):.3f}–{max(post.residual_norms):.3f}). Pre-norm: each "
        "block adds its output to the stream and nothing rescales the sum, so the norm is free to drift: here "
        f"from {pre.residual_norms[0]:.3f} to {pre.residual_norms[-1]:.3f} (×{pre.growth:.2f}). How far it drifts "
        f"depends on how loud each block is, which scales with std × √d: {study.init_std:.3g} × √{d} = "
        f"{study.loudness:.2f} for these blocks, {core.BERT_INIT_STD} × √{core.BERT_BASE_WIDTH} = "
        f"{core.BERT_INIT_STD * core.BERT_BASE_WIDTH**0.5:.2f} for BERT-base's. {hint}\n\n"
        f"**Gradients.** Post-norm blocks get gradient norms between {min(post.grad_norms):.3g} and "
        f"{max(post.grad_norms):.3g} (first block {post.grad_norms[0]:.3g}, last {post.grad_norms[-1]:.3g}); "
        f"pre-norm blocks between {min(pre.grad_norms):.3g} and {max(pre.grad_norms):.3g} (first block "
        f"{pre.grad_norms[0]:.3g}, last {pre.grad_norms[-1]:.3g}). Across both stacks the largest is "
        f"{spread:.1f}× the smallest{verdict}.\n\n"
        f"**Why pre-norm needs a final LayerNorm.** Its last block hands on a raw sum of norm "
        f"{pre.residual_norms[-1]:.3f}, whose scale depends on depth and on training; the stack's final LayerNorm "
        f"brings it to {pre.output_norm:.3f} before any head reads it. A post-norm stack's last block already "
        f"ended on a LayerNorm (output norm {post.output_norm:.3f}), so another one would change nothing."
    )
    show_code(core.deep_stack_study)


def render_equivalence() -> None:
    block = model.encoder.layer[layer]
    with torch.inference_mode():
        diff = block_equivalence(block, walk.trace["input"][None])
    flag = "norm_first=False" if norm == "post" else "norm_first=True"
    narrative(
        "An independent check: PyTorch's own nn.TransformerEncoderLayer, given a copy of this block's weights "
        f'(W_Q, W_K, W_V stacked into its in_proj), activation="gelu", {flag}, dropout 0, run on the same input.'
    )
    st.metric(f"Largest |ours − PyTorch's| over layer {layer}'s output", f"{diff:.2e}")
    if diff <= 1e-5:
        st.success(f"The two agree to {diff:.1e}, within float32 rounding (tolerance 1e-5).")
    else:
        st.error(f"The two differ by {diff:.2e}, more than the 1e-5 tolerance.")
    show_code(to_torch_layer, block_equivalence)


def render_params() -> None:
    rows = []
    for name in ("small", "bert-base"):
        c = param_counts(name)
        rows += [
            (name, "attention: W_Q, W_K, W_V, W_O + biases", "4d² + 4d", c.attention, c.attention_formula),
            (name, "FFN: W₁, b₁, W₂, b₂", "2·d·d_ff + d_ff + d", c.ffn, c.ffn_formula),
            (name, "two LayerNorms: γ, β", "4d", c.norms, c.norms_formula),
            (
                name,
                f"whole block (d={c.d_model}, d_ff={c.d_ff})",
                "sum",
                c.total,
                c.attention_formula + c.ffn_formula + c.norms_formula,
            ),
        ]
    table = pd.DataFrame(rows, columns=["model", "part", "formula", "counted from the modules", "from the formula"])
    counts = st.column_config.NumberColumn(format="localized")
    st.dataframe(table, hide_index=True, column_config={"counted from the modules": counts, "from the formula": counts})
    small, base = param_counts("small"), param_counts("bert-base")
    narrative(
        f"The FFN holds about two thirds of a block: {base.ffn / base.total:.0%} for BERT-base, whose block has "
        f"{base.total:,} parameters ({base.total * 12:,} for its 12 layers, before embeddings). This lesson's "
        f"block has {small.total:,}. Every number above is counted from a block built with that config."
    )
    show_code(core.block_params)


sections = [
    Section(
        "Input: three embeddings, summed and normalised",
        "A token's vector is word + position + segment, then LayerNorm.",
        render_input,
        tab="Input",
    ),
    Section(
        "Positions: a learned table or sine waves",
        "Sine waves make neighbours similar by design; a learned table caps the length.",
        render_positions,
        tab="Positions",
    ),
    Section(
        "Inside the block, one stage at a time",
        "Every intermediate tensor of one layer, with its formula and its line of code.",
        render_stage,
        tab="Inside the block",
    ),
    Section(
        "GELU next to ReLU",
        "Both keep the same units active; only GELU lets small negatives through.",
        render_activations,
        tab="GELU vs ReLU",
    ),
    Section(
        "Post-norm or pre-norm, on the same weights",
        "Post-norm pins the stream's size; pre-norm lets it grow and needs a final LayerNorm.",
        render_norms,
        tab="Post- vs pre-norm",
    ),
    Section(
        "Checked against PyTorch",
        "PyTorch's own encoder layer with the same weights gives the same output.",
        render_equivalence,
        tab="Against PyTorch",
    ),
    Section(
        "Counting the block's parameters",
        "4d² + 4d for attention, 2·d·d_ff + d_ff + d for the FFN, 4d for the norms.",
        render_params,
        tab="Parameters",
    ),
]
sections.append(check_yourself_section("block"))
lesson.render_sections(sections)
lesson.finish(PARAMS)
