"""Where a room's questions come from, and the chart that proves each answer at the reveal.

- the quiz engine: question i of the room's quiz number, offered as a choice (ui/room/quiz.py);
- a lesson's prediction, the same question the lesson asks ("predict, then see"), answered here by the
  same encoder_core function on the lecturer's sentence and model, its proof the lesson's own chart;
- the lecturer's typed question (no chart: the lecturer is the proof).

The right option is computed when the round opens and stored with it; the proof is recomputed at the
reveal from the inputs stored in question.proof, so every app process draws the same chart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from classroom.questions import RoomQuestion
from encoder_core.lessons import attention as core
from encoder_core.lessons import block as block_core
from encoder_core.lessons import inside as inside_core
from encoder_core.lessons import padding as padding_core
from encoder_core.lessons import tradeoffs as tradeoffs_core
from encoder_core.quiz import question_for
from ui.frame.predict import Question as Prediction
from ui.models import lesson_model, small_model, trained_mlm, word_tokenizer
from ui.questions import attention as asked
from ui.questions import block as block_asked
from ui.questions import inside as inside_asked
from ui.questions import padding as padding_asked
from ui.questions import tradeoffs as tradeoffs_asked
from ui.views import attention as attention_figs
from ui.views import block as block_figs
from ui.views import inside as inside_figs
from ui.views import padding as padding_figs
from ui.views import room as view
from ui.views import tradeoffs as tradeoffs_figs
from ui.views.figures import Chart

from .quiz import from_quiz, quiz_question

MAX_QUIZ_LOOKAHEAD = 30  # questions skipped at most to find one a room can vote on
TRADEOFFS_MISMATCH_STEP = 4  # "The [MASK] mismatch" is the trade-offs lesson's fifth section
PADDING_LEAK_STEP = 2  # "The pad-leak gap" is the padding lesson's third section
BLOCK_STAGE_STEP = 2  # "Inside the block, one stage at a time" is the block lesson's third section
INSIDE_HEADS_STEP = 0  # "Knock it out" opens the Looking inside lesson


@dataclass(frozen=True)
class Run:
    """What a prediction is answered on: a model, its tokenizer, the encoded sentence and the proof's inputs."""

    model: object
    name: str  # how a sentence names the model
    tokenizer: object
    ids: list[int]
    tokens: list[str]
    proof: dict


@dataclass(frozen=True)
class LessonPrediction:
    key: str
    title: str  # as the lecturer's picker shows it
    ask: Callable[[Run], Prediction]  # the lesson's question (some name a word of the sentence)
    step: int  # the lesson's section that teaches it (its link's step, from 0)
    answer: Callable[[Run], int]  # the right option, from the encoder_core function the lesson uses
    charts: Callable[[Run], list[Chart]]  # the lesson's chart(s) of the answer
    asked_with: Callable[[Run], list[Chart]] | None = None  # shown with the question (never the answer)
    trained: bool = False  # runs on the lab's trained MLM, whatever the sidebar's model
    block: bool = False  # runs on the block lesson's own seeded small post-norm model, whatever the sidebar's
    lead: Callable[[Run], str] = lambda run: ""  # what the lesson's page would show around the question


class CannotAsk(ValueError):
    """A prediction that this sentence or this machine cannot answer; the message says why."""


def _comparison(run: Run):
    return core.compare_masks(run.model, run.ids, run.proof["layer"], run.proof["head"])


def _mismatch(run: Run):
    return tradeoffs_core.mask_mismatch(run.model, run.tokenizer, run.ids, run.proof["position"], 0)


def _leak(run: Run):
    """The sentence alone, then with 1 up to LEAK_MIN_PADS [PAD]s appended and no mask (the lesson's curve)."""
    room = run.model.config.max_positions - padding_core.LEAK_MIN_PADS  # the pads must fit too
    batch = run.tokenizer.pad([run.tokenizer.encode(run.proof["sentence"], max_length=room, truncate=True)])
    return padding_core.pad_leak(run.model, batch, 0, min_pads=padding_core.LEAK_MIN_PADS)


def _ffn_hidden(run: Run):
    """The block lesson's walk through layer 0 on this sentence: (tokens, d, d_ff, the FFN's hidden layer u)."""
    enc = run.tokenizer.encode(run.proof["sentence"], max_length=run.model.config.max_positions, truncate=True)
    walk = block_core.walk_block(run.model, enc.ids, enc.segments, 0)
    return walk, walk.trace["ffn_hidden"]


def _ffn_question(run: Run) -> Prediction:
    walk, _ = _ffn_hidden(run)
    return block_asked.ffn_shape(len(run.tokens), walk.d_model, walk.d_ff)


def _ffn_answer(run: Run) -> int:
    walk, hidden = _ffn_hidden(run)
    return block_core.shape_choice(hidden.shape, len(run.tokens), walk.d_model, walk.d_ff)


