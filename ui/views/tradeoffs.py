"""Figures, tables and sentences for the trade-offs lesson: pure builders, encoder_core results in."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.padding import FastPathPads, PadLeak
from encoder_core.lessons.tradeoffs import (
    CASES,
    MISMATCH_MARGIN,
    OBJECTIVES,
    ROBERTA_CHANGES,
    SCHEDULES,
    AnswerTruncation,
    AppendCosts,
    AppendReuse,
    AttentionScaling,
    FirstCut,
    LengthCap,
    LengthTimings,
    LossAveraging,
    MaskingViews,
    MaskMismatch,
    ObjectiveLabels,
    likeliest_case,
)

from . import padding
from .figures import (
    CATEGORICAL,
    Chart,
    earlier_token_shifts,
    esc,
    grouped_bars,
    line_chart,
    per_token_table,
    short_number,
    token_labels,
)

MB = 1024 * 1024
MODES = ("causal mask, keys and values cached", "bidirectional, recomputed")
CASE_NAMES = {"masked": "[MASK] (80%)", "random": "a random word (10%)", "kept": "the word itself (10%)"}

SECTIONS = (  # the page's sections, in order: title, the one line it shows, its tab's label
    (
        "No reuse of earlier work",
        "Append a token: causal vectors stay put, bidirectional ones all move. What does a cache save?",
        "No reuse",
    ),
    ("Length: a hard cap", "Past the position table the text is cut: which of your pieces goes first?", "Length cap"),
    ("Attention grows with T²", "Double T, four times the weights; the rest of the pass only doubles.", "T² cost"),
    ("Sample efficiency", "MLM scores ~15% of positions; next-token and ELECTRA score nearly all.", None),
    (
        "The [MASK] mismatch",
        "Fine-tuning never shows [MASK]: which input lets the model recover a word best?",
        "[MASK] mismatch",
    ),
    ("RoBERTa: dynamic masking", "One fixed pattern vs a new one each epoch: many more distinct views.", "RoBERTa"),
    ("Pitfalls 1-2: the pads", "Forget the mask and batch-mates leak in; never read a pad's output.", "Pitfalls: pads"),
    (
        "Pitfalls 3-4: labels and the loss",
        "Score only hidden positions, and average over those alone.",
        "Pitfalls: labels",
    ),
    (
        "Pitfalls 5-6: reading the outputs",
        "A raw [CLS] is no sentence vector; truncation can cut the answer out.",
        "Pitfalls: outputs",
    ),
)


def _log_axes(fig: go.Figure, x_title: str, y_title: str, lengths: Sequence[int]) -> go.Figure:
    fig.update_layout(
        xaxis={"type": "log", "title": {"text": f"{x_title} (log scale)"}, "tickvals": list(lengths)},
        legend={"orientation": "h", "y": -0.3},
        height=420,
        yaxis={"type": "log", "title": {"text": f"{y_title} (log scale)"}},
    )
    return fig


# ---- 1. append one token ----


def append_shift_figure(r: AppendReuse, tokens: Sequence[str]) -> go.Figure:
    return earlier_token_shifts(
        tokens[: r.n_earlier],
        r.shift_causal,
        r.shift_bidirectional,
        title="Append one token: how far earlier vectors move",
        y_title="change of its final vector (L2)",
        text_format=".2g",
    )


def append_shift_table(r: AppendReuse, tokens: Sequence[str]) -> pd.DataFrame:
    columns = {"change, causal": r.shift_causal, "change, bidirectional": r.shift_bidirectional}
    return per_token_table(tokens[: r.n_earlier], columns)


def append_shift_alt(r: AppendReuse, new_token: str) -> str:
    return (
        f"Appending “{esc(new_token)}” moves the {r.n_earlier} earlier vectors by at most "
        f"{short_number(r.max_causal)} under the causal mask and by up to {short_number(r.max_bidirectional)} "
        "without it."
    )


def _legend_below(fig: go.Figure) -> go.Figure:
    """Half-width charts: a legend at the side would take half the plot."""
    fig.update_layout(legend={"orientation": "h", "y": -0.3}, height=420)
    return fig


def append_flops_figure(c: AppendCosts) -> go.Figure:
    return _legend_below(
        line_chart(
            list(range(c.n + 1)),
            {MODES[0]: [f / 1e6 for f in c.flops_cached], MODES[1]: [f / 1e6 for f in c.flops_bidirectional]},
            title=f"FLOPs of N appends to {c.prefix} tokens, counted",
            x_title="tokens appended, N",
            y_title="matrix-product FLOPs, millions (cumulative)",
        )
    )


def append_time_figure(c: AppendCosts) -> go.Figure:
    return _legend_below(
        line_chart(
            list(range(c.n + 1)),
            {MODES[0]: [s * 1e3 for s in c.seconds_cached], MODES[1]: [s * 1e3 for s in c.seconds_bidirectional]},
            title="The same appends: wall time, measured",
            x_title="tokens appended, N",
            y_title="milliseconds (cumulative)",
        )
    )


def append_costs_table(c: AppendCosts) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "N appended": list(range(c.n + 1)),
            "FLOPs, cached causal": c.flops_cached,
            "FLOPs, bidirectional": c.flops_bidirectional,
            "ms, cached causal": [s * 1e3 for s in c.seconds_cached],
            "ms, bidirectional": [s * 1e3 for s in c.seconds_bidirectional],
        }
    )


def append_costs_alt(c: AppendCosts) -> str:
    return (
        f"After {c.n} appends the bidirectional model has done {c.flops_bidirectional[-1]:,} FLOPs and the "
        f"cached causal one {c.flops_cached[-1]:,}: {c.ratio:.1f} times fewer. The closed form gives "
        f"{c.closed_form[0]:,} and {c.closed_form[1]:,}."
    )


def append_time_alt(c: AppendCosts) -> str:
    return (
        f"Measured: {c.seconds_bidirectional[-1] * 1e3:.1f} ms bidirectional against "
        f"{c.seconds_cached[-1] * 1e3:.1f} ms cached, for {c.n} appends."
    )


# ---- 2. length ----


def cap_figure(cap: LengthCap) -> go.Figure:
    """The document as a bar of content tokens; the part truncation keeps; the windows that cover it."""
    n = cap.n_tokens - 2
    kept = min(n, cap.cap - 2)
    rows = ["whole document", "truncated input"] + [f"window {i + 1}" for i in range(len(cap.windows.spans))]
    starts = [0, 0] + [s for s, _ in cap.windows.spans]
    widths = [n, kept] + [e - s for s, e in cap.windows.spans]
    colours = ["#999999", CATEGORICAL[1]] + [CATEGORICAL[0]] * len(cap.windows.spans)
    fig = go.Figure(
        go.Bar(
            y=rows,
            x=widths,
            base=starts,
            orientation="h",
            marker_color=colours,
            hovertemplate="%{y}: tokens %{base} to %{x}<extra></extra>",
        )
    )
    if cap.cut:
        fig.add_vline(
            x=kept, line_dash="dash", annotation_text=f"cut: {cap.cut} tokens dropped", annotation_position="top left"
        )
    fig.update_layout(
        title={"text": f"A cap of {cap.cap} positions: truncation, or windows of {cap.windows.size} tokens"},
        xaxis={"title": {"text": "word-piece position in the document"}, "rangemode": "tozero"},
        yaxis={"title": {"text": "what the model reads"}, "autorange": "reversed"},
        margin={"l": 10, "r": 10, "t": 80, "b": 10},
        height=180 + 36 * len(rows),
        showlegend=False,
    )
    return fig


def cap_table(cap: LengthCap) -> pd.DataFrame:
    spans = [("whole document", 0, cap.n_tokens - 2), ("truncated input", 0, min(cap.n_tokens - 2, cap.cap - 2))]
    spans += [(f"window {i + 1}", s, e) for i, (s, e) in enumerate(cap.windows.spans)]
    return pd.DataFrame([{"input": name, "first token": s, "end (exclusive)": e} for name, s, e in spans])


def cap_alt(cap: LengthCap) -> str:
    if not cap.cut:
        return f"The document has {cap.n_tokens} tokens and fits the {cap.cap} positions: one window, nothing cut."
    return (
        f"The document has {cap.n_tokens} tokens; truncation to {cap.cap} drops the last {cap.cut}. "
        f"{len(cap.windows.spans)} windows of up to {cap.windows.size} tokens, overlapping by "
        f"{cap.windows.overlap}, cover all of it."
    )


def cap_cut_text(cap: LengthCap) -> str:
    if not cap.cut:
        return "Nothing is cut: the document fits."
    before, after = " ".join(cap.before_cut), " ".join(cap.after_cut)
    return f"…{before} ✂ {after}… (the model never sees anything after the ✂)"


def scaling_sizes_figure(s: AttentionScaling, timings: LengthTimings | None = None) -> go.Figure:
    series = {"from the shapes: L·H·T²·4 bytes": [b / MB for b in s.weights_bytes]}
    if timings is not None:
        series["measured: the tensors a real run returned"] = [b / MB for b in timings.weights_bytes]
    fig = line_chart(s.lengths, series, title="Size of the (1, H, T, T) attention weights, every layer")
    fig.layout.showlegend = True  # name the source even when only the shapes' line is drawn
    return _log_axes(fig, "sequence length T", "megabytes", s.lengths)


def scaling_flops_figure(s: AttentionScaling) -> go.Figure:
    fig = line_chart(
        s.lengths,
        {
            "projections + FFN (grows like T)": s.flops_linear,
            "attention scores and mixing (grows like T²)": s.flops_attention,
        },
        title="FLOPs of one forward pass, by where they go",
    )
    return _log_axes(fig, "sequence length T", "FLOPs", s.lengths)


def timing_figure(t: LengthTimings) -> go.Figure:
    fig = line_chart(
        t.lengths,
        {
            f"attention only (fitted exponent {t.exponent_attention:.2f})": [x * 1e3 for x in t.attention_seconds],
            f"whole forward pass (fitted exponent {t.exponent_forward:.2f})": [x * 1e3 for x in t.forward_seconds],
        },
        title="Wall time against T, measured on this (shared) server",
    )
    return _log_axes(fig, "sequence length T", "milliseconds", t.lengths)


def scaling_table(s: AttentionScaling, t: LengthTimings | None = None) -> pd.DataFrame:
    table = pd.DataFrame(
        {
            "T": s.lengths,
            "weights MB (shapes)": [b / MB for b in s.weights_bytes],
            "FLOPs, projections + FFN": s.flops_linear,
            "FLOPs, attention": s.flops_attention,
        }
    )
    if t is not None:
        table["weights MB (measured)"] = [b / MB for b in t.weights_bytes]
        table["ms, attention"] = [x * 1e3 for x in t.attention_seconds]
        table["ms, forward"] = [x * 1e3 for x in t.forward_seconds]
    return table


def scaling_alt(s: AttentionScaling) -> str:
    return (
        f"The attention weights grow from {s.weights_bytes[0] / MB:.2f} MB at T={s.lengths[0]} to "
        f"{s.weights_bytes[-1] / MB:.1f} MB at T={s.lengths[-1]}: four times per doubling."
    )


def flops_alt(s: AttentionScaling) -> str:
    return (
        f"At T={s.lengths[-1]} attention takes {s.flops_attention[-1]:,} FLOPs and the rest {s.flops_linear[-1]:,}; "
        f"the two are equal at T = 2D + d_ff = {s.crossover}."
    )


def timing_alt(t: LengthTimings) -> str:
    return (
        f"Attention took {t.attention_seconds[0] * 1e3:.3f} ms at T={t.lengths[0]} and "
        f"{t.attention_seconds[-1] * 1e3:.1f} ms at T={t.lengths[-1]} (fitted exponent {t.exponent_attention:.2f}); "
        f"the whole pass {t.exponent_forward:.2f}."
    )


# ---- 3. sample efficiency ----


def objectives_figure(lab: ObjectiveLabels) -> go.Figure:
    """One row per objective, one cell per position: dark where a loss is computed, the target written in it."""
    n = len(lab.tokens)
    mlm = [1 if c else 0 for c in lab.chosen]
    nxt = [0 if t is None else 1 for t in lab.next_targets]
    rtd = [1] * n
    text = [
        [f"{esc(lab.mlm_inputs[i])}<br>→ {esc(lab.tokens[i])}" if c else "" for i, c in enumerate(lab.chosen)],
        [esc(t) if t is not None else "" for t in lab.next_targets],
        [f"{esc(t)}<br>replaced" if r else esc(t) for t, r in zip(lab.rtd_inputs, lab.rtd_replaced)],
    ]
    return go.Figure(
        go.Heatmap(
            z=[mlm, nxt, rtd],
            x=token_labels(lab.tokens),
            y=list(OBJECTIVES),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 12},
            zmin=0,
            zmax=1,
            colorscale=[[0, "#f2f2f2"], [1, "#9ecae1"]],
            showscale=False,
            xgap=2,
            ygap=2,
            hovertemplate="%{y}, %{x}: target %{text}<extra></extra>",
        ),
        layout={
            "title": {"text": "Where each objective puts a loss, and its target"},
            "xaxis": {"title": {"text": "position (the sentence as read)"}},
            "yaxis": {"title": {"text": "objective"}, "autorange": "reversed"},
            "margin": {"l": 10, "r": 10, "t": 60, "b": 10},
            "height": 340,
        },
    )


def objectives_table(lab: ObjectiveLabels) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "token": token_labels(lab.tokens),
            "MLM input": lab.mlm_inputs,
            "MLM label": [t if c else "-100" for t, c in zip(lab.tokens, lab.chosen)],
            "next-token target": [t or "—" for t in lab.next_targets],
            "RTD input": lab.rtd_inputs,
            "RTD label": ["replaced" if r else "original" for r in lab.rtd_replaced],
        }
    )


def loss_counts_figure(lab: ObjectiveLabels) -> go.Figure:
    counts = lab.counts()
    fig = grouped_bars(
        list(counts),
        {"positions with a loss": list(counts.values())},
        title=f"Positions that carry a loss, of {len(lab.tokens)}",
        x_title="objective",
        y_title="positions (count)",
        numbered=False,
        text_format=".0f",
    )
    fig.update_layout(yaxis={"rangemode": "tozero"}, showlegend=False)
    return fig


def loss_counts_table(lab: ObjectiveLabels) -> pd.DataFrame:
    counts = lab.counts()
    n = len(lab.tokens)
    return pd.DataFrame({"objective": list(counts), "positions": list(counts.values()), "of": n})


def loss_counts_alt(lab: ObjectiveLabels) -> str:
    c = lab.counts()
    return (
        f"Bars of {c[OBJECTIVES[0]]}, {c[OBJECTIVES[1]]} and {c[OBJECTIVES[2]]} positions with a loss, of "
        f"{len(lab.tokens)}: replaced-token detection learns from {c[OBJECTIVES[2]] / max(1, c[OBJECTIVES[0]]):.1f} "
        "times as many positions as MLM."
    )


def objectives_alt(lab: ObjectiveLabels) -> str:
    c = lab.counts()
    return (
        f"Of {len(lab.tokens)} positions, MLM scores {c[OBJECTIVES[0]]}, next-token prediction "
        f"{c[OBJECTIVES[1]]} and replaced-token detection all {c[OBJECTIVES[2]]}; "
        f"{sum(lab.rtd_replaced)} of them hold a replaced token."
    )


def corruption_text(lab: ObjectiveLabels) -> str:
    how = (
        "the lab's trained MLM acts as ELECTRA's small generator: each chosen position is shown to it as [MASK] "
        "and it samples a word from its prediction there"
        if lab.corruption == "generator"
        else "the trained MLM is not available, so each chosen position gets a uniformly random word"
    )
    return (
        f"The corruption: MLM's chosen positions are corrupted, and {how}. A sample that happens to equal the "
        "original is labelled *original*, as in ELECTRA. In the grid an MLM cell reads *input → target*, a "
        "next-token cell the token to predict, and an RTD cell the token the discriminator reads."
    )


# ---- 4. the [MASK] mismatch ----


def mismatch_figure(mm: MaskMismatch) -> go.Figure:
    fig = grouped_bars(
        [CASE_NAMES[c] for c in CASES],
        {
            f"at “{mm.original}”": [c.p_original for c in mm.cases],
            f"mean over all {mm.n_positions} word positions": [mm.mean_p_original[c] for c in CASES],
        },
        title="The trained MLM's p(original word), by what its position holds",
        x_title="what the chosen position holds",
        y_title="probability of the original word",
        numbered=False,
        text_format=".3f",
    )
    fig.update_layout(yaxis={"range": [0, 1.05]})
    return fig


def mismatch_table(mm: MaskMismatch) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "the position holds": CASE_NAMES[c.case],
                "input token": c.input_token,
                f"p({mm.original})": c.p_original,
                "rank": c.rank,
                "five likeliest": ", ".join(f"{t} {p:.1%}" for t, p in c.top),
            }
            for c in mm.cases
        ]
    )


def mismatch_alt(mm: MaskMismatch) -> str:
    p = {c.case: c.p_original for c in mm.cases}
    m = mm.mean_p_original
    return (
        f"At “{esc(mm.original)}”: {p['masked']:.3f} under [MASK], {p['random']:.3f} under a random word, "
        f"{p['kept']:.3f} when the word is kept. Averaged over {mm.n_positions} positions: {m['masked']:.3f}, "
        f"{m['random']:.3f}, {m['kept']:.3f}."
    )


# ---- 5. RoBERTa ----


def views_figure(v: MaskingViews) -> go.Figure:
    series = {name: v.distinct[name] for name in SCHEDULES}
    series.update({f"{name}, expected": v.expected[name] for name in SCHEDULES})
    fig = line_chart(
        v.epochs,
        series,
        title=f"Distinct masked views, {v.n_chosen} of {v.n_eligible} chosen",
        x_title="epochs",
        y_title="distinct sets of chosen positions seen",
        colors=CATEGORICAL[:3] * 2,
    )
    for trace in fig.data[len(SCHEDULES) :]:
        trace.mode, trace.line.dash, trace.line.width = "lines", "dot", 1.5
    fig.update_layout(yaxis={"rangemode": "tozero"})
    return fig


def views_table(v: MaskingViews) -> pd.DataFrame:
    table = pd.DataFrame({"epoch": v.epochs})
    for name in SCHEDULES:
        table[f"{name}: drawn"] = v.distinct[name]
        table[f"{name}: expected"] = v.expected[name]
    return table


def views_summary_table(v: MaskingViews) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "schedule": name,
                "distinct views, drawn": v.distinct[name][-1],
                "expected (closed form)": round(v.expected[name][-1], 2),
                "positions ever scored": f"{v.coverage[name]:.0%}",
                "expected": f"{v.expected_coverage[name]:.0%}",
            }
            for name in SCHEDULES
        ]
    )


def views_alt(v: MaskingViews) -> str:
    last = {name: v.distinct[name][-1] for name in SCHEDULES}
    names = list(SCHEDULES)
    return (
        f"After {v.epochs[-1]} epochs: {last[names[0]]} view with one static pattern, {last[names[1]]} with BERT's "
        f"10 static copies, {last[names[2]]} with dynamic masking, out of {v.n_patterns:,} possible."
    )


def roberta_table() -> pd.DataFrame:
    return pd.DataFrame(ROBERTA_CHANGES, columns=["", "BERT", "RoBERTa"])


# ---- pitfall 4 ----


def averaging_figure(la: LossAveraging) -> go.Figure:
    b = la.breakdown
    fig = grouped_bars(
        ["loss", "gradient norm at the logits"],
        {
            f"mean over the {b.n_counted} chosen positions": [b.mean, la.grad_norm_right],
            f"mean over all {b.n_positions} positions": [b.wrong_mean_all_positions, la.grad_norm_wrong],
        },
        title="The loss and its gradient, averaged two ways",
        x_title="quantity",
        y_title="value",
        numbered=False,
        text_format=".3f",
    )
    fig.update_layout(yaxis={"rangemode": "tozero"})
    return fig


def averaging_table(la: LossAveraging) -> pd.DataFrame:
    b = la.breakdown
    return pd.DataFrame(
        {
            "average": ["over chosen positions (right)", "over every position (wrong)"],
            "divided by": [b.n_counted, b.n_positions],
            "loss": [b.mean, b.wrong_mean_all_positions],
            "gradient norm": [la.grad_norm_right, la.grad_norm_wrong],
        }
    )


def averaging_alt(la: LossAveraging) -> str:
    b = la.breakdown
    return (
        f"Right mean {b.mean:.3f}, mean over every position {b.wrong_mean_all_positions:.3f}: both the loss and "
        f"its gradient shrink by {b.n_counted}/{b.n_positions} = {la.scale:.3f}."
    )


# ---- the pitfalls: one sentence of diagnosis each ----

PITFALL_TITLES = {
    1: "**1. Forgetting the key padding mask.**",
    2: "**2. Reading the pads' outputs.**",
    3: "**3. Labelling unmasked positions, or leaving the answer visible.**",
    4: "**4. Averaging the loss over every position.**",
    5: "**5. The raw [CLS] vector of a model never trained for it, as a sentence embedding.**",
    6: "**6. Truncation that silently cuts the answer out of a QA passage.**",
}
PITFALL_FIX = {
    1: "out = model(batch.ids, key_padding_mask=batch.key_padding_mask)  # True = ignore",
    2: "sentence = (hidden * ~mask[..., None]).sum(1) / (~mask).sum(1, keepdim=True)  # pads left out",
    3: "inputs[chosen] = mask_id; labels[~chosen] = -100  # hide what is scored (80/10/10), score only that",
    4: "loss = F.cross_entropy(logits.transpose(1, 2), labels, ignore_index=-100)",
    5: "sentence = mean_pool(hidden, key_padding_mask)  # what all-MiniLM-L6-v2 was trained with",
    6: "enc = tok(question, passage, truncation='only_second', max_length=384, stride=128, "
    "return_overflowing_tokens=True)",
}
PITFALL_TEXT = {
    1: (
        "**Symptom:** the same sentence gets different vectors depending on how long its batch-mates were, and "
        "nothing crashes. **Diagnosis:** without the key padding mask the pads are ordinary keys and take a share "
        "of every real token's attention; with it, the gap is float rounding."
    ),
    2: (
        "**Symptom:** a pooled vector or a loss that shifts with padding. **Diagnosis:** a pad's output is some "
        "vector, not zero and not meaningful, and PyTorch's own encoder even fills it with zeros in eval mode "
        "(its fast path) but not in training: leave pads out of pooling and out of the loss."
    ),
    3: (
        "**Symptom:** training accuracy near 100% within a few dozen steps, fill-mask on new text no better than "
        "a guess. **Diagnosis:** the scored positions still show their answer, so the model learns to copy."
    ),
    4: (
        "**Symptom:** a loss that looks several times smaller than it is, and slower learning. **Diagnosis:** "
        "the sum over the chosen positions is divided by every "
        "position, so the loss and its gradient shrink by the chosen share, which changes from batch to batch."
    ),
    5: (
        "**Symptom:** every pair of sentences looks alike: with the raw [CLS], even unrelated sentences get a high "
        "cosine, so a paraphrase barely stands out. **Diagnosis:** nothing trained this model's [CLS] output to "
        "stand for the sentence; it was trained with mean pooling, so use what it was trained with, or fine-tune "
        "[CLS] for the task."
    ),
    6: (
        "**Symptom:** a QA model that answers confidently, and wrongly, on long passages. **Diagnosis:** "
        "truncation cut the passage's end, answer and all, without a word: the model can only point at what is left."
    ),
}


def pitfall_mask_alt(leak: PadLeak) -> str:
    return (
        f"Without the mask, the sentence's outputs move by up to {leak.gap_unmasked:.3g} as {leak.n_pads} pads "
        f"are added; with it, by at most {max(leak.curve_masked):.1e}."
    )


def pitfall_pads_alt(fast: FastPathPads) -> str:
    return (
        f"The pad rows' output norms: up to {max(fast.norms_train):.2f} in train mode, "
        f"{max(fast.norms_eval):.2f} in eval mode (the fast path); the real tokens agree to {fast.real_max_diff:.1e}."
    )


def trained_cap_text(metadata: dict) -> str:
    """The trained MLM's own cap: the longest text it was trained on, far below its table's 512 rows."""
    longest = metadata.get("settings", {}).get("max_pieces")
    if not longest:
        return ""
    return (
        f" The lab's trained MLM was only ever trained on texts of up to {longest} pieces: its later positions "
        "are rows that training never reached."
    )


# ---- narrative, with the numbers ----


def reuse_text(r: AppendReuse, new_token_md: str) -> str:
    return (
        f"Append **{new_token_md}** and run again. Under a causal mask no earlier position ever looked "
        "to its right, so every earlier vector, and every key and value made from them, stays where it was "
        f"(largest change in any layer's input {short_number(r.layer_input_shift_causal)}): a decoder "
        "keeps them in a **KV cache** and computes only the new row. Bidirectionally every earlier vector moves "
        f"(layer inputs by up to {short_number(r.layer_input_shift_bidirectional)}), so the whole "
        "sequence is run again."
    )


def saving_text(c: AppendCosts) -> str:
    """The prediction's answer: how many times the cached appends' FLOPs the encoder spends."""
    return (
        f"Appending {c.n} tokens to {c.prefix}, the encoder spends **{c.ratio:.1f} times** the FLOPs of the cached "
        f"causal model: {c.flops_bidirectional[-1]:,} against {c.flops_cached[-1]:,}. Each append reruns about T "
        "rows instead of one, so the saving is close to the sequence's mean length."
    )


def mismatch_answer_text(mm: MaskMismatch, escape) -> str:
    """The prediction's answer: p(original) at the chosen position under each input, the likeliest named."""
    best = likeliest_case(mm)
    shown = ", ".join(f"{CASE_NAMES[c.case]} {c.p_original:.3f}" for c in mm.cases)
    return f"p(“{escape(mm.original)}”) at position {mm.position}: {shown}. Likeliest: **{CASE_NAMES[best]}**."


