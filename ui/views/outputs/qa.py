"""Section 5, find the answer in a passage: the span head's start and end scores, and the answer in the passage."""

from __future__ import annotations

import pandas as pd

from encoder_core.lessons.outputs import SpanPrediction

from ..figures import Chart, grouped_bars, token_labels


def no_answer_text(pred: SpanPrediction, escape) -> str:
    words = ", ".join(escape(w) for w in pred.missing_words)
    return (
        f"The passage never mentions {words}, so the question may have no answer here. This head was trained "
        "only on questions answered in the passage, so it always picks a span; it cannot say “no answer” (models "
        "trained for that, as on SQuAD 2.0, learn to point at [CLS] instead)."
    )


def span_markdown(pred: SpanPrediction, escape) -> str:
    """The passage with the answer in bold, every token escaped by the page's markdown escaper."""
    words = [escape(t) for t in pred.passage_tokens]
    words[pred.start] = "**" + words[pred.start]
    words[pred.end] = words[pred.end] + "**"
    return " ".join(words)


def span_chart(pred: SpanPrediction) -> Chart:
    """Start and end probabilities over the passage's tokens; the chosen span's tokens are named in the title."""
    labels = token_labels(pred.passage_tokens)
    fig = grouped_bars(
        pred.passage_tokens,
        {"start of the answer": pred.start_probs, "end of the answer": pred.end_probs},
        title=f"Where the answer starts and ends: “{pred.answer}”",
        x_title="passage token",
        y_title="probability (over the passage only)",
    )
    fig.add_vrect(
        x0=pred.start - 0.5, x1=pred.end + 0.5, fillcolor="#ffd54f", opacity=0.35, line_width=0, layer="below"
    )
    fig.update_layout(yaxis={"range": [0, 1.05]}, height=380)
    fig.update_xaxes(tickangle=-45, categoryorder="array", categoryarray=labels)
    table = pd.DataFrame(
        {
            "position in passage": list(range(len(labels))),
            "token": pred.passage_tokens,
            "p(start)": pred.start_probs,
            "p(end)": pred.end_probs,
            "in the answer": [pred.start <= i <= pred.end for i in range(len(labels))],
        }
    )
    p_s, p_e = pred.start_probs[pred.start], pred.end_probs[pred.end]
    alt = (
        f"The answer is tokens {pred.start} to {pred.end} of the passage, “{pred.answer}”: p(start) {p_s:.1%}, "
        f"p(end) {p_e:.1%}."
    )
    return Chart(fig, alt, table)
