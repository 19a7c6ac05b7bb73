"""Figures and tables for the block lesson: pure functions, encoder_core results in -> plotly Figure or
pandas DataFrame out, and the Charts the page shows (each figure with its text alternative and its numbers);
and the stage names and notes the page's narrative reads."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.block import (
    BERT_BASE_LOUDNESS,
    BERT_BASE_WIDTH,
    BERT_INIT_STD,
    ActivationCurves,
    ActiveUnits,
    BlockParams,
    BlockWalk,
    DeepStackStudy,
    FfnTokenChoice,
    NormAffine,
    NormRow,
    PositionTables,
    TensorSummary,
    TokenStats,
    WeightMatch,
    width_matched_std,
)
from encoder_core.model.model import EmbeddingParts

from .figures import (
    PAIR,
    Chart,
    after_layer_names,
    as_array,
    bar_chart,
    esc,
    line_chart,
    matrix_heatmap,
    per_token_table,
    token_labels,
)

STAT_COLORS = ("#1f77b4", "#ff7f0e", "#000000")
MAX_HEATMAP_HEIGHT = 720
POSITION_HEATMAP_HEIGHT = 420
COSINE = (-1.0, 1.0)  # a cosine similarity's fixed colour range
# chart key -> (EmbeddingParts field, figure title)
EMBEDDINGS = {
    "emb_token": ("token", "token embedding [T, d]"),
    "emb_position": ("position", "position embedding [T, d]"),
    "emb_segment": ("segment", "segment embedding [T, d]"),
    "emb_sum": ("summed", "sum: token + position + segment"),
    "emb_norm": ("normed", "after the embedding LayerNorm (layer 0's input)"),
}

STAGE_LABELS = {
    "input": "input x",
    "attention": "attention",
    "residual_1": "x + attention",
    "norm_1": "LayerNorm 1",
    # Named by their weights, not by what they do to the width: the width is a question the lesson asks.
    "ffn_hidden": "FFN W₁",
    "ffn_activated": "GELU",
    "ffn_output": "FFN W₂",
    "residual_2": "+ FFN",
    "norm_2": "LayerNorm 2",
}


NORM_LABELS = {"post": "post-norm (BERT)", "pre": "pre-norm"}


def init_labels(d_model: int) -> dict[str, str]:
    """The deep stack's two starting points (core.INIT_CHOICES), as the control names them."""
    return {
        "bert": f"BERT's std {BERT_INIT_STD}",
        "width": f"scaled to BERT-base's width (std {width_matched_std(d_model):.3f})",
    }


def stage_labels(stages: Sequence[str]) -> list[str]:
    return [STAGE_LABELS[s] for s in stages]


def stage_note(walk: BlockWalk, stage: str) -> str:
    """What this stage of the block does, with the walk's own numbers where it quotes any."""
    stats, d, d_ff, sqrt_d = walk.stats[stage], walk.d_model, walk.d_ff, walk.sqrt_d
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
    if walk.norm == "post":
        notes |= {
            "norm_1": f"LayerNorm rescales each token's row to mean 0 and standard deviation 1 (γ = 1, β = 0 at "
            f"initialisation): the std line is flat at {stats.mean_std:.3f}, every norm ≈ √d = {sqrt_d:.2f}.",
            "residual_2": "The second skip connection adds the FFN's correction to its own input h.",
            "norm_2": f"Post-norm ends every block on a LayerNorm, so each token leaves with norm "
            f"{stats.mean_l2:.3f} ≈ √d whatever happened inside. This is what the next layer receives.",
        }
    else:
        notes |= {
            "norm_1": "Pre-norm normalises a copy for attention to read; the stream x itself is left as it was.",
            "norm_2": "The FFN reads a normalised copy of the stream; the stream goes on unnormalised.",
            "residual_2": f"Pre-norm's block output is a plain sum: mean norm {stats.mean_l2:.3f} here "
            f"(√d = {sqrt_d:.2f}). Nothing in the block pulls it back, so it can drift from layer to layer.",
        }
    return notes[stage]