def flops_text(c: AppendCosts) -> str:
    slower = c.seconds_cached[-1] >= c.seconds_bidirectional[-1]
    clock = (
        " Here the clock favours the full rerun: on a model this small each cached step's fixed Python overhead "
        "outweighs its arithmetic. Choose all-MiniLM-L6-v2 in the sidebar to see the FLOPs gap in the time too."
        if slower
        else ""
    )
    return (
        f"Each FLOP count is read off the shapes of the run itself (every matrix product, 2·rows·in·out), and "
        f"equals the closed form: bidirectional L[(8D² + 4D·d_ff)ΣT + 4DΣT²] = {c.closed_form[0]:,}, "
        f"cached L[(8D² + 4D·d_ff)N + 4DΣT] = {c.closed_form[1]:,}. The times are one run's, on a "
        "shared server."
    ) + clock


def cut_answer_text(cut: FirstCut, escape) -> str:
    """The first-cut prediction's answer, worked: the cap less [CLS] and [SEP], in copies of the sentence."""
    k = len(cut.pieces)
    return (
        f"[CLS] and [SEP] take 2 of the {cut.cap} positions, so {cut.kept} of the document's pieces fit. Your "
        f"sentence is {k} pieces: {cut.kept} = {cut.kept // k} × {k} + {cut.kept % k}, so the first piece the "
        f"model never sees is piece {cut.index}, “{escape(cut.pieces[cut.index])}”."
    )


