"""What the attention lesson asks the student to predict. The answers: encoder_core.lessons.attention
(row_outcome, drop_outcome), whose outcome names the options follow, in order."""

from ui.frame.predict import Option, Question

SAME_ROWS = Question(
    "attention",
    "rows",
    "You see the bidirectional grid. Now the causal mask is added: which query row comes out exactly the same?",
    (
        Option(
            "the first row ([CLS])",
            "The first token is the one the causal mask restricts most: it may look only at itself, so its row "
            "changes the most.",
        ),
        Option("the last row"),
        Option(
            "every row",
            "The causal mask removes every key after a query, so a row can only stay the same if its query has "
            "nothing after it.",
        ),
        Option(
            "no row",
            "The last token has no later token to hide: the mask takes nothing away from its row.",
        ),
    ),
    concept="attention_identical_row",
)

DROP = Question(
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
            "The causal mask hides every later token from earlier ones, so under it their vectors cannot move.",
        ),
        Option(
            "neither",
            "Without the mask every vector is built from every token, the dropped one included, so all of them move.",
        ),
    ),
    concept="attention_drop_last",
)