def norm_row_note(row: NormRow, affine: NormAffine, token: str, sqrt_d: float) -> str:
    """The embeddings' LayerNorm read on one row: its statistics, and what γ and β did to them."""
    if affine.identity:
        learned = f"γ = 1 and β = 0 here, as initialised: every row leaves with spread 1 and length √d = {sqrt_d:.2f}"
    else:
        learned = (
            f"here γ runs from {affine.gain.lo:.3f} to {affine.gain.hi:.3f} and β from {affine.bias.lo:.3f} to "
            f"{affine.bias.hi:.3f}, so the spread that comes out is γ's doing"
        )
    return (
        f"After the LayerNorm, the row of “{token}” has mean {row.mean_after:.3f} and standard deviation "
        f"{row.std_after:.3f} (before it: {row.std_before:.3f}). LayerNorm subtracts each row's mean, divides by its "
        f"standard deviation, then multiplies by a learned gain γ and adds a learned bias β ({learned}), whatever "
        "spread the row came in with."
    )


def input_intro(n_tokens: int, d: int) -> str:
    return (
        f"The model never sees words, only ids. Each of the {n_tokens} tokens picks a row of three tables "
        f"of width d = {d}: its word's row, its position's row and its segment's row (sentence A = 0, B = 1). "
        "The three are added, then one LayerNorm rescales each token's vector. "
        "Colours: red negative, blue positive, white 0."
    )


POSITIONS_INTRO = (
    "Attention on its own ignores order: shuffle the tokens and each one gets the same mix. The position "
    "row is what tells *cat at 2* from *cat at 5*. BERT learns its position table; the original Transformer "
    "used a fixed table of sine and cosine waves, one frequency per pair of features, fast on the left, slow "
    "on the right."
)
POSITIONS_CAP = (
    "The sine formula itself has no last row, so a sinusoidal model could in principle be given more "
    "positions; a learned table cannot, and this encoder refuses any input longer than its table either way."
)
ACTIVATIONS_INTRO = (
    "BERT's FFN uses GELU, u·Φ(u) with Φ the standard normal CDF; the original Transformer used ReLU. Both are "
    "positive exactly where u > 0, so they leave the same units *active*. The difference is the negative side: "
    "ReLU outputs exactly 0 there (and passes no gradient back), GELU a small negative value."
)


def equivalence_intro(flag: str) -> str:
    return (
        "An independent check: PyTorch's own nn.TransformerEncoderLayer, given a copy of this block's weights "
        f'(W_Q, W_K, W_V stacked into its in_proj), activation="gelu", {flag}, dropout 0, run on the same input.'
    )


def trained_intro(model_name: str) -> str:
    return (
        f"The same kind of block, with trained weights: {model_name}. Its FFN adds a vector f to every token's "
        "row, reading that row alone. How long f is differs from token to token, and training set it."
    )


def no_clear_ffn_note(margin: float, min_words: int) -> str:
    return (
        f"No layer has a word whose FFN output is {(margin - 1) * 100:.0f} % longer than every other word's on your "
        f"sentence (or it has fewer than {min_words} words), so there is no clear answer to predict here: try "
        "another sentence."
    )


def wait_note(section: str | None, what: str) -> str:
    """What a section says where it holds something back: the prediction to answer first (None: the one below)."""
    where = "below" if section is None else f"in “{section}”"
    return f"Answer the prediction {where} first, or skip it: {what}."


HELD_NORM = "this stage is a LayerNorm's output, and its numbers tell what a LayerNorm leaves in a row"
HELD_FFN = "the FFN's inside, its code and its numbers show how wide its hidden layer is"
HELD_WIDTH = "the counts here give away how wide the FFN's hidden layer is"


def ffn_shape_note(rows: int, cols: int, d: int) -> str:
    """The FFN-shape prediction's answer, said with the hidden layer's own shape."""
    return (
        f"u is {rows} × {cols}: one row per token, and {cols} = {cols // d} × {d} units, because W₁ is {d} × {cols}. "
        f"Each token is widened on its own, then W₂ ({cols} × {d}) brings it back to d = {d} for the residual sum."
    )