def mismatch_moved_text(asked: int, word_at: int, clear: int | None) -> str:
    """Why the [MASK] mismatch question is not on the position the student chose ("" when it is)."""
    said = [] if word_at == asked else [f"Position {asked} holds no word; using position {word_at}."]
    if clear is None:
        said.append(
            f"At no word of this sentence does one input beat both others by {MISMATCH_MARGIN:.1f} in probability, "
            "so the chart is shown without a question."
        )
    elif clear != word_at:
        said.append(
            f"At position {word_at} no input beats both others by {MISMATCH_MARGIN:.1f} in probability: the question "
            f"is asked at position {clear}, the nearest word where one does."
        )
    return " ".join(said)


def length_text(cap: LengthCap) -> str:
    return (
        f"The position table has **{cap.cap} rows**, one per position: position {cap.cap} has no vector, so a "
        "longer input is cut, silently, by the tokenizer. A long document must instead be split into windows "
        f"that each fit (here {cap.windows.size} word pieces plus [CLS] and [SEP], overlapping by "
        f"{cap.windows.overlap} so that no answer falls only on a seam), run one by one, and their outputs "
        "combined."
    )


def quadratic_text(s: AttentionScaling) -> str:
    return (
        "Every layer keeps an H × T × T grid of weights: doubling T quadruples it. The FLOPs split shows why the "
        "whole pass still looks almost linear at BERT's lengths: projections and FFN cost (8D² + 4D·d_ff) per "
        f"token, attention 4D·T per token, and the two are equal only at T = 2D + d_ff = {s.crossover}. "
        "Timings are measured once per server on request (a few seconds) and kept; the exponent is the slope of "
        "log time against log T, on a machine other people are using too."
    )