def _ffn_chart(run: Run) -> Chart:
    walk, hidden = _ffn_hidden(run)
    return block_figs.stage_chart(walk, "ffn_hidden", run.tokens, block_core.summarize(hidden))


def _head_knockouts(run: Run):
    """(cloze, knockouts, the four heads offered) as the Looking inside lesson computes them: the sentence's
    first [MASK], or its last whole word hidden when none was typed."""
    cloze = inside_core.prepare_cloze(run.tokenizer, run.proof["sentence"])
    knock = inside_core.knockouts(run.model, run.tokenizer, cloze)
    attentions = inside_core.attention_maps(run.model, cloze)
    return cloze, knock, inside_core.head_choice(knock, attentions, cloze.position)


def _inside_head_question(run: Run):
    """The lesson's own question, asked only where one head stands apart by the lesson's margin."""
    cloze, knock, choice = _head_knockouts(run)
    if not choice.asked:
        raise CannotAsk("On this sentence no head's knockout stands apart from the others': try another sentence.")
    return inside_asked.most_important_head(choice, knock.answer, cloze.tokens)


def _rows_question(run: Run):
    """The lesson's own question, asked only where its answer stands clear (core.row_facts(...).askable)."""
    facts = core.row_facts(_comparison(run))
    if not facts.askable:
        raise CannotAsk("On this head the causal mask leaves more than the last row alone: try another sentence.")
    return asked.same_rows(facts, run.tokens)


def _head_lead(run: Run) -> str:
    cloze, _, _ = _head_knockouts(run)
    return f"The model reads “{cloze.text}” and fills in the [MASK] (token {cloze.position}). "


def _mismatch_question(run: Run) -> Prediction:
    return tradeoffs_asked.mismatch_question(run.proof["position"], run.tokens[run.proof["position"]])


PREDICTIONS = {
    p.key: p
    for p in (
        LessonPrediction(
            "attention-rows",
            "Attention: which row does the causal mask leave alone?",
            _rows_question,
            0,
            lambda run: core.ROW_OUTCOMES.index(core.row_outcome(_comparison(run))),
            lambda run: list(attention_figs.mask_pair_charts(_comparison(run), run.tokens)),
            # the lesson's worked half: the bidirectional grid alone, which the question asks about
            lambda run: list(attention_figs.mask_pair_charts(_comparison(run), run.tokens))[:1],
            lead=lambda run: f"Layer {run.proof['layer']}, head {run.proof['head']}, drawn on the screen. ",
        ),
        LessonPrediction(
            "attention-drop",
            "Attention: drop the last word; whose vectors move?",
            lambda run: asked.drop(core.drop_token(run.model, run.ids, run.proof["position"])),
            1,
            lambda run: core.DROP_OUTCOMES.index(
                core.drop_outcome(core.drop_token(run.model, run.ids, run.proof["position"]))
            ),
            lambda run: [
                attention_figs.drop_last_chart(core.drop_token(run.model, run.ids, run.proof["position"]), run.tokens)
            ],
            lead=lambda run: (
                f"The token dropped is the last word piece, “{run.tokens[run.proof['position']]}” "
                f"(token {run.proof['position']}). "
            ),
        ),
        LessonPrediction(
            "padding-leak",
            "Padding: mask off, pads appended; how do the real outputs move?",
            lambda run: padding_asked.leak_trend(padding_core.LEAK_MIN_PADS),
            PADDING_LEAK_STEP,
            lambda run: padding_core.LEAK_TRENDS.index(padding_core.leak_trend(_leak(run))),
            lambda run: [padding_figs.leak_curve_chart(_leak(run), mask_on=False)],
        ),
        LessonPrediction(
            "block-ffn-shape",
            "The block: what shape is the FFN's hidden layer?",
            _ffn_question,
            BLOCK_STAGE_STEP,
            _ffn_answer,
            lambda run: [_ffn_chart(run)],
            block=True,
            lead=lambda run: "Layer 0 of the block lesson's small model. ",
        ),
        LessonPrediction(
            "inside-head",
            "Looking inside: which head, knocked out, costs the answer most?",
            _inside_head_question,
            INSIDE_HEADS_STEP,
            lambda run: _head_knockouts(run)[2].answer,
            lambda run: [inside_figs.head_knockout_chart(_head_knockouts(run)[1])],
            trained=True,
            lead=_head_lead,
        ),
        LessonPrediction(
            "tradeoffs-mismatch",
            "Trade-offs: [MASK], a random word or the word itself: under which is it likeliest?",
            _mismatch_question,
            TRADEOFFS_MISMATCH_STEP,
            lambda run: tradeoffs_core.CASES.index(tradeoffs_core.likeliest_case(_mismatch(run))),
            lambda run: [tradeoffs_figs.mismatch_chart(_mismatch(run))],
            trained=True,
        ),
    )
}
DEFAULT_SENTENCE = "the cat sat on the mat"


