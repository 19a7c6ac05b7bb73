"""The masking lesson's predictions, and how a guess is scored (ui.frame.predict asks and reveals).

The answers come from encoder_core.lessons.masking: loss_outcome / matching_loss_sets for LOSS
(its options in the order of LOSS_SETS), rank_guess for FILL.
"""

from __future__ import annotations

from encoder_core.lessons.masking import LOSS_SETS, GuessRank, rank_guess
from ui.frame.predict import Option, Question, Verdict, judge
from ui.frame.quiz_widget import escape_md

LOSS_OPTIONS = {
    "every": Option(
        "Every position, [CLS] and [SEP] too",
        "[CLS] and [SEP] are never chosen, so they are labelled -100 and the loss skips them, like every other "
        "position that was not chosen.",
    ),
    "chosen": Option(
        "The chosen ones: [MASK], random and kept",
        "The label, not what the input shows, decides: a chosen position carries its original id, whatever it became.",
    ),
    "masked": Option(
        "Only the positions that became [MASK]",
        "A chosen position that got a random word, or kept its own, is labelled with its original word too: the "
        "model cannot tell which positions are scored, so it has to keep every vector honest.",
    ),
    "words": Option(
        "Every word, but not [CLS] and [SEP]",
        "Only the chosen ~15% get a label; the other words are labelled -100, since scoring a word the model "
        "can see would teach it to copy.",
    ),
}

LOSS = Question(
    "masking",
    "loss",
    "Which positions of this draw does the loss read?",
    tuple(LOSS_OPTIONS[code] for code in LOSS_SETS),
    concept="masking_label_of",
)


def loss_verdict(guess: int, answer: int, matches: list[str]) -> Verdict:
    """Like judge, but a choice this draw cannot tell from the answer (matching_loss_sets) is right here."""
    if guess == answer or LOSS_SETS[guess] not in matches:
        return judge(LOSS, guess, answer)
    rule = LOSS_OPTIONS[LOSS_SETS[answer]].label
    return Verdict(
        True,
        f"Right on this draw: here those are exactly the positions with a label. The rule is “{rule}”, and "
        "a draw with a random or kept position tells the two apart (raise the rate, or draw again).",
        "",
    )


FILL = Question(
    "masking",
    "fill",
    "What word will the model put in the first [MASK]? Type one word: it counts as right if it is among the "
    "model's 5 most likely.",
    word=True,
    concept="masking_cannot_generate",
)

FILL_MISCONCEPTION = (
    "A word that fits need not be the model's favourite: it ranks every entry of its vocabulary by what its "
    "training text made likely between these neighbours, on both sides of the blank."
)
NO_RANK = {
    "empty": ("There is nothing to rank: type one word.", ""),
    "several": (
        "“{guess}” is not one token of the model's vocabulary: it reads it as {pieces}. One [MASK] holds exactly "
        "one token, so this guess has no rank.",
        "A blank is one vocabulary entry; a word the tokenizer cuts into pieces (or several words) would need "
        "as many blanks.",
    ),
    "unknown": (
        "“{guess}” is not in the model's vocabulary at all (it reads as [UNK]), so it has no rank.",
        "The model can only put an entry of its vocabulary in a blank.",
    ),
    "special": (
        "“{guess}” is a special token, not a word, so it is not scored as a guess.",
        "The blank stands for a word of the text; [CLS], [SEP], [PAD] and [MASK] mark the text's structure.",
    ),
}


def fill_verdict(g: GuessRank) -> Verdict:
    """Score a typed guess by its place in the model's ranking: right in the top g.top_k."""
    guess = escape_md(g.guess)
    if g.token is None or g.rank is None:
        said, idea = NO_RANK[g.problem or "unknown"]
        return Verdict(False, said.format(guess=guess, pieces=escape_md(" ".join(g.pieces))), idea)
    p = f"{g.probability:.1%}" if g.probability >= 0.001 else f"{g.probability:.1e}"
    where = f"“{guess}” is the model's choice {g.rank:,} of {g.vocab_size:,} (probability {p})"
    if g.in_top:
        return Verdict(True, f"Right: {where}.", "")
    return Verdict(False, f"Not quite: {where}; its top {g.top_k} are below.", FILL_MISCONCEPTION)


def fill_score(tokenizer):
    """score(guess, view) for FILL: the guess placed among every entry at the view's first blank."""
    return lambda guess, view: fill_verdict(rank_guess(tokenizer, view.first_probabilities, guess))
