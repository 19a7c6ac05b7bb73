"""The masking lesson's predictions, and how a guess is scored (ui.frame.predict asks and reveals).

The answers come from encoder_core.lessons.masking: loss_outcome / matching_loss_sets for LOSS
(its options in the order of LOSS_SETS), hardest_choice for the largest loss, rank_guess for FILL.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

import streamlit as st

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
from ui.room.registry import CannotAsk, Run, lesson_questions, run_key, sentence_link, word_positions
from ui.views import masking as view

LESSON = "masking"

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
    LESSON,
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
    LESSON,
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
        LESSON,
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

register = lesson_questions(LESSON)

LOSS_STEP = 2  # "Which positions carry a loss" asks which positions the loss reads, then which carries the largest
FILL_STEP = 3  # "Fill in the blank"
ROOM_DRAW = {"rate": 0.15, "exact": True, "seed": 0}  # the lesson's own default draw


@st.cache_data(show_spinner=False, max_entries=16)
def _hardest_run(key: tuple, _run: Run):
    """The lesson's draw on the lecturer's sentence and the trained MLM's pass over it, once per sentence (key:
    run_key): the question, its answer and its chart all read it."""
    draw = core.draw_masks(_run.tokenizer, _run.ids, **ROOM_DRAW)
    forward = core.mlm_forward(_run.model, draw.result.inputs, draw.result.labels, tokenizer=_run.tokenizer)
    return draw, forward, core.hardest_choice(draw, forward)


def _hardest(run: Run):
    """The lesson's draw on the lecturer's sentence, the trained MLM's loss at each chosen position, and the choice."""
    draw, forward, choice = _hardest_run(run_key(run), run)
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


def _hardest_chart(run: Run) -> list:
    draw, forward, _ = _hardest(run)
    return [view.loss_chart(forward, draw.tokens, draw.input_tokens)]


# ---- which positions the loss reads, on a draw that tells the four rules apart ----


def _loss_draw(run: Run):
    """The lesson's draw at the lowest rate that gives a [MASK], a random word and a kept word on this sentence
    (the rate the lesson suggests for seeing every fate; seed 0, the exact count), asked only where exactly one
    of the four rules names the labelled positions. No model runs: the draw alone decides."""
    words = len(word_positions(run))
    rate = core.rate_showing_every_fate(words)
    if rate is None:
        raise CannotAsk(
            f"This sentence has {words} word pieces: too few for a draw with a [MASK], a random word and a kept "
            "word, which the question needs to tell its rules apart. Type a sentence of nine words or more."
        )
    draw = core.draw_masks(run.tokenizer, run.ids, rate=rate, exact=True, seed=ROOM_DRAW["seed"])
    if len(core.matching_loss_sets(draw)) != 1:
        raise CannotAsk(
            "On this sentence the draw that shows every fate chooses every word, so two of the rules name the same "
            "positions: type a longer sentence."
        )
    run.proof["rate"] = rate  # the lesson's link opens the same draw
    return draw


def _loss_question(run: Run) -> tuple[Prediction, int]:
    return LOSS, LOSS_SETS.index(core.loss_outcome(_loss_draw(run)))


def _loss_lead(run: Run) -> str:
    draw = _loss_draw(run)
    c = draw.counts
    return (
        f"The lesson's draw at a {draw.rate:.0%} rate, the lowest that gives every fate here: {c.chosen} of "
        f"{c.eligible} words chosen, {c.masked} became [MASK], {c.random} a random word, {c.kept} kept as it was. "
    )


