"""Where a room's questions come from, and the chart that proves each answer at the reveal.

- the quiz engine: question i of the room's quiz number, offered as a choice (ui/room/quiz.py);
- a lesson's prediction, the same question the lesson asks ("predict, then see"), answered here by the
  same encoder_core function on the lecturer's sentence and model, its proof the lesson's own chart. Each
  lesson registers its own (ui/room/registry.py): this file names no lesson;
- the lecturer's typed question (no chart: the lecturer is the proof).

The right option is computed when the round opens and stored with it; the proof is recomputed at the
reveal from the inputs stored in question.proof, so every app process draws the same chart.
"""

from __future__ import annotations

import pandas as pd

from classroom.questions import RoomQuestion
from encoder_core.quiz import question_for
from ui.models import lesson_model, small_model, trained_mlm, word_tokenizer
from ui.views import room as view
from ui.views.figures import Chart

from .quiz import from_quiz, quiz_question
from .registry import CannotAsk, Run, predictions

MAX_QUIZ_LOOKAHEAD = 30  # questions skipped at most to find one a room can vote on
DEFAULT_SENTENCE = "the cat sat on the mat"


def encode(proof: dict) -> Run:
    """The model the prediction runs on (the trained MLM, the block lesson's, or the sidebar's) and the sentence."""
    p = predictions()[proof["key"]]
    if p.trained:
        trained, error, _ = trained_mlm()
        if trained is None:
            raise CannotAsk(f"This question needs the lab's trained MLM, which could not be loaded. {error}")
        model, name, tokenizer = trained.model, "the lab's trained MLM", trained.tokenizer
        limit = trained.model.bert.config.max_positions
    elif p.block:
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
    p = predictions()[key]
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
    if p.position is not None:
        proof["position"] = p.position(run)  # run.proof is this dict: the question and its answer read it
    question, answer = p.ask(run)
    return RoomQuestion(
        f"On “{sentence}”, with {run.name}: {p.lead(run)}{question.prompt}",
        tuple(o.label for o in question.options),
        answer,
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
    lessons = predictions()
    if kind == "lesson" and question.proof.get("key") in lessons:
        try:
            return lessons[question.proof["key"]].charts(encode(dict(question.proof)))
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
    lessons = predictions()
    if kind == "lesson" and question.proof.get("key") in lessons:
        p = lessons[question.proof["key"]]
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
    p = predictions().get(str(question.proof.get("key", "")))
    return p.step if p is not None else 0


def lesson_link(question: RoomQuestion) -> tuple[str, dict[str, str]] | None:
    """The lesson page and the link parameters that open the step teaching this question, on the round's own
    sentence, model and seed (None for a typed question). The lesson reads them as it reads any link
    (ui.frame.state.read_url), so a value it cannot use opens its nearest valid one with a notice."""
    if not question.lesson:
        return None
    query: dict[str, str] = {"step": str(reteach_step(question))}
    proof = question.proof
    p = predictions().get(str(proof.get("key", "")))
    if proof.get("kind") == "lesson" and p is not None:
        if p.trained:
            query["model"] = "mlm"
        elif not p.block and proof.get("model"):
            query["model"] = str(proof["model"])
        if "seed" in proof:
            query["seed"] = str(int(proof["seed"]))
        query.update({k: str(v) for k, v in p.link_params(proof).items()})
    if query.get("model") == "small":  # the default: links leave defaults out
        del query["model"]
    if query.get("seed") == "0":
        del query["seed"]
    if query["step"] == "0":
        del query["step"]
    return f"pages/{question.lesson}.py", query