def active_units_lead(layer: int, total: int, n_tokens: int, d_ff: int) -> str:
    return f"On this sentence, layer {layer}'s FFN has {total:,} pre-activations ({n_tokens} tokens × {d_ff} units):"


def param_note(counts: Mapping[str, BlockParams]) -> str:
    """The parameter table read aloud: BERT-base's FFN share, and this lesson's block when it is in the table."""
    base = counts["bert-base"]
    small = counts.get("small")
    ours = f" This lesson's block has {small.total:,}." if small is not None else ""
    return (
        f"The FFN holds about two thirds of a block: {base.ffn_share:.0%} for BERT-base, whose block has "
        f"{base.total:,} parameters ({base.stack_total:,} for its {base.n_layers} layers, before embeddings).{ours} "
        "Every number above is counted from a block built with that config."
    )


GROWTH_TOO_CLOSE = (
    "A stream here ended within 5 % of the line of a tenth's growth: too close to call, so this step asks nothing. "
    "Its numbers:"
)


def ffn_token_text(choice: FfnTokenChoice, tokens: Sequence[str], model_name: str) -> str:
    """The trained-FFN prediction's answer: the word the FFN writes most into, against the runner-up."""
    best = choice.best
    runner = max((i for i in choice.words if i != best), key=lambda i: choice.norms[i])
    return (
        f"In {model_name}'s layer {choice.layer} the FFN adds its longest vector to **{best} {tokens[best]}**: "
        f"length {choice.norms[best]:.2f}, {choice.lead:.1f} times the next word's ({runner} {tokens[runner]}, "
        f"{choice.norms[runner]:.2f}). Each bar was computed from that token's own row: the FFN never reads "
        "another token. Where it writes most was learned in training."
    )


def ffn_token_chart(choice: FfnTokenChoice, tokens: Sequence[str], model_name: str) -> Chart:
    """Every token's FFN output length in the asked layer ([CLS] and [SEP] too, which the question leaves out)."""
    norms, best = choice.norms, choice.best
    fig = bar_chart(
        list(tokens),
        norms,
        title=f"Length of the FFN's output f, {model_name}, layer {choice.layer}",
        x_title="token",
        y_title="||f|| (what the FFN adds)",
    )
    fig.update_layout(yaxis={"rangemode": "tozero"})
    alt = (
        f"{model_name}'s FFN output length per token in layer {choice.layer}: longest among the words for {best} "
        f"{tokens[best]} ({norms[best]:.2f}), {choice.lead:.1f} times the next word's; over all tokens from "
        f"{min(norms):.2f} to {max(norms):.2f}."
    )
    return Chart(fig, alt, per_token_table(tokens, {"||f||": list(norms)}))


def model_choice_note(choice: str, seed: int) -> str | None:
    """Why this lesson stays on the small seeded model when the sidebar asks for another encoder."""
    if choice == "small":
        return None
    return (
        f"This lesson runs on the small model with seed {seed}, whatever the sidebar's encoder: it compares a "
        "post-norm and a pre-norm block with the very same weights, and only the seeded model can be built "
        "both ways. Attention, Padding, Heads and Trade-offs run on the encoder you picked."
    )


def same_weights_note(match: WeightMatch, seed: int) -> str:
    """Why the post- vs pre-norm comparison is fair: the two models share every weight."""
    return (
        f"**Same seed, same weights.** The post-norm and pre-norm models built from seed {seed} share "
        f"{match.compared} parameter tensors, largest difference {match.max_abs_diff:g}; the only extra tensors "
        f"are the pre-norm stack's final LayerNorm ({', '.join(match.unshared)}). So any difference below comes "
        "from where the LayerNorm sits, nothing else."
    )


