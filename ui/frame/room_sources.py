"""Where a room's questions come from, and the chart that proves each answer at the reveal.

- the quiz engine: question i of the room's quiz number, offered as a choice (classroom.questions);
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

from classroom.questions import RoomQuestion, from_quiz, quiz_question
from encoder_core.lessons import attention as core
from encoder_core.quiz import question_for
from ui.frame.predict import Question as Prediction
from ui.models import lesson_model
from ui.questions import attention as asked
from ui.views import attention as attention_figs
from ui.views import room as view
from ui.views.figures import Chart

MAX_QUIZ_LOOKAHEAD = 30  # questions skipped at most to find one a room can vote on


@dataclass(frozen=True)
class LessonPrediction:
    key: str
    title: str  # as the lecturer's picker shows it
    prediction: Prediction
    step: int  # the lesson's section that teaches it (its link's step, from 0)
    answer: Callable[[object, list[int], dict], int]  # (model, ids, proof) -> the right option
    charts: Callable[[object, list[int], list[str], dict], list[Chart]]  # the lesson's chart(s) of the answer
    asked_with: Callable[[object, list[int], list[str], dict], list[Chart]] | None = None  # shown with the question


def _rows_answer(model, ids, proof) -> int:
    return core.ROW_OUTCOMES.index(core.row_outcome(core.compare_masks(model, ids, proof["layer"], proof["head"])))


def _rows_charts(model, ids, tokens, proof) -> list[Chart]:
    return list(attention_figs.mask_pair_charts(core.compare_masks(model, ids, proof["layer"], proof["head"]), tokens))


def _rows_asked_with(model, ids, tokens, proof) -> list[Chart]:
    """The lesson's worked half: the bidirectional grid alone, which the question asks about."""
    return _rows_charts(model, ids, tokens, proof)[:1]


def _drop_answer(model, ids, proof) -> int:
    return core.DROP_OUTCOMES.index(core.drop_outcome(core.drop_token(model, ids, proof["position"])))


def _drop_charts(model, ids, tokens, proof) -> list[Chart]:
    return [attention_figs.drop_last_chart(core.drop_token(model, ids, proof["position"]), tokens)]


PREDICTIONS = {
    p.key: p
    for p in (
        LessonPrediction(
            "attention-rows",
            "Attention: which row does the causal mask leave alone?",
            asked.SAME_ROWS,
            0,
            _rows_answer,
            _rows_charts,
            _rows_asked_with,
        ),
        LessonPrediction(
            "attention-drop",
            "Attention: drop the last word; whose vectors move?",
            asked.DROP,
            1,
            _drop_answer,
            _drop_charts,
        ),
    )
}
DEFAULT_SENTENCE = "the cat sat on the mat"


def encode(proof: dict):
    chosen = lesson_model(proof["model"], proof["seed"])
    enc = chosen.tokenizer.encode(proof["sentence"], max_length=chosen.encoder.config.max_positions, truncate=True)
    return chosen, enc


def from_prediction(key: str, sentence: str, model: str, seed: int) -> RoomQuestion:
    """A lesson's prediction as a room question, answered by the model on this sentence."""
    p = PREDICTIONS[key]
    proof = {"kind": "lesson", "key": key, "sentence": sentence, "model": model, "seed": int(seed)}
    chosen, enc = encode(proof)
    proof["model"] = chosen.choice  # the model that really ran (the small one if another could not load)
    proof |= {"layer": 0, "head": 0, "position": core.last_word_position(enc.tokens)}
    right = p.answer(chosen.encoder, enc.ids, proof)
    options = tuple(o.label for o in p.prediction.options)
    prompt = f"On “{sentence}”, with {chosen.name}: {p.prediction.prompt}"
    return RoomQuestion(
        prompt,
        options,
        right,
        "lesson",
        lesson=p.prediction.lesson,
        concept=p.prediction.concept,
        proof=proof,
        why_wrong=tuple(o.misconception for o in p.prediction.options),
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
        chosen, enc = encode(question.proof)
        return PREDICTIONS[question.proof["key"]].charts(chosen.encoder, enc.ids, enc.tokens, question.proof)
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
        chosen, enc = encode(question.proof)
        return p.asked_with(chosen.encoder, enc.ids, enc.tokens, question.proof), None
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