EFFICIENCY_TEXT = (
    "MLM learns from about 15% of the positions; the rest of the forward pass teaches nothing. Next-token "
    "prediction scores every position but the last. ELECTRA's **replaced-token detection** scores all of "
    "them: a discriminator reads the corrupted sentence and says, at every position, whether the token is "
    "the original. Same sentence, several times the signal."
)


MISMATCH_TEXT = (
    "Pre-training shows the model [MASK] at most of its chosen positions; fine-tuning inputs never contain "
    "it. If every chosen position were [MASK], the model would only learn to predict where it sees [MASK], "
    "and the vectors of real words would owe nothing to the objective. The 10% **kept** case scores it on "
    "real words too, so it must keep a good guess for a visible word; the 10% **random** case stops it from "
    "trusting what it sees. The gap between the bars is the mismatch that remains."
)


def views_text(v: MaskingViews) -> str:
    return (
        f"With exact 15% masking, {v.n_chosen} of this sentence's {v.n_eligible} eligible positions are chosen, "
        f"one of C({v.n_eligible}, {v.n_chosen}) = {v.n_patterns:,} possible sets. Static masking fixes the "
        "pattern once; BERT's preprocessing made 10 copies; RoBERTa draws a new one every epoch. With m draws from "
        "C equally likely sets the expected number of distinct ones is C(1 − (1 − 1/C)^m), the dotted lines."
    )


