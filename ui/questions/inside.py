"""The "Looking inside" lesson's predictions: what the student is asked, and the wrong idea behind each
wrong answer."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import streamlit as st

from encoder_core.lessons import inside as core
from encoder_core.lessons.inside import (
    EXPLANATION_MARGIN,
    KNOCKOUT_MARGIN,
    METHODS,
    HeadChoice,
    TokenChoice,
    best_methods,
)
from ui.frame.predict import Option, Prediction, Verdict, judge
from ui.room.registry import CannotAsk, Run, lesson_questions, middle_word, run_key
from ui.views import inside as view
from ui.views.inside import md

LESSON = "inside"

# Why a head offered for the wrong reason is not the one that matters most, by that reason; each sentence
# states the head's own knockout change beside the right one's (at least KNOCKOUT_MARGIN apart).
WRONG_HEAD = {
    "sharpest": "A sharp attention map is not an important one: this head gives {peak:.2f} of the [MASK]'s "
    "attention to one token (“{peak_token}”), yet knocking it out changes the answer's log-probability by "
    "{effect:+.2f}, against {best:+.2f} for {best_name}.",
    "last layer": "The last layer does not decide alone: knocking out this last-layer head changes the answer's "
    "log-probability by {effect:+.2f}, against {best:+.2f} for {best_name}.",
    "first layer": "Every later layer builds on the first, but that alone does not make a first-layer head "
    "important: knocking this one out changes the log-probability by {effect:+.2f}, against {best:+.2f} for "
    "{best_name}.",
    "runner-up": "Knocking this head out changes the answer's log-probability by {effect:+.2f}, at least {margin:g} "
    "above the {best:+.2f} of {best_name}.",
}


def head_name(layer: int, head: int) -> str:
    return f"layer {layer}, head {head}"


def most_important_head(choice: HeadChoice, answer: str, tokens: list[str] | None = None) -> Prediction:
    """tokens: the sentence's, to name where a sharp head looks (None: by its index)."""
    best = choice.candidates[choice.answer]
    options = []
    for c, reason, effect, (peak, at) in zip(
        choice.candidates, choice.reasons, choice.effects, choice.peaks, strict=True
    ):
        where = md(tokens[at]) if tokens else f"token {at}"
        idea = WRONG_HEAD.get(reason, WRONG_HEAD["runner-up"]).format(
            effect=effect, best=choice.effects[choice.answer], best_name=head_name(*best), peak=peak,
            peak_token=where, margin=KNOCKOUT_MARGIN,
        )  # fmt: skip
        options.append(Option(head_name(*c), "" if reason == "answer" else idea))
    return Prediction(
        LESSON,
        "head",
        f"The model answers “{md(answer)}” at the [MASK]. Knock out one head (its output zeroed before W_O): "
        f"which of these {len(options)} heads, knocked out alone, lowers the log-probability of that answer most? "
        f"(The right one lowers it at least {KNOCKOUT_MARGIN:g} more than any other offered.)",
        tuple(options),
        concept="inside_knockout_importance",
        idea="knockout_importance",
    )


# Why a token offered for the wrong reason is not the one the answer needs most, with its own knockout change
# beside the right one's.
WRONG_TOKEN = {
    "attended": "Where attention looks is not what the answer needs: the last layer's heads give “{token}” "
    "{attention:.2f} of the [MASK]'s attention on average, yet hiding it changes the answer's log-probability by "
    "{change:+.2f}, against {best:+.2f} for “{best_token}”.",
    "neighbour": "Sitting next to the blank does not make a token the one the answer needs: hiding “{token}” "
    "changes the answer's log-probability by {change:+.2f}, against {best:+.2f} for “{best_token}”.",
    "special": "“{token}” holds no word of the sentence, though heads often park their attention on it: hiding it "
    "changes the answer's log-probability by {change:+.2f}, against {best:+.2f} for “{best_token}”.",
    "runner-up": "Hiding “{token}” changes the answer's log-probability by {change:+.2f}, at least {margin:g} above "
    "the {best:+.2f} of “{best_token}”.",
}


