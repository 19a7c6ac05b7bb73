"""What the attention lesson asks the student to predict. The answers: encoder_core.lessons.attention
(row_outcome, drop_outcome, look_ahead), whose outcome names the options follow, in order.

Each question is built from the numbers of the input it is asked on, so that a misconception's feedback
states this input's facts (a test recomputes them); none of it is shown before the commit.
"""

from __future__ import annotations

from encoder_core.lessons.attention import DropLastResult, LookAhead, RowFacts, moved_count
from ui.frame.predict import Option, Question


def same_rows(facts: RowFacts, tokens: list[str]) -> Question:
    """Which query row is the same under both masks (answer: row_outcome; asked only where facts.askable)."""
    busiest = facts.busiest
    return Question(
        "attention",
        "rows",
        "You see the bidirectional grid. Now the causal mask is added: which query row comes out exactly the same?",
        (
            Option(
                f"the first row ({tokens[0]})",
                "Under the causal mask the first token may look only at itself, so its row becomes a single 1 on "
                f"{tokens[0]}. Here it had given {facts.future[0]:.3f} of its attention to the tokens after it, "
                "and the mask takes all of that away.",
            ),
            Option("the last row"),
            Option(
                "every row",
                "The causal mask takes away every key after a query, so a row stays the same only if its query "
                f"had nothing after it to lose. Here row {busiest} (“{tokens[busiest]}”) gave "
                f"{facts.future[busiest]:.3f} of its attention to the tokens after it.",
            ),
            Option(
                "no row",
                "The last token has no later token to hide: the mask takes nothing away from its row.",
            ),
        ),
        concept="attention_identical_row",
        idea="causal-last-row",
    )


def _rounding(x: float) -> str:
    return "0" if x == 0 else f"{x:.1e}"


def drop(result: DropLastResult) -> Question:
    """Which runs move the vectors before a dropped token (answer: drop_outcome; asked where drop_is_clear)."""
    n, moved = result.positions, moved_count(result)
    return Question(
        "attention",
        "drop",
        "Drop that token and run the sentence again. Which runs change the final vectors of the tokens before it?",
        (
            Option(
                "only the causal one",
                "It is the other way round: under the causal mask an earlier token never looks at a later one, so "
                "removing a later token cannot reach it.",
            ),
            Option("only the bidirectional one (no mask)"),
            Option(
                "both",
                "The causal mask hides every later token from earlier ones, so under it their vectors cannot move: "
                f"here they moved by at most {_rounding(result.max_causal)}, float rounding.",
            ),
            Option(
                "neither",
                "Without the mask every vector is built from every token, the dropped one included: here "
                f"{moved} of the {n} vectors before it moved, by up to {result.max_bidirectional:.3g}.",
            ),
        ),
        concept="attention_drop_last",
        idea="drop-moves-bidirectional-only",
    )


def token_label(tokens: list[str], position: int) -> str:
    return f"“{tokens[position]}” (token {position})"


LOOK_HABIT = {  # why a guess at this role misses, when the head's favourite is the token after the word
    "before": "Looking back is all a causal mask allows. An encoder has none, and this head looks ahead",
    "itself": "A token need not attend to itself most: this head looks ahead",
    "further": "This head looks one token ahead, not two",
}


def look_ahead(la: LookAhead, tokens: list[str], example_mass: float) -> Question:
    """Which of a few tokens a word attends to most in a trained head (answer: LookAhead.answer).

    example_mass: the head's average weight on the token right after a token, on the example it was shown on."""
    word, win = la.query, la.options[la.answer]
    options = []
    for role, position, weight in zip(la.roles, la.options, la.weights):
        label = token_label(tokens, position)
        if position == win:
            options.append(Option(label))
            continue
        habit = (
            f"{LOOK_HABIT[role]}: on the example it put {example_mass:.2f} of a token's attention, on average, "
            "on the token right after it."
            if la.winner_role == "after"
            else f"A head's habit on one sentence is a tendency, not a rule: on this word it favours "
            f"{token_label(tokens, win)}."
        )
        fact = (
            f" Here “{tokens[word]}” gives {token_label(tokens, win)} {la.weights[la.answer]:.2f} of its attention "
            f"and {label} {weight:.2f}."
        )
        options.append(Option(label, habit + fact))
    return Question(
        "attention",
        "look-ahead",
        f"Now the same head reads your sentence. Which token does “{tokens[word]}” (token {word}) attend to most?",
        tuple(options),
        concept="attention_look_ahead",
        idea="a-head-looks-ahead",
    )