def deep_stack_setup(study: DeepStackStudy) -> str:
    """What the deep-stack study builds and measures."""
    used = f", the first {study.n_tokens} of {study.n_tokens_given}" if study.cut else ""
    return (
        f"A fresh stack of {study.depth} blocks of width {study.d_model}, built twice from seed {study.seed}: once "
        f"post-norm, once pre-norm. The sentence ({study.n_tokens} tokens{used}) runs through both; "
        "then one backward pass of L = Σ y ⊙ R, where R is a fixed "
        "standard-normal tensor (drawn from the seed) of the output's shape, a random projection that gives every "
        "output feature a gradient. The gradient norm of a block is over all of its parameters."
    )


def deep_stack_reading(study: DeepStackStudy, *, width_scaled: bool) -> str:
    """The deep-stack study read aloud: what pins or frees the stream, the gradients, the final LayerNorm."""
    post, pre, d = study.post, study.pre, study.d_model
    hint = (
        "These blocks now start as loud as BERT-base's; switch back to BERT's std to compare."
        if width_scaled
        else "Switch the initial weights to the width-scaled start to give these blocks BERT-base's loudness."
    )
    verdict = (
        ": at initialisation and this depth no block's gradient explodes or vanishes" if study.grads_stable else ""
    )
    return (
        f"**Read the numbers.** Post-norm: every block ends on a LayerNorm, so the stream's norm is pinned at "
        f"√d = {study.sqrt_d:.2f} (here {span_text(post.residual_span.lo, post.residual_span.hi)}). Pre-norm: each "
        "block adds its output to the stream and nothing rescales the sum, so the norm is free to drift: here "
        f"from {pre.residual_norms[0]:.3f} to {pre.residual_norms[-1]:.3f} (×{pre.growth:.2f}). How far it drifts "
        f"depends on how loud each block is, which scales with std × √d: {study.init_std:.3g} × √{d} = "
        f"{study.loudness:.2f} for these blocks, {BERT_INIT_STD} × √{BERT_BASE_WIDTH} = "
        f"{BERT_BASE_LOUDNESS:.2f} for BERT-base's. {hint}\n\n"
        f"**Gradients.** Post-norm blocks get gradient norms between {post.grad_span.lo:.3g} and "
        f"{post.grad_span.hi:.3g} (first block {post.grad_norms[0]:.3g}, last {post.grad_norms[-1]:.3g}); "
        f"pre-norm blocks between {pre.grad_span.lo:.3g} and {pre.grad_span.hi:.3g} (first block "
        f"{pre.grad_norms[0]:.3g}, last {pre.grad_norms[-1]:.3g}). Across both stacks the largest is "
        f"{study.grad_spread:.1f}× the smallest{verdict}.\n\n"
        f"**Why pre-norm needs a final LayerNorm.** Its last block hands on a raw sum of norm "
        f"{pre.residual_norms[-1]:.3f}, whose scale depends on depth and on training; the stack's final LayerNorm "
        f"brings it to {pre.output_norm:.3f} before any head reads it. A post-norm stack's last block already "
        f"ended on a LayerNorm (output norm {post.output_norm:.3f}), so another one would change nothing."
    )


def span_text(lo: float, hi: float) -> str:
    """'8.000' when a range rounds to one number at 3 decimals, else '7.990–8.010'."""
    a, b = f"{lo:.3f}", f"{hi:.3f}"
    return a if a == b else f"{a}–{b}"


def residual_alt(study: DeepStackStudy) -> str:
    """The residual chart in words: a range that rounds to one number is said as that number."""
    post, pre = study.post, study.pre
    span = span_text(post.residual_span.lo, post.residual_span.hi)
    pinned = f"stays at {span}" if "–" not in span else f"stays within {span}"
    return (
        f"Post-norm: the stream {pinned} after every block. Pre-norm: it goes from {pre.residual_norms[0]:.3f} "
        f"to {pre.residual_norms[-1]:.3f} (×{pre.growth:.2f}) over {study.depth} blocks. The axis starts at 0."
    )


def short_sci(x: float) -> str:
    """1e-05 -> "1e-5": the tolerance written as the text around it writes it."""
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"


