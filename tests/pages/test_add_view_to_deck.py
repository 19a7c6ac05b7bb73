"""AppTests of the lesson sidebar's "Add this view to my deck": the view as its link holds it becomes the last
step of the deck being built, which the deck builder then shows, selected; a page that is not a lesson, or a
deck being presented, shows no button; a view whose link cannot be read says why."""

from __future__ import annotations

import apptest_helpers as helpers
import pytest
from apptest_helpers import no_exception, plain
from streamlit.testing.v1 import AppTest

from classroom.decks import Deck, ViewStep

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("fresh_limiter")]

BUTTON = "deck_add_this_view"
VIEW = {"sentence": "the bird sang", "head": "1", "step": "2"}  # the attention lesson's third step, head 1


def lesson(query: dict, page: str = "attention") -> AppTest:
    at = helpers.open_linked(page, query, every_section=False)
    no_exception(at)
    return at


def add(at: AppTest) -> AppTest:
    at = at.button(key=BUTTON).click().run()
    no_exception(at)
    return at


def sidebar_text(at: AppTest) -> str:
    return "\n".join(str(el.value) for el in at.sidebar.get("success") + at.sidebar.get("error")).replace("\\", "")


def test_the_view_on_screen_becomes_the_decks_last_step_and_the_builder_shows_it(database):
    at = lesson(VIEW)
    linked = dict(at.query_params)  # what the sidebar's "Share this view" holds
    assert linked == VIEW
    at = add(at)
    expected = ViewStep("attention", {"sentence": "the bird sang", "head": 1, "step": 2})
    assert at.session_state["_deck_draft"] == Deck("Untitled deck", (expected,))
    assert "Added as step 1 of 1 in “Untitled deck”. Open the deck builder" in sidebar_text(at)
    assert [link.proto.page for link in at.sidebar.get("page_link")] == ["deck"]  # the builder's url path

    at = add(at)  # twice: two steps, the second selected
    assert "Added as step 2 of 2" in sidebar_text(at)
    assert at.session_state["_deck_draft"].steps == (expected, expected)

    at.switch_page("pages/deck.py").run()  # the builder, in the same session
    no_exception(at)
    deck = at.session_state["_deck_draft"]
    assert deck.title == "Untitled deck" and deck.steps == (expected, expected)
    assert at.number_input(key="deck_selected").value == 2
    assert at.text_input(key="deck_title").value == "Untitled deck"
    assert "Step 2:** Attention, step 3 on “the bird sang”" in plain(at)


def test_a_view_is_added_to_the_deck_already_being_built(database):
    at = lesson({"step": "1"}, page="padding")
    at.session_state["_deck_draft"] = Deck("Week 3", (ViewStep("attention", {"step": 0}),))
    at = add(at)
    assert at.session_state["_deck_draft"].steps[1] == ViewStep("padding", {"step": 1})
    assert "Added as step 2 of 2 in “Week 3”" in sidebar_text(at)


def test_a_view_whose_link_cannot_be_read_is_not_added_and_says_why(database):
    at = lesson({"sentence": " ".join(["é"] * 1000), "step": "1"})  # 1,999 characters: 8,000+ in a link
    at = add(at)
    text = sidebar_text(at)
    assert "Not added" in text and "characters long" in text
    assert "_deck_draft" not in at.session_state


@pytest.mark.parametrize("page", ["home", "quiz", "progress", "room", "deck"])
def test_a_page_that_is_not_a_lesson_has_no_button(database, page):
    at = helpers.open_linked(page, every_section=False)
    no_exception(at)
    assert BUTTON not in [b.key for b in at.button]


def test_no_button_while_a_deck_is_presented(database):
    deck_id = database.save_deck(Deck("Presented", (ViewStep("attention", {"step": 0}),)))
    at = lesson({"deck": deck_id, "lecture": "1"})
    assert "Step 1 of 1" in plain(at)
    assert BUTTON not in [b.key for b in at.button]
    at = at.button(key="deck_close").click().run()  # the deck closed: the button is back
    assert BUTTON in [b.key for b in at.button]
