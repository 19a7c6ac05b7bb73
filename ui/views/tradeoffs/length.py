"""Section 2, length, a hard cap: past the position table the text is cut."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import FirstCut, LengthCap

from ..figures import CATEGORICAL, Chart


def cut_answer_text(cut: FirstCut, escape) -> str:
    """The first-cut prediction's answer, worked: the cap less [CLS] and [SEP], in copies of the sentence."""
    k = len(cut.pieces)
    return (
        f"[CLS] and [SEP] take 2 of the {cut.cap} positions, so {cut.kept} of the document's pieces fit. Your "
        f"sentence is {k} pieces: {cut.kept} = {cut.kept // k} × {k} + {cut.kept % k}, so the first piece the "
        f"model never sees is piece {cut.index}, “{escape(cut.pieces[cut.index])}”."
    )


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


def cap_alt(cap: LengthCap) -> str:
    if not cap.cut:
        return f"The document has {cap.n_tokens} tokens and fits the {cap.cap} positions: one window, nothing cut."
    return (
        f"The document has {cap.n_tokens} tokens; truncation to {cap.cap} drops the last {cap.cut}. "
        f"{len(cap.windows.spans)} windows of up to {cap.windows.size} tokens, overlapping by "
        f"{cap.windows.overlap}, cover all of it."
    )


def cap_table(cap: LengthCap) -> pd.DataFrame:
    spans = [("whole document", 0, cap.n_tokens - 2), ("truncated input", 0, min(cap.n_tokens - 2, cap.cap - 2))]
    spans += [(f"window {i + 1}", s, e) for i, (s, e) in enumerate(cap.windows.spans)]
    return pd.DataFrame([{"input": name, "first token": s, "end (exclusive)": e} for name, s, e in spans])


def cap_chart(cap: LengthCap) -> Chart:
    return Chart(cap_figure(cap), cap_alt(cap), cap_table(cap))


def cap_cut_text(cap: LengthCap) -> str:
    if not cap.cut:
        return "Nothing is cut: the document fits."
    before, after = " ".join(cap.before_cut), " ".join(cap.after_cut)
    return f"…{before} ✂ {after}… (the model never sees anything after the ✂)"


def length_text(cap: LengthCap) -> str:
    return (
        f"The position table has **{cap.cap} rows**, one per position: position {cap.cap} has no vector, so a "
        "longer input is cut, silently, by the tokenizer. A long document must instead be split into windows "
        f"that each fit (here {cap.windows.size} word pieces plus [CLS] and [SEP], overlapping by "
        f"{cap.windows.overlap} so that no answer falls only on a seam), run one by one, and their outputs "
        "combined."
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