def encode(proof: dict) -> Run:
    if PREDICTIONS[proof["key"]].trained:
        trained, error = trained_mlm()
        if trained is None:
            raise CannotAsk(f"This question needs the lab's trained MLM, which could not be loaded. {error}")
        model, name, tokenizer = trained.model, "the lab's trained MLM", trained.tokenizer
        limit = trained.model.bert.config.max_positions
    elif PREDICTIONS[proof["key"]].block:
        model, tokenizer = small_model(proof["seed"]), word_tokenizer()
        name, limit = f"the block lesson's small post-norm model (seed {proof['seed']})", model.config.max_positions
    else:
        chosen = lesson_model(proof["model"], proof["seed"])
        model, name, tokenizer = chosen.encoder, chosen.name, chosen.tokenizer
        limit = chosen.encoder.config.max_positions
        proof["model"] = chosen.choice  # the model that really ran (the small one if another could not load)
    enc = tokenizer.encode(proof["sentence"], max_length=limit, truncate=True)
    return Run(model, name, tokenizer, list(enc.ids), list(enc.tokens), proof)


def from_prediction(key: str, sentence: str, model: str, seed: int) -> RoomQuestion:
    """A lesson's prediction as a room question, answered by the model on this sentence (CannotAsk if it cannot)."""
    p = PREDICTIONS[key]
    proof = {
        "kind": "lesson",
        "key": key,
        "sentence": sentence,
        "model": model,
        "seed": int(seed),
        "layer": 0,
        "head": 0,
    }
    run = encode(proof)
    if p.trained:
        words = tradeoffs_core.eligible_positions(run.tokenizer, run.ids)
        if not words:
            raise CannotAsk("The sentence has no word the model could be asked about: type a few words.")
        proof["position"] = words[len(words) // 2]  # a word in the middle has context on both sides
        if key == "tradeoffs-mismatch":  # the lesson's rule: only a word whose likeliest input wins clearly
            clear = tradeoffs_core.clear_position(_mismatch(run), proof["position"])
            if clear is None:
                raise CannotAsk("On this sentence no word's likeliest input wins clearly: try another sentence.")
            proof["position"] = clear
    else:
        proof["position"] = core.last_word_position(run.tokens)
    question = p.ask(run)
    return RoomQuestion(
        f"On “{sentence}”, with {run.name}: {p.lead(run)}{question.prompt}",
        tuple(o.label for o in question.options),
        p.answer(run),
        "lesson",
        lesson=question.lesson,
        concept=question.concept,
        proof=proof,
        why_wrong=tuple(o.misconception for o in question.options),
    )


def quiz_round_question(quiz_seed: int, start: int) -> tuple[int, RoomQuestion] | None:
    """The first question from index `start` of the room's quiz that a room can vote on, and its index."""
    for index in range(start, start + MAX_QUIZ_LOOKAHEAD):
        q = from_quiz(question_for(None, quiz_seed, index))
        if q is not None:
            return index, q
    return None


def proof_charts(question: RoomQuestion) -> list[Chart]:
    """The chart(s) that prove the answer: the lesson's own, or the quiz question's grid; none for typed."""
    kind = question.proof.get("kind")
    if kind == "lesson" and question.proof.get("key") in PREDICTIONS:
        try:
            return PREDICTIONS[question.proof["key"]].charts(encode(dict(question.proof)))
        except CannotAsk:
            return []
    if kind == "quiz":
        q = quiz_question(str(question.proof.get("id", "")))
        chart = view.quiz_proof_chart(q) if q is not None else None
        return [chart] if chart is not None else []
    return []


def asked_with(question: RoomQuestion) -> tuple[list[Chart], pd.DataFrame | None]:
    """What the question itself shows (never its answer): a prediction's worked half, a quiz question's
    grid or table when the question asks the room to read it."""
    kind = question.proof.get("kind")
    if kind == "lesson" and question.proof.get("key") in PREDICTIONS:
        p = PREDICTIONS[question.proof["key"]]
        if p.asked_with is None:
            return [], None
        try:
            return p.asked_with(encode(dict(question.proof))), None
        except CannotAsk:
            return [], None
    if kind == "quiz":
        q = quiz_question(str(question.proof.get("id", "")))
        if q is None:
            return [], None
        charts = [view.quiz_proof_chart(q)] if q.figure is not None and q.figure.in_prompt else []
        table = pd.DataFrame(list(q.table[1]), columns=list(q.table[0])) if q.table is not None else None
        return charts, table
    return [], None


def reteach_step(question: RoomQuestion) -> int:
    """The lesson step to go back to: a prediction's own section, else the lesson's first."""
    p = PREDICTIONS.get(str(question.proof.get("key", "")))
    return p.step if p is not None else 0