# ---- tables: the numbers behind each chart -------------------------------------------------


def _values(x) -> np.ndarray:
    """A tensor's values in its own dtype: a float32 table stays float32, as the CSV download shows it."""
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def tensor_table(values, tokens: Sequence[str], prefix: str = "f") -> pd.DataFrame:
    """A [T, width] tensor: a token column, then one column per feature (f0, f1, ... or u0, u1, ...)."""
    arr = _values(values)
    frame = pd.DataFrame(arr, columns=[f"{prefix}{j}" for j in range(arr.shape[1])])
    frame.insert(0, "token", list(tokens))
    return frame


def embedding_tables(parts: EmbeddingParts, tokens: Sequence[str]) -> dict[str, pd.DataFrame]:
    """The numbers behind each embedding heatmap, by chart key."""
    return {key: embedding_table(parts, tokens, key) for key in EMBEDDINGS}


def embedding_table(parts: EmbeddingParts, tokens: Sequence[str], key: str) -> pd.DataFrame:
    """The numbers behind one embedding heatmap."""
    return tensor_table(getattr(parts, EMBEDDINGS[key][0]), tokens)


def embedding_alts(sizes: Mapping[str, TensorSummary], normed: TokenStats) -> dict[str, str]:
    """The text alternative of each embedding heatmap, by chart key. sizes: core.summarize_parts of the
    embeddings; normed: the token stats of their LayerNorm's output."""

    def shape_and_size(part: str) -> str:
        size = sizes[part]
        return f"{size.rows} tokens by {size.cols} features, largest magnitude {size.largest:.3f}."

    return {
        "emb_token": f"The word-embedding row of each token: {shape_and_size('token')}",
        "emb_position": f"The row t of the learned position table: {shape_and_size('position')}",
        "emb_segment": f"The segment-A row, the same for every token of one sentence: {shape_and_size('segment')}",
        "emb_sum": f"The sum of the three embeddings; its largest magnitude is {sizes['summed'].largest:.3f}.",
        "emb_norm": f"After LayerNorm every token has mean {normed.largest_mean:.1e} or less in size "
        f"and standard deviation {normed.mean_std:.4f}.",
    }


def _is_ffn_wide(walk: BlockWalk, stage: str) -> bool:
    return walk.trace[stage].shape[1] == walk.d_ff


def stage_table(walk: BlockWalk, stage: str, tokens: Sequence[str]) -> pd.DataFrame:
    return tensor_table(walk.trace[stage], tokens, "u" if _is_ffn_wide(walk, stage) else "f")


def stats_table(stats: TokenStats, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {"token": list(tokens), "mean": _values(stats.mean), "std": _values(stats.std), "L2 norm": _values(stats.l2)}
    )


def stage_profile_table(stages: Sequence[str], mean_norms: Sequence[float]) -> pd.DataFrame:
    return pd.DataFrame({"stage": list(stages), "mean L2 norm": list(mean_norms)})


def position_table(table) -> pd.DataFrame:
    """A (positions, d) table: one row per position, columns f0, f1, ..."""
    return pd.DataFrame(_values(table)).rename(columns=lambda j: f"f{j}")


def similarity_table(similarity) -> pd.DataFrame:
    """A (positions, positions) similarity: rows and columns numbered by position."""
    return pd.DataFrame(_values(similarity))


def activation_table(curves: ActivationCurves) -> pd.DataFrame:
    return pd.DataFrame({"u": _values(curves.x), "GELU": _values(curves.gelu), "ReLU": _values(curves.relu)})


def active_units_table(units: ActiveUnits, tokens: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "token": list(tokens),
            "active under GELU": units.per_token_gelu_positive,
            "active under ReLU": units.per_token_relu_positive,
        }
    )


