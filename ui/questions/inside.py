"""The "Looking inside" lesson's predictions: what the student is asked, and the wrong idea behind each
wrong answer."""

from __future__ import annotations

from encoder_core.lessons.inside import METHODS, HeadChoice
from ui.frame.predict import Option, Question
from ui.views.inside import md

# Why a head offered for the wrong reason is not the one that matters most, by that reason.
WRONG_HEAD = {
    "sharpest": "A sharp attention map is not an important one: this head puts the most weight on one token "
    "from the [MASK], yet knocking it out costs the answer only {effect:+.2f} in log-probability.",
    "last layer": "The last layer does not decide alone: knocking out this last-layer head changes the answer's "
    "log-probability by {effect:+.2f}.",
    "first layer": "A head near the input is not the one that matters just because every later layer builds on it: "
    "this one changes the log-probability by {effect:+.2f}.",
    "other": "This head changes the answer's log-probability by {effect:+.2f} when knocked out: less than another.",
}


def head_name(layer: int, head: int) -> str:
    return f"layer {layer}, head {head}"


def most_important_head(choice: HeadChoice, answer: str) -> Question:
    options = tuple(
        Option(head_name(*c), WRONG_HEAD.get(reason, WRONG_HEAD["other"]).format(effect=effect))
        for c, reason, effect in zip(choice.candidates, choice.reasons, choice.effects, strict=True)
    )
    return Question(
        "inside",
        "head",
        f"The model answers “{md(answer)}” at the [MASK]. Knock out one head (its output zeroed before W_O): "
        "which of these four heads, knocked out alone, lowers the log-probability of that answer most?",
        options,
        concept="inside_knockout_factor",
    )


# Why each explanation may fail to agree best, if it does not.
WRONG_METHOD = {
    "raw": "Attention weights say where a head looks, not what the value it fetches does to the answer: one layer, "
    "averaged over heads that may not matter, and often parked on [CLS] or [SEP].",
    "rollout": "Rollout spreads attention through every layer, and the residual's half keeps each token mostly on "
    "itself: it tends to favour [CLS] and the token's own position, and it ignores what the values carry.",
    "norm": "Scaling each weight by the size of what it fetches helps, but it is still one layer's view, and a large "
    "vector is not necessarily one that pushes towards the answer.",
    "grad_input": "A gradient is a local slope: the model is far from linear, so one slope at the input can "
    "misjudge what removing a token does.",
    "integrated": "Integrated gradients measure replacing a token's vector by the baseline, which is not the same "
    "intervention as hiding it from attention; on some sentences the two disagree.",
}


def best_explanation() -> Question:
    return Question(
        "inside",
        "explanation",
        "Which explanation will rank the tokens most like the knockouts do on your sentence "
        "(the highest Spearman correlation)?",
        tuple(Option(label, WRONG_METHOD[m]) for m, label in METHODS.items()),
        concept="inside_spearman",
    )