def token_name(tokens: list[str], i: int) -> str:
    return f"“{md(tokens[i])}” (token {i})"


def most_important_token(choice: TokenChoice, tokens: list[str], answer: str) -> Prediction:
    """Which of the tokens offered, hidden from every query, lowers the answer's log-probability most?"""
    best = choice.candidates[choice.answer]
    options = []
    for i, reason, change, attention in zip(
        choice.candidates, choice.reasons, choice.changes, choice.attention, strict=True
    ):
        idea = WRONG_TOKEN.get(reason, WRONG_TOKEN["runner-up"]).format(
            token=md(tokens[i]), attention=attention, change=change, best=choice.changes[choice.answer],
            best_token=md(tokens[best]), margin=KNOCKOUT_MARGIN,
        )  # fmt: skip
        options.append(Option(token_name(tokens, i), "" if reason == "answer" else idea))
    return Prediction(
        LESSON,
        "token",
        f"The model answers “{md(answer)}” at the [MASK]. Hide one token from every query, in every layer: which of "
        f"these {len(options)} tokens, hidden alone, lowers the log-probability of that answer most? (The right one "
        f"lowers it at least {KNOCKOUT_MARGIN:g} more than any other offered.)",
        tuple(options),
        concept="inside_knockout_importance",
        idea="knockout_importance",
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


def best_explanation() -> Prediction:
    return Prediction(
        LESSON,
        "explanation",
        "Which explanation will rank the tokens most like the knockouts do on your sentence (the highest Spearman "
        f"correlation)? One within {EXPLANATION_MARGIN:g} of the highest counts as right too.",
        tuple(Option(label, WRONG_METHOD[m]) for m, label in METHODS.items()),
        concept="inside_spearman",
        idea="rank_agreement",
    )


def explanation_score(scores: dict[str, float]):
    """score(guess, answer): the best method is right, and so is any within EXPLANATION_MARGIN of it."""
    q, close = best_explanation(), best_methods(scores)
    names = list(METHODS)

    def score(guess: int, answer: int) -> Verdict:
        if guess == answer or names[guess] not in close:
            return judge(q, guess, answer)
        return Verdict(
            True,
            f"Right: its ρ, {scores[names[guess]]:+.2f}, is within {EXPLANATION_MARGIN:g} of the highest "
            f"({scores[names[answer]]:+.2f}, {METHODS[names[answer]]}): too close to call, so both count.",
            "",
        )

    return score


# ---------------------------------------------------------------- in the class room (ui/room/registry.py)

register = lesson_questions(LESSON, "inside_sentence")

HEADS_STEP = 0  # "Knock it out" opens the lesson


@st.cache_data(show_spinner=False, max_entries=16)
def _knockouts_run(key: tuple, _run: Run):
    """(cloze, knockouts, every layer's attention) as the lesson computes them: the sentence's first [MASK], or
    its last whole word hidden when none was typed. Once per sentence (key: run_key): the head, token and
    explanation questions, their leads and their charts all read it."""
    cloze = core.prepare_cloze(_run.tokenizer, _run.proof["sentence"])
    return cloze, core.knockouts(_run.model, _run.tokenizer, cloze), core.attention_maps(_run.model, cloze)


def _head_knockouts(run: Run):
    """(cloze, knockouts, the four heads offered) as the lesson computes them."""
    cloze, knock, attentions = _knockouts_run(run_key(run), run)
    return cloze, knock, core.head_choice(knock, attentions, cloze.position)


def _head_question(run: Run) -> tuple[Prediction, int]:
    """The lesson's own question, asked only where one head stands apart by the lesson's margin."""
    cloze, knock, choice = _head_knockouts(run)
    if not choice.asked:
        raise CannotAsk("On this sentence no head's knockout stands apart from the others': try another sentence.")
    return most_important_head(choice, knock.answer, cloze.tokens), choice.answer


def _head_lead(run: Run) -> str:
    cloze, _, _ = _knockouts_run(run_key(run), run)
    return f"The model reads “{cloze.text}” and fills in the [MASK] (token {cloze.position}). "


register(
    "inside-head",
    "Looking inside: which head, knocked out, costs the answer most?",
    ask=_head_question,
    step=HEADS_STEP,
    charts=lambda run: [view.head_knockout_chart(_knockouts_run(run_key(run), run)[1])],
    trained=True,
    lead=_head_lead,
    position=middle_word,
)


TOKENS_STEP = HEADS_STEP  # "Knock it out" asks the token question first, then the head question
_MD_ESCAPED = re.compile(r"\\([\\`*_\[\]<>#|~$])")  # what md() put a backslash before


def plain(text: str) -> str:
    """md()'s text as plain text, its HTML entities undone too: the room escapes what it shows itself."""
    return html.unescape(_MD_ESCAPED.sub(r"\1", text))


def _token_knockouts(run: Run):
    """(cloze, knockouts, the tokens offered) as the lesson computes them, on the lab's trained MLM."""
    cloze, knock, attentions = _knockouts_run(run_key(run), run)
    return cloze, knock, core.token_choice(knock, attentions, cloze)


def _token_question(run: Run) -> tuple[Prediction, int]:
    """The lesson's own question, asked only where one token's knockout stands apart by the lesson's margin."""
    cloze, knock, choice = _token_knockouts(run)
    if not choice.asked:
        raise CannotAsk("On this sentence no token's knockout stands apart from the others': try another sentence.")
    asked = most_important_token(choice, cloze.tokens, knock.answer)
    options = tuple(Option(plain(o.label), plain(o.misconception)) for o in asked.options)
    return replace(asked, prompt=plain(asked.prompt), options=options), choice.answer


def _token_chart(run: Run) -> list:
    cloze, knock, _ = _knockouts_run(run_key(run), run)
    return [view.token_knockout_chart(knock, cloze)]


register(
    "inside-token",
    "Looking inside: which token, hidden, costs the answer most?",
    ask=_token_question,
    step=TOKENS_STEP,
    charts=_token_chart,
    trained=True,
    lead=_head_lead,
)


SCORES_STEP = 2  # "Score them"
ROOM_BASELINE, ROOM_STEPS = core.BASELINES[0], core.DEFAULT_STEPS  # integrated gradients, as the lesson's defaults


@st.cache_data(show_spinner=False, max_entries=16)
def _explanations_run(key: tuple, _run: Run) -> dict[str, float]:
    """Each explanation's Spearman ρ with the token knockouts, as the lesson scores them (integrated gradients
    from the lesson's default baseline and steps), once per sentence (key: run_key)."""
    cloze, knock, _ = _knockouts_run(run_key(_run), _run)
    expl = core.explanations(_run.model, _run.tokenizer, cloze, knock.answer_id, ROOM_BASELINE, ROOM_STEPS)
    return core.agreement(expl, knock, cloze)


def _scores(run: Run) -> dict[str, float]:
    """The scores, asked only where one explanation alone comes within the lesson's margin of the highest."""
    scores = _explanations_run(run_key(run), run)
    if len(best_methods(scores)) != 1:  # the lesson counts a ρ within EXPLANATION_MARGIN as right too
        raise CannotAsk(
            f"On this sentence more than one explanation comes within {EXPLANATION_MARGIN:g} of the highest "
            "Spearman ρ (or none is defined): too close to call. Try another sentence."
        )
    return scores


def _explanation_question(run: Run) -> tuple[Prediction, int]:
    asked = best_explanation()
    prompt = asked.prompt.replace(f" One within {EXPLANATION_MARGIN:g} of the highest counts as right too.", "")
    return replace(asked, prompt=prompt), list(METHODS).index(core.best_method(_scores(run)))


def _explanation_lead(run: Run) -> str:
    return (
        f"{_head_lead(run)}Each token is ranked by the knockouts (how much hiding it costs the answer) and by five "
        f"explanations (integrated gradients from {ROOM_BASELINE}, {ROOM_STEPS} steps). "
    )


register(
    "inside-explanation",
    "Looking inside: which explanation ranks the tokens most like the knockouts?",
    ask=_explanation_question,
    step=SCORES_STEP,
    charts=lambda run: [view.sentence_agreement_chart(_scores(run))],
    trained=True,
    lead=_explanation_lead,
)
