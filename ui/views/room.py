"""The class room's figures and tables: pure functions of the room's results (classroom.results).

Options are drawn as letters A, B, C... with the option's text beside the letter, cut to fit; every
text that reaches a chart is escaped (a typed answer is user text).
"""

from __future__ import annotations

import io
import string
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go
import segno

from classroom.peer import EXPORT_COLUMNS
from classroom.questions import RoomQuestion
from classroom.results import QuestionResult
from classroom.rounds import Tally
from classroom.store import AnswerRow
from encoder_core.lessons import LESSON_TITLES
from encoder_core.quiz import Question

from .figures import CATEGORICAL, Chart, attention_grid_chart, esc

RIGHT_COLOUR = CATEGORICAL[2]  # bluish green
WRONG_COLOUR = CATEGORICAL[5]  # vermillion: the pair stays apart for red-green colour blindness
LABEL_CHARS = 48


def letter(i: int) -> str:
    return string.ascii_uppercase[i] if i < 26 else str(i + 1)


def option_label(i: int, option: str) -> str:
    short = option if len(option) <= LABEL_CHARS else option[: LABEL_CHARS - 1] + "…"
    return f"{letter(i)}  {esc(short)}"


def title_of(lesson: str) -> str:
    return LESSON_TITLES.get(lesson, lesson)


def option_figure(result: QuestionResult, lesson: str) -> go.Figure:
    """The share of the room choosing each option, the right one in green, from 0 to 100%."""
    labels = [option_label(i, o.option) for i, o in enumerate(result.options)]
    shares = [100 * o.share for o in result.options]
    fig = go.Figure(
        go.Bar(
            y=labels,
            x=shares,
            orientation="h",
            marker_color=[RIGHT_COLOUR if o.correct else WRONG_COLOUR for o in result.options],
            text=[f"{o.count} ({100 * o.share:.0f}%)" for o in result.options],
            textposition="outside",
            cliponaxis=False,
            customdata=[esc(o.option) for o in result.options],
            hovertemplate="%{customdata}<br>%{x:.0f}% of answers<extra></extra>",
        )
    )
    fig.update_layout(
        title={
            "text": esc(f"Question {result.index + 1} ({title_of(lesson)}): {result.right} of {result.answered} right")
        },
        xaxis={
            "title": {"text": "share of the room's answers (%)"},
            "range": [0, 115],
            "tickvals": [0, 25, 50, 75, 100],
        },
        yaxis={"title": {"text": "option (green: right)"}, "autorange": "reversed", "automargin": True},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=max(220, 46 * len(labels) + 130),
        showlegend=False,
    )
    return fig


def option_alt(result: QuestionResult) -> str:
    parts = [
        f"{letter(i)} {o.count} ({100 * o.share:.0f}%{', right' if o.correct else ''})"
        for i, o in enumerate(result.options)
    ]
    return f"Question {result.index + 1}: {result.answered} answers; " + "; ".join(parts) + "."


def option_chart(result: QuestionResult, lesson: str) -> Chart:
    """The live chart of one question (its table is shown above it, with the question)."""
    return Chart(option_figure(result, lesson), option_alt(result))


def option_table(result: QuestionResult) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "option": letter(i),
                "answer": o.option,
                "students": o.count,
                "share": f"{100 * o.share:.0f}%",
                "right": "yes" if o.correct else "",
            }
            for i, o in enumerate(result.options)
        ]
    )


def overview_table(results: Sequence[QuestionResult], questions: Mapping[int, Question]) -> pd.DataFrame:
    """One row per answered question, most missed first."""
    rows = []
    for r in results:
        q = questions.get(r.index)
        wrong = [o for o in r.options if not o.correct and o.count]
        top = max(wrong, key=lambda o: o.count, default=None)
        rows.append(
            {
                "question": r.index + 1,
                "lesson": LESSON_TITLES.get(q.lesson, q.lesson) if q else "",
                "answers": r.answered,
                "right": r.right,
                "missed": f"{100 * r.missed:.0f}%",
                "most chosen wrong answer": f"{top.option} ({top.count})" if top else "",
            }
        )
    return pd.DataFrame(rows, columns=["question", "lesson", "answers", "right", "missed", "most chosen wrong answer"])


