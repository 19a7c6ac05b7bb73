"""What the lecturer's screen suggests after the first vote, and the rows of a room's rounds export.

Crouch & Mazur (2001) and Smith et al. (2009): when fewer than about 35% of a room answer right, a
discussion among students mostly pools wrong ideas, so teach the idea again; between about 35% and
70%, enough students hold the right idea to convince a neighbour, so discuss and vote again; above
about 70%, the room has it: reveal and move on. The two thresholds are the lecturer's settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rounds import Round, Tally

RETEACH_BELOW = 0.35
MOVE_ON_ABOVE = 0.70


@dataclass(frozen=True)
class Suggestion:
    kind: str  # reteach, discuss, reveal, or none (nobody voted)
    headline: str
    why: str


def check_thresholds(reteach_below: float, move_on_above: float) -> None:
    if not 0 <= reteach_below < move_on_above <= 1:
        raise ValueError("the thresholds need 0 <= reteach below < move on above <= 1")


def suggest(
    share_correct: float | None, reteach_below: float = RETEACH_BELOW, move_on_above: float = MOVE_ON_ABOVE
) -> Suggestion:
    """The next step for a first vote's share of right answers (None: no votes)."""
    check_thresholds(reteach_below, move_on_above)
    low, high = f"{100 * reteach_below:.0f}%", f"{100 * move_on_above:.0f}%"
    if share_correct is None:
        return Suggestion("none", "Nobody voted", "With no votes there is nothing to go on: ask again or move on.")
    got = f"{100 * share_correct:.0f}% answered right"
    if share_correct < reteach_below:
        return Suggestion(
            "reteach",
            "Teach it again",
            f"{got}, under {low}: a discussion would mostly pool wrong ideas. Go back to the lesson's step, "
            "then ask again.",
        )
    if share_correct <= move_on_above:
        return Suggestion(
            "discuss",
            "Discuss with your neighbour, then vote again",
            f"{got}, between {low} and {high}: enough of the room holds the right idea to convince a neighbour.",
        )
    return Suggestion("reveal", "Reveal and move on", f"{got}, over {high}: the room has it.")


EXPORT_COLUMNS = (
    "round",
    "question",
    "source",
    "lesson",
    "transfer of round",
    "vote",
    "option",
    "option text",
    "right option",
    "count",
    "share of the vote",
    "share correct",
)


def export_rows(rounds: list[Round], tallies: dict[int, dict[int, Tally]]) -> list[dict]:
    """One row per round, vote and option: counts only, no student identity (none is stored with a count).

    tallies: {round id: {vote: Tally}}; a vote nobody answered has no rows; a cancelled round has none."""
    rounds = [r for r in rounds if not r.cancelled]
    numbers = {r.id: r.number for r in rounds}
    rows = []
    for rnd in rounds:
        for vote, tally in sorted(tallies.get(rnd.id, {}).items()):
            share_correct = tally.share_correct
            for i, option in enumerate(rnd.question.options):
                rows.append(
                    {
                        "round": rnd.number,
                        "question": rnd.question.prompt,
                        "source": rnd.question.source,
                        "lesson": rnd.question.lesson,
                        "transfer of round": numbers.get(rnd.transfer_of, "") if rnd.transfer_of else "",
                        "vote": vote,
                        "option": chr(ord("A") + i),
                        "option text": option,
                        "right option": "yes" if i == rnd.question.correct else "no",
                        "count": tally.counts[i],
                        "share of the vote": round(tally.counts[i] / tally.total, 4) if tally.total else 0.0,
                        "share correct": round(share_correct, 4) if share_correct is not None else "",
                    }
                )
    return rows