def scaling_model_text(config, name: str) -> str:
    return (
        f"On {name}: {config.n_layers} layers, {config.n_heads} heads, D = {config.d_model}, d_ff = {config.d_ff}, "
        f"a position table of {config.max_positions}; sequence of 1."
    )


def pitfall_mask_metric(leak) -> tuple[str, str]:
    return (f"Gap without the mask, at {leak.n_pads} pads", f"{leak.gap_unmasked:.3g} (with it {leak.gap_masked:.1e})")


def pitfall_pads_metric(fast) -> tuple[str, str]:
    return ("Largest pad-row norm, train vs eval", f"{max(fast.norms_train):.2f} vs {max(fast.norms_eval):.2f}")


def pitfall_leak_metric(summary) -> tuple[str, str]:
    acc, top5 = summary.final_train_accuracy, summary.held_out_top5
    return (
        "Training accuracy / held-out top-5, leaky vs correct",
        f"{acc['leaky']:.0%} / {top5['leaky']:.0%} vs {acc['correct']:.0%} / {top5['correct']:.0%}",
    )


def pitfall_cls_metric(ranking) -> tuple[str, str]:
    r = ranking.rank_accuracy
    return ("Pairs ordered right, raw [CLS] vs mean pooling", f"{r['cls']:.0%} vs {r['mean']:.0%}")