def _safe_cell(value: object) -> object:
    """A spreadsheet runs a cell starting with = + - @ as a formula: keep such text as text."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def results_csv(rows: Sequence[AnswerRow], questions: Mapping[int, Question]) -> str:
    """Every recorded answer: student number (not the browser id), question, answer, right or wrong, time."""
    table = pd.DataFrame(
        [
            {
                "student": r.student,
                "question": r.question_index + 1,
                "lesson": questions[r.question_index].lesson if r.question_index in questions else "",
                "question id": r.question_id,
                "answer": r.option,
                "result": "right" if r.correct else "wrong",
                "time (UTC)": r.answered_at.strftime("%Y-%m-%d %H:%M:%S"),
            }
            for r in rows
        ],
        columns=["student", "question", "lesson", "question id", "answer", "result", "time (UTC)"],
    )
    return table.map(_safe_cell).to_csv(index=False)


def qr_png(url: str, scale: int = 8) -> bytes:
    """The student link as a QR code to project (error correction M: survives a glare on the screen)."""
    buffer = io.BytesIO()
    segno.make(url, error="m", micro=False).save(buffer, kind="png", scale=scale, border=2)
    return buffer.getvalue()


# ---------------------------------------------------------------- peer-instruction rounds

VOTE_COLOURS = {1: CATEGORICAL[4], 2: CATEGORICAL[0]}  # sky blue, then blue: one hue family, two shades


def shift_figure(question: RoomQuestion, tallies: Mapping[int, Tally]) -> go.Figure:
    """Vote 1 and vote 2 side by side, as shares of each vote from 0 to 100%; the right option named on its axis."""
    labels = [
        option_label(i, o) + ("  ✓ right" if i == question.correct else "") for i, o in enumerate(question.options)
    ]
    fig = go.Figure()
    for vote, tally in sorted(tallies.items()):
        shares = [100 * c / tally.total if tally.total else 0.0 for c in tally.counts]
        fig.add_trace(
            go.Bar(
                name=f"vote {vote} ({tally.total} votes)",
                y=labels,
                x=shares,
                orientation="h",
                marker_color=VOTE_COLOURS.get(vote, CATEGORICAL[7]),
                text=[f"{c} ({s:.0f}%)" for c, s in zip(tally.counts, shares, strict=True)],
                textposition="outside",
                cliponaxis=False,
                hovertemplate="%{y}<br>%{x:.0f}% of vote " + str(vote) + "<extra></extra>",
            )
        )
    fig.update_layout(
        title={"text": esc(shift_title(tallies))},
        barmode="group",
        xaxis={"title": {"text": "share of the vote (%)"}, "range": [0, 118], "tickvals": [0, 25, 50, 75, 100]},
        yaxis={"title": {"text": "option"}, "autorange": "reversed", "automargin": True},
        legend={"orientation": "h", "y": -0.25},
        margin={"l": 10, "r": 10, "t": 60, "b": 10},
        height=max(260, 70 * len(labels) + 170),
    )
    return fig


def shift_title(tallies: Mapping[int, Tally]) -> str:
    parts = [
        f"vote {v}: {100 * t.share_correct:.0f}% right"
        for v, t in sorted(tallies.items())
        if t.share_correct is not None
    ]
    return "The room's answers, " + ", then ".join(parts) if parts else "No votes"


def shift_alt(question: RoomQuestion, tallies: Mapping[int, Tally]) -> str:
    right = letter(question.correct)
    per_vote = [
        f"vote {v}: " + ", ".join(f"{letter(i)} {c}" for i, c in enumerate(t.counts)) + f" of {t.total}"
        for v, t in sorted(tallies.items())
    ]
    return f"Votes per option, the right one is {right}. " + "; ".join(per_vote) + "."


def shift_table(question: RoomQuestion, tallies: Mapping[int, Tally]) -> pd.DataFrame:
    rows = []
    for i, option in enumerate(question.options):
        row = {"option": letter(i), "answer": option, "right": "yes" if i == question.correct else ""}
        for v, t in sorted(tallies.items()):
            row[f"vote {v}"] = t.counts[i]
            row[f"vote {v} share"] = f"{100 * t.counts[i] / t.total:.0f}%" if t.total else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def shift_chart(question: RoomQuestion, tallies: Mapping[int, Tally]) -> Chart:
    """The reveal's chart: how the room's answers moved from vote 1 to vote 2."""
    return Chart(shift_figure(question, tallies), shift_alt(question, tallies), shift_table(question, tallies))


def rounds_csv(rows: Sequence[Mapping]) -> str:
    """classroom.peer.export_rows as CSV: counts per round, vote and option; no student in it."""
    return pd.DataFrame(list(rows), columns=list(EXPORT_COLUMNS)).map(_safe_cell).to_csv(index=False)


def quiz_proof_chart(question: Question) -> Chart | None:
    """A quiz question's own attention grid, when its generator drew one."""
    f = question.figure
    if f is None:
        return None
    return attention_grid_chart(f.weights, f.query_tokens, f.key_tokens, title=f.title, alt=f.alt)


def rounds_table(rounds: Sequence, tallies: Mapping[int, Mapping[int, Tally]]) -> pd.DataFrame:
    """The session's rounds, one row each: the question (cut to fit), its share right in vote 1 and in vote 2
    ("–" for a vote nobody answered or that did not run), and whether the answer has been revealed."""
    rows = []
    for rnd in rounds:
        votes = tallies.get(rnd.id, {})
        shares = {v: votes[v].share_correct if v in votes else None for v in (1, 2)}
        prompt = rnd.question.prompt
        rows.append(
            {
                "question": rnd.number,
                "asked": prompt if len(prompt) <= 80 else prompt[:79] + "…",
                "vote 1 right": f"{100 * shares[1]:.0f}%" if shares[1] is not None else "–",
                "vote 2 right": f"{100 * shares[2]:.0f}%" if shares[2] is not None else "–",
                "votes": " → ".join(str(votes[v].total) for v in (1, 2) if v in votes) or "0",
            }
        )
    return pd.DataFrame(rows, columns=["question", "asked", "vote 1 right", "vote 2 right", "votes"])
