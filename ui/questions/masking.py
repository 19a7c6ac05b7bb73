"""The masking lesson's predictions, and how a guess is scored (ui.frame.predict asks and reveals).

The answers come from encoder_core.lessons.masking: loss_outcome / matching_loss_sets for LOSS
(its options in the order of LOSS_SETS), hardest_choice for the largest loss, rank_guess for FILL.
"""

from __future__ import annotations

import re
from dataclasses import replace

from encoder_core.lessons import masking as core
from encoder_core.lessons.masking import (
    LOSS_MARGIN,
    LOSS_SETS,
    DrawPosition,
    GuessRank,
    HardestChoice,
    rank_guess,
)
from ui.frame.predict import Option, Prediction, Verdict, judge
from ui.frame.quiz_widget import escape_md
from ui.room.registry import CannotAsk, Run, register_room_question
from ui.views import masking as view

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
        "Only the chosen positions get a label: every word that was not chosen is labelled -100. It is not that a "
        "word the model can see is never scored: a kept word is read as it is and scored all the same. But a word "
        "that was not chosen is always the real one, so scoring it would mostly reward copying the input.",
    ),
}

LOSS = Prediction(
    "masking",
    "loss",
    "Which positions of this draw does the loss read?",
    tuple(LOSS_OPTIONS[code] for code in LOSS_SETS),
    concept="masking_label_of",
    idea="mlm_labels",
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


FILL = Prediction(
    "masking",
    "fill",
    "What word will the model put first in the first [MASK]? Type one word. The model's own first choice counts "
    "as right; any other word is not counted as a miss (a word that fits is not wrong because one model prefers "
    "another), and the reveal says where the model ranks it.",
    word=True,
    concept="masking_fill_rank",
    idea="fill_ranking",
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


def probability_text(p: float) -> str:
    return f"{p:.1%}" if p >= 0.001 else f"{p:.1e}"


FILL_NOTE = (
    "Not counted as a miss: a word that fits is not wrong because this model ranks it lower. The model ranks "
    "every entry of its vocabulary by what its training text made likely between these neighbours, on both "
    "sides of the blank."
)


def fill_verdict(g: GuessRank, first: tuple[str, float]) -> Verdict:
    """Score a typed guess by its place in the model's ranking (first: the model's first choice and its
    probability). Only the model's first choice is right, and no other word is counted as a miss: a small
    model preferring another word does not make the student's wrong."""
    guess = escape_md(g.guess)
    top = f"The model's first choice is “{escape_md(first[0])}” ({probability_text(first[1])})."
    if g.token is None or g.rank is None:
        said, idea = NO_RANK[g.problem or "unknown"]
        said = said.format(guess=guess, pieces=escape_md(" ".join(g.pieces)))
        return Verdict(False, f"{said} {top} Not counted as a miss.", idea, counted=False)
    p = probability_text(g.probability)
    where = f"“{guess}” is the model's choice {g.rank:,} of {g.vocab_size:,} (probability {p})"
    if g.rank == 1:
        return Verdict(True, f"Right: {where}.", "")
    return Verdict(False, f"{where}. {top} {FILL_NOTE}", "", counted=False)


def fill_score(tokenizer):
    """score(guess, fill_view) for FILL: the guess placed among every entry at the fill-in view's first blank."""
    return lambda guess, fill_view: fill_verdict(
        rank_guess(tokenizer, fill_view.first_probabilities, guess), fill_view.predictions[0].top[0]
    )


# ---- which chosen position carries the largest loss (HardestChoice from encoder_core) ----

# Why a student may take a position for the hardest when it is not, by what the model reads there.
HARDEST_IDEA = {
    "masked": "Hiding a word does not make it hard by itself: the words on both sides can pin it down.",
    "random": "A random word in its place is a misleading clue, yet the words around it can still point to the "
    "original.",
    "kept": "A kept word is in plain sight, and the model mostly trusts what it reads.",
}
READS = {"masked": "[MASK]", "random": "“{input}” in its place", "kept": "it unchanged"}


def position_label(p: DrawPosition) -> str:
    """An offered position as the student reads it: where, which word, and what the model receives there."""
    return escape_md(
        f"position {p.position}, “{p.token}” (the model reads {READS[p.fate]})".replace("{input}", p.input_token)
    )


def hardest_misconception(choice: HardestChoice, positions: list[DrawPosition], i: int) -> str:
    """The idea behind picking the i-th position offered, and its numbers beside the largest loss's."""
    p, best = positions[choice.positions[i]], positions[choice.positions[choice.answer]]
    return (
        f"{HARDEST_IDEA[p.fate]} At position {p.position} the model gives “{escape_md(p.token)}” probability "
        f"{probability_text(choice.probability(i))} (a loss of {choice.losses[i]:.2f} nats); at position "
        f"{best.position}, “{escape_md(best.token)}” gets only {probability_text(choice.probability(choice.answer))} "
        f"({choice.losses[choice.answer]:.2f} nats)."
    )


def hardest(choice: HardestChoice, positions: list[DrawPosition], model_name: str) -> Prediction:
    """Which of the draw's chosen positions carries the largest loss under the trained model?"""
    some = (
        f" ({len(choice.positions)} of the {choice.n_chosen} chosen are offered.)"
        if choice.n_chosen > len(choice.positions)
        else ""
    )
    return Prediction(
        "masking",
        "hardest",
        f"Under {model_name}, which of this draw's chosen positions carries the largest loss, −log p(original "
        f"word)? A position within {LOSS_MARGIN:g} nats of the largest counts as right too.{some}",
        tuple(
            Option(position_label(positions[t]), hardest_misconception(choice, positions, i))
            for i, t in enumerate(choice.positions)
        ),
        concept="masking_hardest_position",
        idea="position_loss",
    )


def hardest_score(q: Prediction, choice: HardestChoice):
    """score(guess, answer): the largest loss is right, and so is any position within LOSS_MARGIN of it."""

    def score(guess: int, answer: int) -> Verdict:
        if guess == answer or guess not in choice.right:
            return judge(q, guess, answer)
        return Verdict(
            True,
            f"Right: its loss, {choice.losses[guess]:.2f} nats, is within {LOSS_MARGIN:g} of the largest "
            f"({choice.losses[answer]:.2f}, {q.options[answer].label}): too close to call, so both count.",
            "",
        )

    return score


def hardest_text(choice: HardestChoice, positions: list[DrawPosition]) -> str:
    """The reveal's sentence: which offered position carries the largest loss, and which came within the margin."""
    best = positions[choice.positions[choice.answer]]
    text = (
        f"The largest loss of the positions offered: **position {best.position}**, “{escape_md(best.token)}”, "
        f"{choice.losses[choice.answer]:.2f} nats (the model gives the original word probability "
        f"{probability_text(choice.probability(choice.answer))})."
    )
    close = [i for i in choice.right if i != choice.answer]
    if close:
        near = ", ".join(f"position {choice.positions[i]} ({choice.losses[i]:.2f})" for i in close)
        text += f" Within {LOSS_MARGIN:g} nats of it, so counted right too: {near}."
    return text


def hardest_not_asked(choice: HardestChoice) -> str:
    """Why this draw asks no "largest loss" question (HardestChoice.asked is False)."""
    if choice.n_chosen < 2:
        return (
            f"This draw chose {choice.n_chosen} position{'' if choice.n_chosen == 1 else 's'}, so there is no "
            "largest loss to predict: raise the rate or draw again for that question."
        )
    return (
        f"Every chosen position's loss is within {LOSS_MARGIN:g} nats of the largest on this draw: too close to "
        "call, so there is no question on which is largest. Draw again for one."
    )


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

LOSS_STEP = 2  # "Which positions carry a loss" asks, after the loss question, which carries the largest
ROOM_DRAW = {"rate": 0.15, "exact": True, "seed": 0}  # the lesson's own default draw


def _hardest(run: Run):
    """The lesson's draw on the lecturer's sentence, the trained MLM's loss at each chosen position, and the choice."""
    draw = core.draw_masks(run.tokenizer, run.ids, **ROOM_DRAW)
    forward = core.mlm_forward(run.model, draw.result.inputs, draw.result.labels, tokenizer=run.tokenizer)
    choice = core.hardest_choice(draw, forward)
    if choice.n_chosen < 2:
        raise CannotAsk(
            f"15% of this sentence's words is {choice.n_chosen} position: there is no largest loss to predict. Type a "
            "sentence of ten words or more."
        )
    if len(choice.right) != 1:  # the lesson counts a loss within LOSS_MARGIN as right too; a room has one answer
        raise CannotAsk(
            f"Two chosen positions' losses lie within {LOSS_MARGIN:g} nats of each other on this draw: too close to "
            "call. Try another sentence."
        )
    return draw, forward, choice


_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>~$:])")  # what escape_md put a backslash before


def unescaped(text: str) -> str:
    """The page's Markdown-escaped text as plain text: the room escapes what it shows itself."""
    return _ESCAPED.sub(r"\1", text)


def _hardest_question(run: Run) -> tuple[Prediction, int]:
    draw, _, choice = _hardest(run)
    asked = hardest(choice, draw.positions, run.name)
    prompt = asked.prompt.replace(f" A position within {LOSS_MARGIN:g} nats of the largest counts as right too.", "")
    options = tuple(Option(unescaped(o.label), unescaped(o.misconception)) for o in asked.options)
    # asked only where no other position comes that close
    return replace(asked, prompt=prompt, options=options), choice.answer


register_room_question(
    "masking",
    "masking-hardest",
    "Masked LM: which chosen position carries the largest loss?",
    ask=_hardest_question,
    step=LOSS_STEP,
    charts=lambda run: [view.loss_chart(_hardest(run)[1], _hardest(run)[0].tokens, _hardest(run)[0].input_tokens)],
    trained=True,
    lead=lambda run: "The lesson's draw: 15% of the words chosen, then 80/10/10. ",
    link=lambda proof: {"mlm_sentence": proof["sentence"]},
)
