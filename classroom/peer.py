"""What the lecturer's screen suggests after the first vote, and the rows of a room's rounds export.

Crouch & Mazur (2001) and Smith et al. (2009): when few of a room answer right, a discussion among
students mostly pools wrong ideas, so teach the idea again; when a fair share does, enough students hold
the right idea to convince a neighbour, so discuss and vote again; when most do, the room has it: reveal
and move on.

Judged above chance. A room that guesses gets 1/k of a k-option question right: 50% of a 2-option
question, 25% of a 4-option one. So the share right, p, is first measured from guessing to everyone right,

    above chance = (p - 1/k) / (1 - 1/k)        (0: no better than guessing, 1: all right; below 0: worse)

and the two thresholds (RETEACH_BELOW, MOVE_ON_ABOVE, the lecturer's settings) apply to that. With the
defaults, 35% and 70% above chance: teach again below 67.5% right on 2 options, 56.7% on 3, 51.3% on 4;
move on above 85%, 80%, 77.5%. With many options it tends to the share right itself.
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


def above_chance(share_correct: float, options: int | None) -> float:
    """The share right measured from guessing (0) to everyone right (1): (p - 1/k) / (1 - 1/k). Negative when
    fewer than guessing would get right. options None (or under 2): the share itself."""
    if options is None or options < 2:
        return share_correct
    chance = 1 / options
    return (share_correct - chance) / (1 - chance)


def share_needed(threshold: float, options: int | None) -> float:
    """The share right that is `threshold` above chance on a question with this many options."""
    if options is None or options < 2:
        return threshold
    chance = 1 / options
    return chance + threshold * (1 - chance)


def suggest(
    share_correct: float | None,
    reteach_below: float = RETEACH_BELOW,
    move_on_above: float = MOVE_ON_ABOVE,
    options: int | None = None,
) -> Suggestion:
    """The next step for a first vote's share of right answers (None: no votes) on a question with this many
    options; the thresholds apply to the share above chance (above_chance). options None: no correction."""
    check_thresholds(reteach_below, move_on_above)
    if share_correct is None:
        return Suggestion("none", "Nobody voted", "With no votes there is nothing to go on: ask again or move on.")
    score = round(above_chance(share_correct, options), 9)  # 0.8 on 3 options is 0.7 above chance, not 0.70000001
    low, high = share_needed(reteach_below, options), share_needed(move_on_above, options)
    got = f"{100 * share_correct:.0f}% answered right"
    if options is not None and options >= 2:
        got += f" (guessing alone gets {100 / options:.0f}% of {options} options right)"
    low_s, high_s = f"{100 * low:.0f}%", f"{100 * high:.0f}%"
    if score < reteach_below:
        return Suggestion(
            "reteach",
            "Teach it again",
            f"{got}, under {low_s}: a discussion would mostly pool wrong ideas. Go back to the lesson's step, "
            "then ask again.",
        )
    if score <= move_on_above:
        return Suggestion(
            "discuss",
            "Discuss with your neighbour, then vote again",
            f"{got}, between {low_s} and {high_s}: enough of the room holds the right idea to convince a neighbour.",
        )
    return Suggestion("reveal", "Reveal and move on", f"{got}, over {high_s}: the room has it.")


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