def deep_stack_tables(study: DeepStackStudy) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(stream norm at the embeddings and after each block; gradient norm per block), post- and pre-norm side by
    side; blocks numbered from 0."""
    residual = pd.DataFrame(
        {
            "stage": after_layer_names(study.depth + 1, unit="block"),
            "post-norm": study.post.residual_norms,
            "pre-norm": study.pre.residual_norms,
        }
    )
    grad = pd.DataFrame(
        {"block": range(study.depth), "post-norm": study.post.grad_norms, "pre-norm": study.pre.grad_norms}
    )
    return residual, grad


PARAM_COUNT_COLUMNS = ("counted from the modules", "from the formula")


def param_table(counts_by_model: Mapping[str, BlockParams]) -> pd.DataFrame:
    """Per model: each part of one block counted from the modules next to its formula, then the whole block."""
    rows = []
    for name, c in counts_by_model.items():
        rows += [
            (name, "attention: W_Q, W_K, W_V, W_O + biases", "4d² + 4d", c.attention, c.attention_formula),
            (name, "FFN: W₁, b₁, W₂, b₂", "2·d·d_ff + d_ff + d", c.ffn, c.ffn_formula),
            (name, "two LayerNorms: γ, β", "4d", c.norms, c.norms_formula),
            (name, f"whole block (d={c.d_model}, d_ff={c.d_ff})", "sum", c.total, c.total_formula),
        ]
    return pd.DataFrame(rows, columns=["model", "part", "formula", *PARAM_COUNT_COLUMNS])


# ---- figures ----------------------------------------------------------------------------------


def tensor_heatmap(values, tokens: Sequence[str], *, title: str, x_title: str = "feature") -> go.Figure:
    """A [T, width] tensor, one row per token; the height is capped so a long input stays on one screen."""
    fig = matrix_heatmap(values, tokens, title=title, x_title=x_title)
    if fig.layout.height > MAX_HEATMAP_HEIGHT:
        fig.layout.height = MAX_HEATMAP_HEIGHT
    return fig


def embedding_heatmaps(parts: EmbeddingParts, tokens: Sequence[str]) -> dict[str, go.Figure]:
    """The three embeddings, their sum and its LayerNorm, by chart key."""
    return {key: tensor_heatmap(getattr(parts, part), tokens, title=title) for key, (part, title) in EMBEDDINGS.items()}


def stage_heatmap(walk: BlockWalk, stage: str, tokens: Sequence[str]) -> go.Figure:
    """One stage's tensor; the FFN's inside is labelled by unit, the stream by feature."""
    width = walk.trace[stage].shape[1]
    x_title = "FFN unit" if _is_ffn_wide(walk, stage) else "feature"
    return tensor_heatmap(walk.trace[stage], tokens, title=f"{STAGE_LABELS[stage]} [T, {width}]", x_title=x_title)


def token_stats_figure(stats: TokenStats, tokens: Sequence[str], *, title: str = "") -> go.Figure:
    """Per-token mean, standard deviation and L2 norm of one stage, one line each."""
    fig = go.Figure()
    labels = token_labels(tokens)
    series = (("mean", stats.mean, "dash"), ("std", stats.std, "dot"), ("L2 norm", stats.l2, "solid"))
    for (name, values, dash), color in zip(series, STAT_COLORS):
        fig.add_scatter(
            x=labels,
            y=as_array(values),
            name=name,
            mode="lines+markers",
            line={"color": color, "dash": dash},
            hovertemplate="%{x}: %{y:.3f}<extra>" + name + "</extra>",
        )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "token"}},
        yaxis={"title": {"text": "over the token's features"}},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=360,
    )
    return fig


def stage_profile_figure(stage_labels: Sequence[str], mean_norms, current: int, *, title: str = "") -> go.Figure:
    """Mean L2 norm of the tokens at each stage of the block; the selected stage is ringed."""
    y = as_array(mean_norms)
    labels = [esc(s) for s in stage_labels]
    fig = go.Figure(
        go.Scatter(
            x=labels,
            y=y,
            mode="lines+markers",
            name="mean ||x||",
            line={"color": PAIR[0]},
            hovertemplate="%{x}: %{y:.3f}<extra></extra>",
        )
    )
    fig.add_scatter(
        x=[labels[current]],
        y=[y[current]],
        mode="markers",
        name="this step",
        marker={"size": 18, "color": "rgba(0,0,0,0)", "line": {"color": PAIR[1], "width": 3}},
        hoverinfo="skip",
    )
    fig.update_layout(
        title={"text": esc(title)},
        xaxis={"title": {"text": "stage of the block, in order"}},
        yaxis={"title": {"text": "mean over tokens of ||x||"}, "rangemode": "tozero"},
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=340,
    )
    return fig


def activation_figure(curves: ActivationCurves) -> go.Figure:
    return line_chart(
        curves.x,
        {"GELU(u) = u Φ(u)": curves.gelu, "ReLU(u) = max(0, u)": curves.relu},
        title="GELU and ReLU",
        x_title="pre-activation u",
        y_title="output",
    )


def position_heatmap(values, *, title: str, x_title: str, zrange: tuple[float, float] | None = None) -> go.Figure:
    """A table indexed by position (numbered rows): the sinusoid table, or a position-by-position similarity.
    zrange=(-1, 1) for a cosine; otherwise the scale fits the values, centred on 0."""
    return matrix_heatmap(
        values, None, title=title, x_title=x_title, y_title="position", zrange=zrange, height=POSITION_HEATMAP_HEIGHT
    )


def sinusoid_heatmap(pos: PositionTables) -> go.Figure:
    return position_heatmap(
        pos.sinusoid, title=f"sinusoidal table, first {pos.n_positions} positions", x_title="feature"
    )


def sinusoid_similarity_heatmap(pos: PositionTables) -> go.Figure:
    return position_heatmap(
        pos.sinusoid_similarity, title="cosine similarity between sinusoid positions", x_title="position", zrange=COSINE
    )


def learned_similarity_heatmap(pos: PositionTables) -> go.Figure:
    """Only for a model with a learned position table (pos.learned_similarity not None)."""
    return position_heatmap(
        pos.learned_similarity,
        title="cosine similarity between this model's learned positions",
        x_title="position",
        zrange=COSINE,
    )


def deep_stack_figure(study: DeepStackStudy, what: str) -> go.Figure:
    """what: "residual" (stream norm at the embeddings and after each block) or "grad" (gradient norm per
    block); blocks numbered from 0, both axes from 0."""
    if what == "residual":
        series = {"post-norm": study.post.residual_norms, "pre-norm": study.pre.residual_norms}
        return line_chart(
            after_layer_names(study.depth + 1, unit="block"),
            series,
            title=f"Residual stream, {study.depth} blocks, init std {study.init_std:.3g}",
            x_title="stage of the stack",
            y_title="mean over tokens of ||x||",
        )
    x = np.arange(study.depth)
    series = {"post-norm": study.post.grad_norms, "pre-norm": study.pre.grad_norms}
    return line_chart(
        x,
        series,
        title=f"Gradient norm per block, one backward pass, init std {study.init_std:.3g}",
        x_title="block",
        y_title="||dL/dθ|| over the block's parameters",
    )


# ---- Charts: each figure with its text alternative and its table ----------------------------------


def embedding_charts(
    parts: EmbeddingParts, tokens: Sequence[str], sizes: Mapping[str, TensorSummary], normed: TokenStats
) -> dict[str, Chart]:
    """The three embeddings, their sum and its LayerNorm, by chart key (sizes, normed: as embedding_alts)."""
    figures, alts = embedding_heatmaps(parts, tokens), embedding_alts(sizes, normed)
    return {key: Chart(figures[key], alts[key], partial(embedding_table, parts, tokens, key)) for key in EMBEDDINGS}


def sinusoid_chart(pos: PositionTables) -> Chart:
    n_features = pos.sinusoid.shape[1]
    alt = f"Sine and cosine waves for {pos.n_positions} positions and {n_features} features, values in [-1, 1]."
    return Chart(sinusoid_heatmap(pos), alt, position_table(pos.sinusoid))


def sinusoid_similarity_chart(pos: PositionTables) -> Chart:
    alt = (
        f"Neighbouring sinusoid positions are similar (cos(0, 1) = {pos.neighbour_cosine:.3f}), "
        f"distant ones less so (cos(0, {pos.n_positions - 1}) = {pos.farthest_cosine:.3f})."
    )
    return Chart(sinusoid_similarity_heatmap(pos), alt, similarity_table(pos.sinusoid_similarity))


def learned_similarity_chart(pos: PositionTables) -> Chart:
    """Only for a model with a learned position table (pos.learned_similarity not None)."""
    alt = (
        f"The untrained learned table: off-diagonal similarities average {pos.learned_off_diagonal_mean:.3f} "
        f"(largest {pos.learned_off_diagonal_largest:.3f}); nearness has to be learned in training."
    )
    return Chart(learned_similarity_heatmap(pos), alt, similarity_table(pos.learned_similarity))


def stage_chart(walk: BlockWalk, stage: str, tokens: Sequence[str], size: TensorSummary) -> Chart:
    """One stage's tensor (size: core.summarize of it)."""
    alt = (
        f"The {STAGE_LABELS[stage]} tensor: {size.rows} tokens by {size.cols} features, "
        f"values from {size.lo:.3f} to {size.hi:.3f}."
    )
    return Chart(stage_heatmap(walk, stage, tokens), alt, stage_table(walk, stage, tokens))


