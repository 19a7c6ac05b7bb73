"""The class room's reveal chart and export: shares from 0 to 100% computed from the counts, the right option
named, typed text escaped, spreadsheet formulas kept as text."""

from __future__ import annotations

import io

import apptest_helpers as helpers
import pandas as pd
import pytest

from classroom.peer import EXPORT_COLUMNS
from classroom.questions import typed
from classroom.rounds import Tally
from ui.views.room import rounds_csv, shift_chart

QUESTION = typed("Which one?", "<b>bold</b>\nplain\n=SUM(A1)", 2)


def test_the_shift_chart_draws_each_votes_shares_from_its_counts():
    chart = shift_chart(QUESTION, {1: Tally((3, 1, 0), 1), 2: Tally((1, 5, 2), 1)})
    fig = chart.figure.to_plotly_json()
    vote1, vote2 = fig["data"]
    assert list(helpers.decode(vote1["x"])) == pytest.approx([75, 25, 0])
    assert list(helpers.decode(vote2["x"])) == pytest.approx([12.5, 62.5, 25])
    assert list(vote2["text"]) == ["1 (12%)", "5 (62%)", "2 (25%)"]
    assert fig["layout"]["xaxis"]["range"][0] == 0 and fig["layout"]["title"]["text"].endswith("vote 2: 62% right")
    labels = list(vote1["y"])
    assert labels[0] == "A  &lt;b&gt;bold&lt;/b&gt;" and labels[1].endswith("✓ right") and "✓" not in labels[2]
    assert "the right one is B" in chart.alt and "vote 2: A 1, B 5, C 2 of 8" in chart.alt
    assert list(chart.table["vote 2"]) == [1, 5, 2]


def test_a_vote_nobody_answered_draws_zeros_not_a_division_by_zero():
    chart = shift_chart(QUESTION, {1: Tally((0, 0, 0), 1)})
    assert list(helpers.decode(chart.figure.data[0].x)) == [0, 0, 0]
    assert chart.figure.layout.title.text == "No votes"


def test_the_rounds_csv_keeps_formulas_as_text():
    row = dict.fromkeys(EXPORT_COLUMNS, "")
    row.update({"option text": "=SUM(A1)", "count": 3})
    table = pd.read_csv(io.StringIO(rounds_csv([row])))
    assert list(table.columns) == list(EXPORT_COLUMNS) and table["option text"][0] == "'=SUM(A1)"


def test_the_shift_chart_keeps_the_rules_of_an_honest_figure():
    import json

    from figure_rules import check_figure

    chart = shift_chart(QUESTION, {1: Tally((3, 1, 0), 1), 2: Tally((1, 5, 2), 1)})
    assert check_figure(json.loads(chart.figure.to_json()), chart.alt) == []


def test_the_rounds_table_gives_each_rounds_share_right_in_vote_1_then_vote_2():
    from datetime import UTC, datetime

    from classroom.rounds import Round
    from ui.views.room import rounds_table

    now = datetime.now(UTC)
    long = typed("x" * 200, "a\nb\nc", 1)
    rounds = [Round(1, "ABCDEFGH", 1, QUESTION, "reveal", None, now), Round(2, "ABCDEFGH", 2, long, "vote1", None, now)]
    table = rounds_table(rounds, {1: {1: Tally((1, 1, 2), 1), 2: Tally((0, 3, 1), 1)}})
    assert list(table["question"]) == [1, 2]
    assert list(table["vote 1 right"]) == ["25%", "–"] and list(table["vote 2 right"]) == ["75%", "–"]
    assert list(table["votes"]) == ["4 → 4", "0"] and len(table["asked"][1]) == 80
    assert rounds_table([], {}).empty
