"""AppTests of the deck builder and of presenting a deck: the course deck loads, steps are added, moved and
deleted, a question's preview shows the answer the model computes, a deck is saved, exported and imported
(a bad file refused whole, the step named), and the deck's bar walks the lecturer across lessons and into
the class room, where the deck's question opens a round."""

from __future__ import annotations

import json

import apptest_helpers as helpers
import pytest
from apptest_helpers import NAVIGATION_DECK, no_exception, plain
from streamlit.testing.v1 import AppTest

from classroom.decks import Deck, PredictionStep, QuizStep, TypedStep, ViewStep
from ui.room.deck import course_deck, room_question

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_limiter")]


def builder(query: dict | None = None) -> AppTest:
    at = helpers.open_linked("deck", query, every_section=False)
    no_exception(at)
    return at


def draft(at: AppTest) -> Deck:
    return at.session_state["_deck_draft"]


def test_the_course_deck_loads_and_a_question_previews_with_the_models_answer(database):
    at = builder()
    assert "No steps yet" in plain(at)
    at = at.button(key="deck_course").click().run()
    no_exception(at)
    assert draft(at) == course_deck() and len(draft(at).steps) == 24
    at = at.number_input(key="deck_selected").set_value(2).run()
    no_exception(at)
    step = draft(at).steps[1]
    assert isinstance(step, PredictionStep)
    expected = room_question(step)
    right = expected.options[expected.correct]
    assert any("The answer: " in s.value and right in s.value.replace("\\", "") for s in at.success)
    at = at.toggle(key="deck_proof").set_value(True).run()  # the lesson's chart that proves it
    no_exception(at)
    assert helpers.figures(at)


def test_steps_are_added_moved_and_deleted(database):
    at = builder()
    at.radio(key="deck_add_kind").set_value("link").run()
    at.text_input(key="deck_link").input("http://localhost:8501/attention?sentence=the%20bird%20sang&step=2")
    at = at.button(key="deck_add_link").click().run()
    no_exception(at)
    assert draft(at).steps == (ViewStep("attention", {"sentence": "the bird sang", "step": 2}),)
    at.text_input(key="deck_link").input("http://localhost:8501/retired?step=1")
    at = at.button(key="deck_add_link").click().run()
    assert "retired" in plain(at) and len(draft(at).steps) == 1  # an unknown lesson is not added

    at.radio(key="deck_add_kind").set_value("quiz").run()
    at.selectbox(key="deck_generator").set_value("masking_split")
    at.number_input(key="deck_quiz_seed").set_value(0)
    at = at.button(key="deck_add_quiz").click().run()
    assert draft(at).steps[1] == QuizStep("masking_split", 0)
    assert at.number_input(key="deck_selected").value == 2  # the new step is selected and previewed
    assert any("(10, 1, 1)" in s.value.replace("\\", "") for s in at.success)

    at.radio(key="deck_add_kind").set_value("typed").run()
    at.text_area(key="deck_typed_prompt").input("What does $\\sqrt{d_k}$ do?")
    at.text_area(key="deck_typed_options").input("only one")
    at = at.button(key="deck_add_typed").click().run()
    assert "Give at least 2 options" in plain(at) and len(draft(at).steps) == 2
    at.text_area(key="deck_typed_options").input("scales the scores\nmasks the pads")
    at = at.button(key="deck_add_typed").click().run()
    no_exception(at)
    assert draft(at).steps[2] == TypedStep("What does $\\sqrt{d_k}$ do?", ("scales the scores", "masks the pads"), 1)
    assert any("scales the scores" in s.value for s in at.success)

    at = at.button(key="deck_up").click().run()  # the typed question moves up to step 2
    assert [s.kind for s in draft(at).steps] == ["view", "typed", "quiz"]
    assert at.number_input(key="deck_selected").value == 2
    at = at.number_input(key="deck_selected").set_value(1).run()
    at = at.button(key="deck_down").click().run()
    assert [s.kind for s in draft(at).steps] == ["typed", "view", "quiz"]
    at = at.button(key="deck_delete").click().run()
    no_exception(at)
    assert [s.kind for s in draft(at).steps] == ["typed", "quiz"]


