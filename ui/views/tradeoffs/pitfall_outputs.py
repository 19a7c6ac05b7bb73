"""Section 9, pitfalls 5-6, reading the outputs: the raw [CLS] vector, and truncation that cuts the answer."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from encoder_core.lessons.tradeoffs import AnswerTruncation

from ..figures import Chart, grouped_bars


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


def truncation_alt(t: AnswerTruncation) -> str:
    lost = [n for n, k in zip(t.lengths, t.answer_kept) if k < t.answer_pieces]
    return (
        f"The whole answer survives from max_length {t.shortest_keeping} on; at {len(lost)} shorter lengths tried "
        f"({t.lengths[0]} to {max(lost) if lost else t.lengths[0]}) part or all of it is cut, with no error raised."
    )


def truncation_table(t: AnswerTruncation) -> pd.DataFrame:
    return pd.DataFrame({"max_length": t.lengths, "answer pieces kept": t.answer_kept, "of": t.answer_pieces})


def truncation_chart(t: AnswerTruncation) -> Chart:
    return Chart(truncation_figure(t), truncation_alt(t), truncation_table(t))
