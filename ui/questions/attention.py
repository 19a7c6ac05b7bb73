"""What the attention lesson asks the student to predict. The answers: encoder_core.lessons.attention
(row_outcome, drop_outcome, look_ahead), whose outcome names the options follow, in order.

Each question is built from the numbers of the input it is asked on, so that a misconception's feedback
states this input's facts (a test recomputes them); none of it is shown before the commit.
"""

from __future__ import annotations

import streamlit as st

from encoder_core.lessons import attention as core
from encoder_core.lessons.attention import DropLastResult, LookAhead, RowFacts, moved_count
from ui.frame.predict import Option, Prediction
from ui.room.registry import CannotAsk, Run, lesson_questions, run_key
from ui.views import attention as view

LESSON = "attention"


def same_rows(facts: RowFacts, tokens: list[str]) -> Prediction:
    """Which query row is the same under both masks (answer: row_outcome; asked only where facts.askable)."""
    busiest = facts.busiest
    return Prediction(
        LESSON,
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


def drop(result: DropLastResult) -> Prediction:
    """Which runs move the vectors before a dropped token (answer: drop_outcome; asked where drop_is_clear)."""
    n, moved = result.positions, moved_count(result)
    return Prediction(
        LESSON,
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


def look_ahead(la: LookAhead, tokens: list[str], example_mass: float) -> Prediction:
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
    return Prediction(
        LESSON,
        "look-ahead",
        f"Now the same head reads your sentence. Which token does “{tokens[word]}” (token {word}) attend to most?",
        tuple(options),
        concept="attention_look_ahead",
        idea="a-head-looks-ahead",
    )


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON)


def _comparison(run: Run):
    return core.compare_masks(run.model, run.ids, run.proof["layer"], run.proof["head"])


def _rows_question(run: Run) -> tuple[Prediction, int]:
    """The lesson's own question, asked only where its answer stands clear (core.row_facts(...).askable)."""
    comparison = _comparison(run)
    facts = core.row_facts(comparison)
    if not facts.askable:
        raise CannotAsk("On this head the causal mask leaves more than the last row alone: try another sentence.")
    return same_rows(facts, run.tokens), core.ROW_OUTCOMES.index(core.row_outcome(comparison))


def _dropped(run: Run):
    return core.drop_token(run.model, run.ids, run.proof["position"])


def _drop_question(run: Run) -> tuple[Prediction, int]:
    dropped = _dropped(run)
    return drop(dropped), core.DROP_OUTCOMES.index(core.drop_outcome(dropped))


def _last_word(run: Run) -> int:
    return core.last_word_position(run.tokens)


register(
    "attention-rows",
    "Attention: which row does the causal mask leave alone?",
    ask=_rows_question,
    step=0,
    charts=lambda run: list(view.mask_pair_charts(_comparison(run), run.tokens)),
    # the lesson's worked half: the bidirectional grid alone, which the question asks about
    asked_with=lambda run: list(view.mask_pair_charts(_comparison(run), run.tokens))[:1],
    lead=lambda run: f"Layer {run.proof['layer']}, head {run.proof['head']}, drawn on the screen. ",
    position=_last_word,
)
register(
    "attention-drop",
    "Attention: drop the last word; whose vectors move?",
    ask=_drop_question,
    step=1,
    charts=lambda run: [view.drop_last_chart(_dropped(run), run.tokens)],
    lead=lambda run: (
        f"The token dropped is the last word piece, “{run.tokens[run.proof['position']]}” "
        f"(token {run.proof['position']}). "
    ),
    position=_last_word,
)


def _look(run: Run):
    """The lesson's trained head that looks ahead, on the lecturer's sentence (the lab's trained MLM's encoder)."""
    return _look_run(run_key(run), run)


@st.cache_data(show_spinner=False, max_entries=16)
def _look_run(key: tuple, _run: Run):
    """Once per sentence (key: run_key): the question, its lead, its example and its chart all read it."""
    return core.look_ahead_run(_run.model.bert, _run.tokenizer, _run.proof["sentence"])


def _look_question(run: Run) -> tuple[Prediction, int]:
    """The lesson's own question, asked only where a word's favourite leads by the lesson's margin."""
    found = _look(run)
    if found.question is None:
        raise CannotAsk(
            "No word of this sentence has a word on each side and a clear favourite in this head: try a longer one."
        )
    return look_ahead(found.question, found.tokens, found.example_mass), found.question.answer


def _look_example(run: Run) -> list:
    found = _look(run)
    return [
        view.look_ahead_example_chart(
            found.example_grid, found.example_tokens, run.name, found.layer, found.head, found.example_mass
        )
    ]


def _look_chart(run: Run) -> list:
    found = _look(run)
    return [view.look_ahead_chart(found.grid, found.tokens, found.question, run.name)]


def _look_lead(run: Run) -> str:
    found = _look(run)
    return f"Layer {found.layer}, head {found.head}, shown on an example first. "


register(
    "attention-look-ahead",
    "Attention: in a trained head, which token does a word attend to most?",
    ask=_look_question,
    step=3,  # "A trained head looks ahead"
    charts=_look_chart,
    asked_with=_look_example,  # the head on the lesson's example: its habit, not this sentence's answer
    trained=True,
    lead=_look_lead,
)