def test_a_deck_is_saved_exported_and_imported_and_a_bad_file_is_refused_whole(database):
    at = builder()
    at = at.button(key="deck_course").click().run()
    at = at.button(key="deck_save").click().run()
    no_exception(at)
    deck = draft(at)
    assert database.load_deck(deck.id) == deck and at.session_state["deck"] == deck.id
    assert f"deck?deck={deck.id}" in plain(at)
    assert "Step 1 of 24" in plain(at)  # the deck's bar
    assert at.get("download_button")  # the export: the file below is what it holds

    again = builder({"deck": deck.id})  # the link opens the deck in the builder
    assert draft(again) == deck

    fresh = builder()
    fresh.file_uploader(key="deck_upload").set_value(("course.json", deck.to_json().encode(), "application/json"))
    fresh = fresh.run()
    no_exception(fresh)
    assert draft(fresh) == deck and "Imported" in plain(fresh)

    bad = json.loads(deck.to_json())
    bad["steps"][2] = {"kind": "quiz", "generator": "masking_split", "seed": -4}
    fresh.file_uploader(key="deck_upload").set_value(("bad.json", json.dumps(bad).encode(), "application/json"))
    fresh = fresh.run()
    no_exception(fresh)
    text = plain(fresh)
    assert "Not imported" in text and "Step 3 (quiz question)" in text and "`seed` is -4" in text
    assert draft(fresh) == deck  # the deck in the builder is untouched


def click(at: AppTest, key: str) -> AppTest:
    """Press a button, then keep to the page the run ended on, as a browser does (AppTest would otherwise run
    the page it was opened on again next time). The sidebar keeps lecture mode and the seed across pages."""
    at = at.button(key=key).click().run()
    no_exception(at)
    assert at.session_state["lecture"] is True and at.session_state["seed"] == 5
    at.switch_page(f"pages/{at.session_state['_current_page']}.py")
    return at


def test_the_deck_bar_walks_the_lecturer_across_lessons_and_into_the_room(database):
    deck_id = database.save_deck(NAVIGATION_DECK)
    room, key = database.open_room(5)
    at = builder({"deck": deck_id, "lecture": "1", "seed": "5"})
    at.session_state["_room_keys"] = {room.code: key}  # this session opened the room
    at = click(at, "deck_open_step")  # the builder is no step's page
    no_exception(at)
    assert at.session_state["_current_page"] == "attention"
    assert at.session_state["attention.sentence"] == "a cat sat" and at.session_state["step"] == 0
    assert "Step 1 of 4" in plain(at) and at.session_state["deck_step"] == 0

    at = click(at, "deck_next")  # the same lesson, another step and sentence
    no_exception(at)
    assert at.session_state["_current_page"] == "attention" and at.session_state["step"] == 2
    assert at.session_state["attention.sentence"] == "the bird sang"

    at = click(at, "deck_next")  # a question: the room, with the question ready to ask
    no_exception(at)
    assert at.session_state["_current_page"] == "room" and "Step 3 of 4" in plain(at)
    at = at.button(key="deck_ask").click().run()
    no_exception(at)
    rnd = database.current_round(room.code)
    assert rnd is not None and rnd.question.prompt == "Which mask hides the future?"
    assert rnd.question.options[rnd.question.correct] == "causal"
    database.advance(room.code, rnd.id, "vote1", "between")
    database.advance(room.code, rnd.id, "between", "reveal")
    at = at.run()
    assert "Asked already, as question 1" in plain(at)

    at = click(at, "deck_next")
    no_exception(at)
    assert at.session_state["_current_page"] == "padding" and at.session_state["step"] == 1
    assert at.button(key="deck_next").disabled
    at = click(at, "deck_prev")
    assert at.session_state["_current_page"] == "room"
    at = click(at, "deck_close")
    no_exception(at)
    assert not at.session_state["deck"] and "deck" not in at.query_params


def test_a_step_naming_a_lesson_the_app_lacks_is_flagged_and_skipped_not_dropped(database):
    deck = Deck("Old", (ViewStep("attention", {"step": 0}), ViewStep("retired", {"step": 1}), ViewStep("padding")))
    deck_id = database.save_deck(deck)
    at = builder({"deck": deck_id, "lecture": "1", "seed": "5"})
    assert len(draft(at).steps) == 3 and "Step 2 (lesson view): the lesson `retired`" in plain(at)
    assert at.button(key="deck_present").disabled
    at = click(at, "deck_open_step")
    at = click(at, "deck_next")  # the flagged step: the bar says so, and the page stays
    assert "Step 2 of 3" in plain(at) and "retired" in plain(at) and at.session_state["_current_page"] == "attention"
    at = click(at, "deck_next")
    assert at.session_state["_current_page"] == "padding" and "Step 3 of 3" in plain(at)
