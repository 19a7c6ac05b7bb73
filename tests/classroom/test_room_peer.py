"""The suggestion after vote 1 (the thresholds, their edges and their settings) and the rounds' export rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from classroom.peer import EXPORT_COLUMNS, above_chance, export_rows, share_needed, suggest
from classroom.questions import typed
from classroom.rounds import Round, Tally


@pytest.mark.parametrize(
    ("share", "kind"),
    [(0.0, "reteach"), (0.349, "reteach"), (0.35, "discuss"), (0.5, "discuss"), (0.70, "discuss"), (0.701, "reveal")],
)
def test_the_suggestion_follows_the_share_correct(share, kind):
    assert suggest(share).kind == kind


@pytest.mark.parametrize(
    ("options", "share", "kind"),
    [
        # 2 options: guessing gets 50%; teach again under 67.5%, move on over 85%
        (2, 0.5, "reteach"),
        (2, 0.67, "reteach"),
        (2, 0.68, "discuss"),
        (2, 0.85, "discuss"),
        (2, 0.86, "reveal"),
        # 3 options: guessing gets 33%; under 56.7%, over 80%
        (3, 0.56, "reteach"),
        (3, 0.57, "discuss"),
        (3, 0.80, "discuss"),
        (3, 0.81, "reveal"),
        # 4 options: guessing gets 25%; under 51.25%, over 77.5%
        (4, 0.25, "reteach"),
        (4, 0.51, "reteach"),
        (4, 0.52, "discuss"),
        (4, 0.77, "discuss"),
        (4, 0.78, "reveal"),
        (4, 0.0, "reteach"),  # worse than guessing
    ],
)
def test_the_suggestion_is_judged_above_chance(options, share, kind):
    assert suggest(share, options=options).kind == kind


def test_above_chance_runs_from_guessing_to_everyone_right():
    for k in (2, 3, 4, 6):
        assert above_chance(1 / k, k) == pytest.approx(0) and above_chance(1.0, k) == pytest.approx(1)
        assert share_needed(0.35, k) == pytest.approx(1 / k + 0.35 * (1 - 1 / k))
        assert above_chance(share_needed(0.7, k), k) == pytest.approx(0.7)
    assert above_chance(0.5, None) == 0.5 == share_needed(0.5, 1)
    said = suggest(0.6, options=2).why
    assert "60% answered right" in said and "guessing alone gets 50%" in said and "under 68%" in said


def test_the_thresholds_are_settings_and_are_checked():
    assert suggest(0.5, reteach_below=0.6, move_on_above=0.9).kind == "reteach"
    assert suggest(0.5, reteach_below=0.1, move_on_above=0.4).kind == "reveal"
    assert "under 60%" in suggest(0.5, 0.6, 0.9).why and "50% answered right" in suggest(0.5, 0.6, 0.9).why
    assert suggest(None).kind == "none"
    with pytest.raises(ValueError):
        suggest(0.5, reteach_below=0.8, move_on_above=0.7)


def test_a_tally_counts_and_shares():
    tally = Tally((1, 3, 0), correct=1)
    assert tally.total == 4 and tally.share_correct == 0.75
    assert Tally((0, 0), correct=0).share_correct is None


def test_the_export_has_a_row_per_round_vote_and_option_and_no_student():
    q = typed("Which?", "a\nb\nc", 2)
    now = datetime.now(UTC)
    first = Round(10, "ABCDEFGH", 1, q, "reveal", None, now)
    transfer = Round(11, "ABCDEFGH", 2, q, "vote1", 10, now)
    tallies = {10: {1: Tally((2, 1, 1), 1), 2: Tally((0, 1, 3), 1)}, 11: {1: Tally((0, 0, 4), 2)}}
    rows = export_rows([first, transfer], tallies)
    assert len(rows) == 9 and all(tuple(r) == EXPORT_COLUMNS for r in rows)
    vote2 = [r for r in rows if r["round"] == 1 and r["vote"] == 2]
    assert [r["count"] for r in vote2] == [0, 1, 3] and vote2[0]["share correct"] == 0.25
    assert [r["right option"] for r in vote2] == ["no", "yes", "no"]
    assert [r["share of the vote"] for r in vote2] == [0.0, 0.25, 0.75]
    assert {r["transfer of round"] for r in rows if r["round"] == 2} == {1}
    assert not any("student" in c for c in EXPORT_COLUMNS)