def answer_words(example) -> str:
    first, last = example.answer
    return " ".join(example.text_b.split()[first : last + 1])


def qa_example_text(question_md: str, passage_md: str, answer_md: str) -> str:
    return (
        f"A question from the QA task of *Using the outputs*: **{question_md}** Passage: “{passage_md}”; "
        f"answer: **{answer_md}**."
    )


def truncation_figure(t: AnswerTruncation) -> go.Figure:
    fig = grouped_bars(
        [str(n) for n in t.lengths],
        {"answer pieces left in the input": t.answer_kept},
        title=f"How much of the {t.answer_pieces}-piece answer survives truncation",
        x_title="max_length (question + passage + 3 special tokens)",
        y_title="answer pieces kept (count)",
        numbered=False,
    )
    fig.update_layout(yaxis={"rangemode": "tozero"}, showlegend=False)
    return fig


def truncation_table(t: AnswerTruncation) -> pd.DataFrame:
    return pd.DataFrame({"max_length": t.lengths, "answer pieces kept": t.answer_kept, "of": t.answer_pieces})


def truncation_alt(t: AnswerTruncation) -> str:
    lost = [n for n, k in zip(t.lengths, t.answer_kept) if k < t.answer_pieces]
    return (
        f"The whole answer survives from max_length {t.shortest_keeping} on; at {len(lost)} shorter lengths tried "
        f"({t.lengths[0]} to {max(lost) if lost else t.lengths[0]}) part or all of it is cut, with no error raised."
    )