register(
    "masking-loss",
    "Masked LM: which positions of the draw does the loss read?",
    ask=_loss_question,
    step=LOSS_STEP,
    charts=lambda run: [view.draw_chart(_loss_draw(run), labels=True)],
    asked_with=lambda run: [view.draw_chart(_loss_draw(run), labels=False)],  # the draw, its labels held back
    trained=True,
    lead=_loss_lead,
    link=lambda proof: {"mlm_sentence": proof["sentence"], "mlm_rate": proof.get("rate", ROOM_DRAW["rate"])},
)
register(
    "masking-hardest",
    "Masked LM: which chosen position carries the largest loss?",
    ask=_hardest_question,
    step=LOSS_STEP,
    charts=_hardest_chart,
    trained=True,
    lead=lambda run: "The lesson's draw: 15% of the words chosen, then 80/10/10. ",
    link=sentence_link("mlm_sentence"),
)


# ---- which word the model puts first in the blank ----

FILL_CHOICES = 4  # the model's first choice and three others
FILL_MARGIN = LOSS_MARGIN  # the first choice leads the second by this many nats (e^0.5: 1.65 times as likely)


@st.cache_data(show_spinner=False, max_entries=16)
def _fill_run(key: tuple, _run: Run):
    """The lesson's fill-in on the lecturer's sentence (its typed [MASK]s, else its last whole word hidden, as
    plan_fill decides), once per sentence (key: run_key)."""
    limit = _run.model.config.max_positions
    plan = core.plan_fill(_run.tokenizer, _run.proof["sentence"], 0, limit, _run.proof["sentence"])
    if plan.fallback == "example" or not plan.n_blanks:
        return plan, None
    return plan, core.fill_mask_view(_run.model, _run.tokenizer, plan.text, plan.position)


def _fill(run: Run):
    plan, filled = _fill_run(run_key(run), run)
    if filled is None or not filled.predictions:
        raise CannotAsk("This sentence has no [MASK] and no whole word to hide: type a sentence of a few words.")
    top = filled.predictions[0].top
    if len(top) < 2 or math.log(top[0][1] / top[1][1]) < FILL_MARGIN:
        raise CannotAsk(
            f"The model's first and second choices for the blank, “{top[0][0]}” and “{top[1][0]}”, are too close "
            "to call: try another sentence."
        )
    return plan, filled


def _fill_question(run: Run) -> tuple[Prediction, int]:
    """The model's first choice among its next ones and, where a word was hidden, that word: in alphabetical
    order, so the first choice's place gives nothing away."""
    plan, filled = _fill(run)
    first = filled.predictions[0]
    (best, p_best), vocab = first.top[0], run.tokenizer.vocab_size
    than = f"below “{best}” ({probability_text(p_best)})"
    why = {best: ""}
    if first.hidden_word is not None and first.hidden_word != best:
        why[first.hidden_word] = (
            f"The word that was there is not what the model must put first: it reads only the words around the blank, "
            f"and ranks “{first.hidden_word}” {first.hidden_rank:,} of {vocab:,} "
            f"({probability_text(first.hidden_probability)}), {than}."
        )
    for rank, (word, p) in enumerate(first.top[1:], start=2):
        if len(why) < FILL_CHOICES and word not in why:
            why[word] = (
                f"A word that fits is not the model's first choice: it ranks “{word}” {rank} of {vocab:,} "
                f"({probability_text(p)}), {than}."
            )
    words = sorted(why)
    asked = replace(
        FILL,
        prompt="Which word will the model put first in the first [MASK]?",
        options=tuple(Option(w, why[w]) for w in words),
        word=False,
    )
    return asked, words.index(best)


def _fill_chart(run: Run) -> list:
    _, filled = _fill(run)
    return [view.fill_chart(filled, filled.predictions[0])]


def _fill_lead(run: Run) -> str:
    plan, _ = _fill(run)
    hidden = f" (its last whole word, “{plan.hidden}”, hidden)" if plan.fallback == "last_word" else ""
    return f"The model reads “{plan.query}”{hidden}. "


register(
    "masking-fill",
    "Masked LM: which word does the model put first in the blank?",
    ask=_fill_question,
    step=FILL_STEP,
    charts=_fill_chart,
    trained=True,
    lead=_fill_lead,
    link=lambda proof: {"fill_sentence": proof["sentence"], "fill_model": "mlm"},
)