def stage_stats_chart(stats: TokenStats, tokens: Sequence[str]) -> Chart:
    l2, std = stats.l2_span, stats.std_span
    alt = (
        f"Per token at this stage: L2 norm from {l2.lo:.3f} to {l2.hi:.3f}, "
        f"standard deviation from {std.lo:.3f} to {std.hi:.3f}."
    )
    figure = token_stats_figure(stats, tokens, title="per token: mean, std, L2 norm")
    return Chart(figure, alt, stats_table(stats, tokens))


def stage_profile_chart(stages: Sequence[str], mean_norms: Sequence[float], current: int) -> Chart:
    """Mean token norm at each stage (core.mean_norm_per_stage), the current stage ringed."""
    labels = stage_labels(stages)
    alt = f"Mean token L2 norm at each stage: {', '.join(f'{lab} {v:.2f}' for lab, v in zip(labels, mean_norms))}."
    figure = stage_profile_figure(labels, mean_norms, current, title="mean ||x|| at each stage")
    return Chart(figure, alt, stage_profile_table(stages, mean_norms))


def activation_chart(curves: ActivationCurves) -> Chart:
    span = curves.x_span
    alt = f"GELU and ReLU on [{span.lo:g}, {span.hi:g}]; GELU's lowest value is {curves.lowest_gelu:.3f}."
    return Chart(activation_figure(curves), alt, activation_table(curves))


def active_units_metrics(units: ActiveUnits) -> list[tuple[str, str]]:
    return [
        ("GELU > 0", f"{units.gelu_positive:,}"),
        ("ReLU > 0", f"{units.relu_positive:,}"),
        ("GELU < 0 (kept, small)", f"{units.gelu_negative:,}"),
        ("ReLU = 0 exactly", f"{units.relu_zero:,}"),
    ]


def deep_stack_charts(study: DeepStackStudy) -> tuple[Chart, Chart]:
    """(the stream's norm, the gradient norms) through the post- and the pre-norm stack."""
    post, pre = study.post, study.pre
    residual_table, grad_table = deep_stack_tables(study)
    grad_alt = (
        f"Gradient norms per block: post-norm {post.grad_span.lo:.3g} to {post.grad_span.hi:.3g}, "
        f"pre-norm {pre.grad_span.lo:.3g} to {pre.grad_span.hi:.3g} "
        f"(first block {pre.grad_norms[0]:.3g}, last {pre.grad_norms[-1]:.3g})."
    )
    return (
        Chart(deep_stack_figure(study, "residual"), residual_alt(study), residual_table),
        Chart(deep_stack_figure(study, "grad"), grad_alt, grad_table),
    )