# ---- Charts: each figure with its text alternative and, where there is one, its table ----


def append_shift_chart(r: AppendReuse, tokens: Sequence[str], new_token: str) -> Chart:
    return Chart(append_shift_figure(r, tokens), append_shift_alt(r, new_token), append_shift_table(r, tokens))


def append_flops_chart(c: AppendCosts) -> Chart:
    return Chart(append_flops_figure(c), append_costs_alt(c), append_costs_table(c))


def append_time_chart(c: AppendCosts) -> Chart:
    return Chart(append_time_figure(c), append_time_alt(c))


def cap_chart(cap: LengthCap) -> Chart:
    return Chart(cap_figure(cap), cap_alt(cap), cap_table(cap))


def scaling_sizes_chart(s: AttentionScaling, t: LengthTimings | None) -> Chart:
    return Chart(scaling_sizes_figure(s, t), scaling_alt(s), scaling_table(s, t))


def scaling_flops_chart(s: AttentionScaling) -> Chart:
    return Chart(scaling_flops_figure(s), flops_alt(s))


def timing_chart(t: LengthTimings) -> Chart:
    return Chart(timing_figure(t), timing_alt(t))


def objectives_chart(lab: ObjectiveLabels) -> Chart:
    return Chart(objectives_figure(lab), objectives_alt(lab), objectives_table(lab))


def loss_counts_chart(lab: ObjectiveLabels) -> Chart:
    return Chart(loss_counts_figure(lab), loss_counts_alt(lab), loss_counts_table(lab))


def mismatch_chart(mm: MaskMismatch) -> Chart:
    return Chart(mismatch_figure(mm), mismatch_alt(mm), mismatch_table(mm))


def views_chart(v: MaskingViews) -> Chart:
    return Chart(views_figure(v), views_alt(v), views_table(v))


def pitfall_mask_chart(leak: PadLeak) -> Chart:
    """The padding lesson's pad-leak curve, without its mark for one batch."""
    return Chart(padding.leak_curve_figure(leak), pitfall_mask_alt(leak), padding.leak_curve_table(leak))


def pitfall_pads_chart(fast: FastPathPads) -> Chart:
    return Chart(padding.fast_path_figure(fast), pitfall_pads_alt(fast), padding.fast_path_table(fast))


def averaging_chart(la: LossAveraging) -> Chart:
    return Chart(averaging_figure(la), averaging_alt(la), averaging_table(la))


def truncation_chart(t: AnswerTruncation) -> Chart:
    return Chart(truncation_figure(t), truncation_alt(t), truncation_table(t))
