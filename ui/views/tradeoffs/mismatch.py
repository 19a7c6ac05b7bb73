"""Section 5, the [MASK] mismatch: how well each input lets the model recover a word."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import CASES, MISMATCH_MARGIN, MaskMismatch, likeliest_case

from ..figures import Chart, esc, grouped_bars

CASE_NAMES = {"masked": "[MASK] (80%)", "random": "a random word (10%)", "kept": "the word itself (10%)"}


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


def mismatch_answer_text(mm: MaskMismatch, escape) -> str:
    """The prediction's answer: p(original) at the chosen position under each input, the likeliest named."""
    best = likeliest_case(mm)
    shown = ", ".join(f"{CASE_NAMES[c.case]} {c.p_original:.3f}" for c in mm.cases)
    return f"p(“{escape(mm.original)}”) at position {mm.position}: {shown}. Likeliest: **{CASE_NAMES[best]}**."


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


def mismatch_alt(mm: MaskMismatch) -> str:
    p = {c.case: c.p_original for c in mm.cases}
    m = mm.mean_p_original
    return (
        f"At “{esc(mm.original)}”: {p['masked']:.3f} under [MASK], {p['random']:.3f} under a random word, "
        f"{p['kept']:.3f} when the word is kept. Averaged over {mm.n_positions} positions: {m['masked']:.3f}, "
        f"{m['random']:.3f}, {m['kept']:.3f}."
    )


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


def mismatch_chart(mm: MaskMismatch) -> Chart:
    return Chart(mismatch_figure(mm), mismatch_alt(mm), mismatch_table(mm))


MISMATCH_TEXT = (
    "Pre-training shows the model [MASK] at most of its chosen positions; fine-tuning inputs never contain "
    "it. If every chosen position were [MASK], the model would only learn to predict where it sees [MASK], "
    "and the vectors of real words would owe nothing to the objective. The 10% **kept** case scores it on "
    "real words too, so it must keep a good guess for a visible word; the 10% **random** case stops it from "
    "trusting what it sees. The gap between the bars is the mismatch that remains."
)
