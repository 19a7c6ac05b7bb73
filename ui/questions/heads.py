"""The heads lesson's predictions: what the student is asked, and the wrong idea behind each wrong answer."""

from __future__ import annotations

from collections.abc import Sequence

from encoder_core.model.head_patterns import HeadLabel
from ui.frame.predict import Option, Question


def weight_count(n_heads: int, model_name: str) -> Question:
    return Question(
        "heads",
        "weight-count",
        f"One attention layer of {model_name}, with {n_heads} heads, runs on your sentence. How many attention "
        "weights does it compute? (count the tokens in the charts above, [CLS] and [SEP] included)",
        concept="heads_weight_count",
        tolerance=0.1,
        too_high="One layer computes one weight per head, query and key, H × T × T: not multiplied by the layers "
        "or by the width d.",
        too_low="Every head computes its own T × T grid, one weight per query–key pair (not one per token), and T "
        "counts [CLS] and [SEP] too.",
    )


# Why a head that is not the answer is not the one looking back, by what it does instead ({head}, {mass}).
WRONG_HEAD = {
    "next token": "Attention runs both ways: {head} looks at the next token ({mass:.2f}), not the previous one.",
    "[CLS]": "Not every head tracks position: {head} parks its weight on [CLS] ({mass:.2f}).",
    "[SEP]": "Not every head tracks position: {head} parks its weight on [SEP] ({mass:.2f}).",
    "self": "Looking at itself is not looking back: {head} puts its weight on its own token ({mass:.2f}).",
    "previous token": "{head} looks back too ({mass:.2f}), but another head does so more.",
    "broad": "Not every head has a sharp pattern: {head} spreads its weight (its largest mass is {mass:.2f}).",
}


def head_name(layer: int, head: int) -> str:
    return f"layer {layer}, head {head}"


def previous_token(candidates: Sequence[HeadLabel]) -> Question:
    """Which of these heads (encoder_core.lessons.heads.previous_token_choice's candidates) looks back most."""
    options = []
    for lab in candidates:
        name = head_name(lab.layer, lab.head)
        said = WRONG_HEAD[lab.pattern].format(head=name, mass=lab.mass)
        options.append(Option(name, said[:1].upper() + said[1:]))
    return Question(
        "heads",
        "previous-token",
        "Which of these heads puts the most weight on the token just before each token?",
        tuple(options),
        concept="heads_pattern",
    )
