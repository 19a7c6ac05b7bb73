"""Section 6, post-norm or pre-norm on the same weights: the residual stream and the gradients through a deep stack."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.block import (
    BERT_BASE_LOUDNESS,
    BERT_BASE_WIDTH,
    BERT_INIT_STD,
    DeepStackStudy,
    WeightMatch,
    width_matched_std,
)

from ..figures import Chart, after_layer_names, line_chart

GROWTH_TOO_CLOSE = (
    "A stream here ended within 5 % of the line of a tenth's growth: too close to call, so this step asks nothing. "
    "Its numbers:"
)


def init_labels(d_model: int) -> dict[str, str]:
    """The deep stack's two starting points (core.INIT_CHOICES), as the control names them."""
    return {
        "bert": f"BERT's std {BERT_INIT_STD}",
        "width": f"scaled to BERT-base's width (std {width_matched_std(d_model):.3f})",
    }


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


def residual_alt(study: DeepStackStudy) -> str:
    """The residual chart in words: a range that rounds to one number is said as that number."""
    post, pre = study.post, study.pre
    span = span_text(post.residual_span.lo, post.residual_span.hi)
    pinned = f"stays at {span}" if "–" not in span else f"stays within {span}"
    return (
        f"Post-norm: the stream {pinned} after every block. Pre-norm: it goes from {pre.residual_norms[0]:.3f} "
        f"to {pre.residual_norms[-1]:.3f} (×{pre.growth:.2f}) over {study.depth} blocks. The axis starts at 0."
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
