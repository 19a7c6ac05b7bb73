"""The lessons' questions a class room can vote on, each registered by its own lesson.

A lesson's prediction module, ui/questions/<lesson>.py (the questions its page asks), calls
register_room_question for each prediction a lecturer may put to a room: how to ask it on the lecturer's
sentence, with its right option from the same encoder_core function the lesson uses (one computation gives
both), and the lesson's chart that proves it at the reveal. predictions() imports ui.questions.<id> for each
id of the one lesson registry (encoder_core.lessons.LESSONS), so no file of the room names a lesson, and a
new lesson's room questions appear once its module registers them.

ui/room/sources.py runs them: it picks the model, encodes the sentence and stores the round's question.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from encoder_core.lessons import LESSON_IDS

if TYPE_CHECKING:
    from ui.frame.predict import Prediction
    from ui.views.figures import Chart

QUESTIONS_PACKAGE = "ui.questions"  # ui.questions.<lesson id>: where a lesson registers its room questions


@dataclass(frozen=True)
class Run:
    """What a prediction is answered on: a model, its tokenizer, the encoded sentence and the proof's inputs."""

    model: object
    name: str  # how a sentence names the model
    tokenizer: object
    ids: list[int]
    tokens: list[str]
    proof: dict


class CannotAsk(ValueError):
    """A prediction that this sentence or this machine cannot answer; the message says why."""


@dataclass(frozen=True)
class LessonPrediction:
    lesson: str  # the lesson's id (encoder_core.lessons.LESSON_IDS)
    key: str
    title: str  # as the lecturer's picker shows it
    # the lesson's question (some name a word of the sentence) and its right option, from the encoder_core
    # function the lesson uses; may raise CannotAsk
    ask: Callable[[Run], tuple[Prediction, int]]
    step: int  # the lesson's section that teaches it (its link's step, from 0)
    charts: Callable[[Run], list[Chart]]  # the lesson's chart(s) of the answer
    asked_with: Callable[[Run], list[Chart]] | None = None  # shown with the question (never the answer)
    trained: bool = False  # runs on the lab's trained MLM, whatever the sidebar's model
    block: bool = False  # runs on the block lesson's own seeded small post-norm model, whatever the sidebar's
    lead: Callable[[Run], str] = lambda run: ""  # what the lesson's page would show around the question
    position: Callable[[Run], int] | None = None  # the token the question is about (proof["position"]), if any;
    # may raise CannotAsk
    link: Callable[[dict], dict] | None = None  # the lesson's own link parameters for the proof's inputs
    # (its sentence, the token asked about); None: {"sentence": proof["sentence"]}

    def link_params(self, proof: dict) -> dict:
        """The lesson's link parameters that reopen its step on the round's sentence (ui/room/sources.lesson_link
        adds the step, the model and the seed)."""
        if self.link is not None:
            return dict(self.link(proof))
        return {"sentence": proof["sentence"]} if proof.get("sentence") else {}


_registered: dict[str, LessonPrediction] = {}
_loaded = False
_loading = threading.RLock()


def register_room_question(
    lesson: str,
    key: str,
    title: str,
    *,
    ask: Callable[[Run], tuple[Prediction, int]],
    step: int,
    charts: Callable[[Run], list[Chart]],
    asked_with: Callable[[Run], list[Chart]] | None = None,
    trained: bool = False,
    block: bool = False,
    lead: Callable[[Run], str] | None = None,
    position: Callable[[Run], int] | None = None,
    link: Callable[[dict], dict] | None = None,
) -> LessonPrediction:
    """Offer one of a lesson's predictions to class rooms, under a key unique across lessons. Registering a
    key again from the same lesson replaces it (a module run twice); from another lesson is an error."""
    if lesson not in LESSON_IDS:
        raise ValueError(f"{lesson!r} is not a lesson of encoder_core.lessons.LESSONS")
    held = _registered.get(key)
    if held is not None and held.lesson != lesson:
        raise ValueError(f"the room question {key!r} is the {held.lesson} lesson's already")
    prediction = LessonPrediction(
        lesson,
        key,
        title,
        ask,
        step,
        charts,
        asked_with,
        trained,
        block,
        lead or (lambda run: ""),
        position,
        link,
    )
    _registered[key] = prediction
    return prediction


def sentence_link(param: str) -> Callable[[dict], dict]:
    """A room question's link for a lesson whose page takes the round's sentence as its link parameter `param`
    (and nothing else from the round): link=sentence_link("heads_sentence")."""
    return lambda proof: {param: proof["sentence"]}


def lesson_questions(lesson: str, sentence_param: str | None = None) -> Callable[..., LessonPrediction]:
    """The `register` of a lesson's prediction module: register_room_question under that lesson, and, given
    sentence_param, a link that opens the lesson's page on the round's sentence (sentence_link)."""
    link = {"link": sentence_link(sentence_param)} if sentence_param else {}
    return partial(register_room_question, lesson, **link)


def load_lessons() -> None:
    """Import every lesson's prediction module (ui.questions.<id>, for each id of the lesson registry) once
    per process: importing it registers its room questions. A lesson without such a module has none."""
    global _loaded
    with _loading:
        if _loaded:
            return
        for lesson in LESSON_IDS:
            name = f"{QUESTIONS_PACKAGE}.{lesson}"
            if importlib.util.find_spec(name) is not None:
                importlib.import_module(name)
        _loaded = True


def predictions() -> dict[str, LessonPrediction]:
    """Every lesson's room questions by key: in the lessons' order, each lesson's in the order it registered."""
    load_lessons()
    order = {lesson: i for i, lesson in enumerate(LESSON_IDS)}
    return dict(sorted(_registered.items(), key=lambda item: order[item[1].lesson]))


def run_key(run: Run, *settings: object) -> tuple:
    """What a question's model run depends on, as the key of its cache (st.cache_data, the run itself passed as
    an unhashed _run): the model as the round names it (its seed included), the sentence's ids, and the
    question's own settings. One cached run serves the question, its lead, what it is asked with and its proof,
    so a round runs the model once."""
    return (run.name, tuple(run.ids), *settings)


def word_positions(run: Run) -> list[int]:
    """The positions of the sentence's words: every token but [CLS], [SEP], [PAD], [UNK] and [MASK] (the
    positions MLM may choose, as encoder_core.lessons.tradeoffs.eligible_positions finds them)."""
    special = set(run.tokenizer.special_ids)
    return [i for i, t in enumerate(run.ids) if t not in special]


def middle_word(run: Run) -> int:
    """A word in the middle of the sentence (context on both sides), for a question about one word."""
    words = word_positions(run)
    if not words:
        raise CannotAsk("The sentence has no word the model could be asked about: type a few words.")
    return words[len(words) // 2]
