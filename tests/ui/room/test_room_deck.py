"""The deck as the app knows it: the course deck shipped in decks/course.json checks against today's lessons,
predictions and quiz generators, and every one of its questions can be asked, with its answer computed; each
step opens the page its link names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from classroom.decks import MODELS, BadDeck, Deck, PredictionStep, QuizStep, TypedStep, ViewStep, import_deck, problems
from encoder_core.lessons import LESSON_IDS
from ui.frame.state import GLOBAL_PARAMS, MODEL
from ui.room.deck import COURSE, course_deck, is_question, known, room_question, target
from ui.room.registry import CannotAsk

ROOT = Path(__file__).resolve().parents[3]


def test_the_course_deck_checks_against_the_lessons_and_predictions_of_today():
    deck = import_deck(COURSE.read_text(encoding="utf-8"), known())  # refused whole if any step were bad
    assert problems(deck, known()) == []
    lessons = {s.lesson for s in deck.steps if isinstance(s, ViewStep)}
    assert lessons == set(LESSON_IDS), "the course deck visits every lesson"
    kinds = {s.kind for s in deck.steps}
    assert kinds == {"view", "prediction", "quiz", "typed"}
    assert 15 <= len(deck.steps) <= 40


def test_every_question_of_the_course_deck_can_be_asked_with_its_answer_computed():
    for number, s in enumerate(course_deck().steps, start=1):
        if not is_question(s):
            continue
        q = room_question(s)
        assert 2 <= len(q.options) <= 6 and 0 <= q.correct < len(q.options), number
        if isinstance(s, PredictionStep):
            assert q.proof["key"] == s.key and q.proof["sentence"] == s.sentence
        if isinstance(s, QuizStep):
            assert q.proof == {"kind": "quiz", "id": s.question_id}


def test_a_typed_step_keeps_the_lecturers_order_and_a_bad_one_cannot_be_asked():
    q = room_question(TypedStep("Which?", ("a", "b", "c"), 3))
    assert q.options == ("a", "b", "c") and q.correct == 2 and q.source == "typed"
    with pytest.raises(CannotAsk):
        room_question(QuizStep("no_such_generator", 0))
    with pytest.raises(CannotAsk):
        room_question(PredictionStep("gone", "a b"))
    with pytest.raises(CannotAsk):
        room_question(ViewStep("attention"))


def test_each_step_opens_the_page_its_link_names():
    view = ViewStep("attention", {"step": 2, "sentence": "a b", "use_mask": False})
    assert target("abc123abc123", 4, view) == (
        "pages/attention.py",
        {"step": "2", "sentence": "a b", "use_mask": "0", "deck": "abc123abc123", "deck_step": "4"},
    )
    question = TypedStep("Q?", ("a", "b"), 1)
    assert target("abc123abc123", 5, question, "ABCDEFGH") == (
        "pages/room.py",
        {"room": "ABCDEFGH", "deck": "abc123abc123", "deck_step": "5"},
    )


def test_the_decks_models_and_link_names_are_the_apps():
    assert MODELS == MODEL.options
    assert {"deck", "deck_step"} <= {p.name for p in GLOBAL_PARAMS}


def test_the_builders_sentence_controls_are_the_lessons_own():
    source = (ROOT / "pages" / "deck.py").read_text(encoding="utf-8")
    block = source[source.index("SENTENCE_PARAMS = {") :]
    named = dict(re.findall(r'"(\w+)": "(\w+)"', block[: block.index("}")]))
    assert set(named) <= set(LESSON_IDS) and len(named) >= 7
    for lesson, name in named.items():
        page = (ROOT / "pages" / f"{lesson}.py").read_text(encoding="utf-8")
        assert f'Param("{name}",' in page, f"pages/{lesson}.py has no control {name}"


def test_a_deck_of_200_steps_is_known_and_opens_each_step():
    steps = tuple(course_deck().steps[i % 24] for i in range(200))
    deck = Deck("Long", steps)
    assert problems(deck, known()) == []
    assert [target(deck.id, i, s)[1]["deck_step"] for i, s in enumerate(deck.steps)][-1] == "199"


def test_a_decks_typed_question_keeps_its_markdown_and_latex_and_others_are_plain_text():
    from classroom.questions import RoomQuestion, typed
    from ui.room.deck import shown_prompt

    q = room_question(TypedStep("What does $\\sqrt{d_k}$ do?", ("scales", "masks"), 1))
    assert q.markdown and shown_prompt(q) == "What does $\\sqrt{d_k}$ do?"
    assert RoomQuestion.from_json(q.to_json()) == q
    plain = typed("What does $x$ do?", "a\nb", 1)
    assert not plain.markdown and shown_prompt(plain) == "What does \\$x\\$ do?"
    old = '{"prompt": "p", "options": ["a", "b"], "correct": 0, "source": "typed"}'  # a round stored before
    assert RoomQuestion.from_json(old).markdown is False


def test_the_lecturers_guide_shows_a_deck_file_that_imports_and_an_error_the_app_gives():
    guide = (ROOT / "docs" / "lecturers.md").read_text(encoding="utf-8")
    section = guide[guide.index("## Build and present a deck") :]
    example = section[section.index("```json") + len("```json") : section.index("```", section.index("```json") + 7)]
    deck = import_deck(example, known())
    assert [s.kind for s in deck.steps] == ["view", "prediction", "quiz", "typed"]
    quoted = re.search(r"\(``(Step 3 \(quiz question\): .*?)``\)", " ".join(section.split()))
    bad = json.loads(deck.to_json())
    bad["steps"].insert(2, {"kind": "quiz", "generator": "masking_split", "seed": -4})
    with pytest.raises(BadDeck) as err:
        import_deck(json.dumps(bad), known())
    assert quoted and str(err.value).startswith(quoted.group(1)) and len(quoted.group(1)) > 60
