"""What the lecturer sees, from stored counts: shares, right answers, most-missed order, the chart,
the CSV (no browser id, no formula cells) and the QR code."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from classroom.results import MAX_OPTIONS, REST, summarize
from classroom.store import AnswerRow, OptionCount
from encoder_core.quiz import question_for
from ui.views import room as view


def choice_question():
    return next(q for q in (question_for(None, s, 0) for s in range(1, 500)) if q.kind == "choice")


def numeric_question():
    return next(q for q in (question_for(None, s, 0) for s in range(1, 500)) if q.kind == "numeric")


def test_choice_shares_include_the_options_nobody_chose():
    q = choice_question()
    wrong = next(c for c in q.choices if c != q.answer)
    counts = [OptionCount(0, q.id, q.answer, True, 1), OptionCount(0, q.id, wrong, False, 3)]
    (r,) = summarize(counts, {0: q})
    assert [o.option for o in r.options] == list(q.choices)
    by_option = {o.option: o for o in r.options}
    assert by_option[q.answer].share == 0.25 and by_option[q.answer].correct
    assert by_option[wrong].share == 0.75 and not by_option[wrong].correct
    assert sum(o.count for o in r.options) == r.answered == 4 and r.right == 1 and r.missed == 0.75
    assert sum(o.share for o in r.options) == pytest.approx(1.0)


def test_most_missed_first_then_more_answers_then_the_lower_number():
    counts = [
        OptionCount(0, "a", "x", True, 3),
        OptionCount(1, "b", "x", False, 2),
        OptionCount(1, "b", "y", True, 2),
        OptionCount(2, "c", "x", False, 1),
        OptionCount(3, "d", "x", False, 4),
    ]
    assert [r.index for r in summarize(counts)] == [3, 2, 1, 0]


def test_many_typed_answers_keep_the_most_chosen_and_name_the_rest():
    counts = [OptionCount(0, "n", f"{i}", i == 0, 10 - i) for i in range(9)]
    (r,) = summarize(counts)
    assert len(r.options) == MAX_OPTIONS and r.options[-1].option == REST
    assert r.options[-1].count == sum(10 - i for i in range(MAX_OPTIONS - 1, 9))
    assert sum(o.count for o in r.options) == r.answered


def test_the_chart_escapes_typed_answers_and_draws_shares_from_zero():
    counts = [OptionCount(0, "n", "<b>x</b>", False, 1), OptionCount(0, "n", "4", True, 3)]
    (r,) = summarize(counts)
    fig = view.option_figure(r, "attention")
    bar = fig.data[0]
    assert list(bar.x) == [75.0, 25.0] and fig.layout.xaxis.range[0] == 0
    assert all("<b>" not in label for label in bar.y) and "&lt;b&gt;" in bar.y[1]
    assert "3 of 4 right" in fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    assert view.option_alt(r).startswith("Question 1: 4 answers; A 3 (75%, right)")


def test_the_csv_numbers_students_and_defuses_formulas():
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    rows = [AnswerRow(1, 0, "q:0", "=HYPERLINK(1)", False, when), AnswerRow(2, 0, "q:0", "4", True, when)]
    table = list(csv.DictReader(io.StringIO(view.results_csv(rows, {}))))
    assert [r["student"] for r in table] == ["1", "2"] and table[0]["answer"] == "'=HYPERLINK(1)"
    assert table[1]["result"] == "right" and table[0]["time (UTC)"] == "2026-01-02 03:04:05"


def test_the_qr_code_is_a_png():
    png = view.qr_png("http://127.0.0.1:8501/quiz?room=ABCDEFGH")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200
