"""Presenting a deck in a real browser: the deck's bar follows the lecturer from the builder into a lesson,
Page Down and Page Up (what a presentation clicker sends) walk the deck across lessons and into the class
room, and the address keeps the deck's place."""

from __future__ import annotations

import re

from classroom.store import DATABASE_URL_VAR, RoomStore
from tests.apptest_helpers import NAVIGATION_DECK

from .conftest import serving
from .driver import assert_no_exception, wait_idle

LOAD_MS = 90_000


def bar_says(page, k: int, n: int) -> None:
    page.wait_for_function(
        """([k, n]) => [...document.querySelectorAll('.st-key-deck-bar p')]
                 .some(p => p.innerText.includes(`Step ${k} of ${n}`))""",
        arg=[k, n],
        timeout=LOAD_MS,
    )
    wait_idle(page, LOAD_MS)
    assert_no_exception(page)


def test_page_down_and_page_up_walk_the_deck_across_lessons(page, tmp_path, screenshots_dir):
    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    deck_id = RoomStore(url).save_deck(NAVIGATION_DECK)
    with serving(extra_env={DATABASE_URL_VAR: url}) as app_url:
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(f"{app_url}/deck?deck={deck_id}&lecture=1")
        bar_says(page, 1, 4)
        page.get_by_role("button", name="Open step 1").click()
        page.wait_for_url(re.compile(r"/attention\?"), timeout=LOAD_MS)
        bar_says(page, 1, 4)
        page.keyboard.press("PageDown")
        bar_says(page, 2, 4)
        page.wait_for_url(re.compile(r"deck_step=1"), timeout=LOAD_MS)
        assert "/attention?" in page.url and "step=2" in page.url and "bird" in page.url
        page.screenshot(path=str(screenshots_dir / "deck-bar-lesson.png"))
        page.keyboard.press("PageDown")
        bar_says(page, 3, 4)
        page.wait_for_url(re.compile(r"/room\?.*deck_step=2|/room\?.*deck="), timeout=LOAD_MS)
        page.screenshot(path=str(screenshots_dir / "deck-bar-room.png"))
        page.keyboard.press("PageDown")
        bar_says(page, 4, 4)
        page.wait_for_url(re.compile(r"/padding\?"), timeout=LOAD_MS)
        page.keyboard.press("PageUp")
        bar_says(page, 3, 4)
        page.wait_for_url(re.compile(r"/room\?"), timeout=LOAD_MS)
