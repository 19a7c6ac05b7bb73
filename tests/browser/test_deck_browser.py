"""Presenting a deck in a real browser: the deck's bar follows the lecturer from the builder into a lesson,
Page Down and Page Up (what a presentation clicker sends) walk the deck across lessons and into the class
room, and the address keeps the deck's place."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta

from sqlalchemy import update

from classroom.schema import rounds
from classroom.store import DATABASE_URL_VAR, RoomStore
from tests.apptest_helpers import NAVIGATION_DECK
from ui.room.phone import WARN_LAST_S as PHONE_WARNING_S

from .conftest import serving
from .driver import assert_no_exception, wait_charts, wait_idle, wait_settled
from .test_room_rounds_browser import PHONE, VOTE, press, tap, wait_count

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


# ---------------------------------------------------------------- a deck presented to a room

LECTURE_DECK = {  # two lessons' views and a question of each kind, as a lecturer's file holds them
    "format": "encoder-lab-deck",
    "version": 1,
    "title": "Attention, then padding",
    "steps": [
        {"kind": "view", "lesson": "attention", "params": {"step": 0, "sentence": "the cat sat on the mat"}},
        {"kind": "quiz", "generator": "attention_output_value", "seed": 0, "note": "an attention output, by hand"},
        {"kind": "view", "lesson": "attention", "params": {"step": 1, "sentence": "the cat sat on the mat"}},
        {"kind": "prediction", "key": "attention-rows", "sentence": "the cat sat on the mat", "model": "small"},
        {"kind": "view", "lesson": "padding", "params": {"step": 0}},
        {
            "kind": "typed",
            "prompt": "Which mask keeps a token from attending to the words after it?",
            "options": ["the causal mask", "the padding mask", "no mask"],
            "right": 1,
        },
    ],
}
TABLET = {"width": 1280, "height": 720}


def on_step(page, k: int, n: int = 6, path: str | None = None) -> None:
    """The projector's bar says step k, and (path) its page is open."""
    bar_says(page, k, n)
    if path:
        place = rf".*deck_step={k - 1}\b" if k > 1 else ""  # step 1's deck_step=0 is the default: left out
        page.wait_for_url(re.compile(rf"/{path}\?{place}"), timeout=LOAD_MS)


def remote_says(presenter, k: int, n: int = 6) -> None:
    presenter.locator(".st-key-deck-remote").get_by_text(f"Step {k} of {n}").wait_for(timeout=LOAD_MS)


def options_of(page, selector: str) -> list[str]:
    """The options a question shows, without their letter: phones' buttons or the lecturer's lines."""
    texts = page.locator(selector).all_inner_texts()
    return [re.sub(r"^[A-F]\s+", "", t.replace("✓", "")).strip() for t in texts]


def deadline_in(url: str, code: str, seconds: float) -> None:
    """Move the room's timed vote's deadline to `seconds` from now (the store closes it then, as at 30 s)."""
    with RoomStore(url).engine.begin() as conn:
        moved = conn.execute(
            update(rounds)
            .where(rounds.c.room_code == code, rounds.c.closes_at.is_not(None))
            .values(closes_at=datetime.now(UTC) + timedelta(seconds=seconds))
        ).rowcount
    assert moved == 1, f"{moved} timed votes open in room {code}"


def lecturer_options(page) -> list[str]:
    return options_of(page, ".st-key-room-lecturer-question p:has(strong)")


def test_a_deck_presented_to_a_room_from_the_projector_and_the_presenter_view(browser, tmp_path, screenshots_dir):
    """A lecturer builds the deck (an imported file), presents it on the projector in lecture mode, and walks it
    from both the projector and the presenter view on a tablet; three phones join by the room's code. The quiz
    question runs on the 30 s timer (the deck is walked while it runs), the prediction is cancelled, the typed
    question reaches the phones."""
    from classroom.decks import parse

    shots = screenshots_dir / "deck"
    shots.mkdir(exist_ok=True)
    deck_file = tmp_path / "attention-then-padding.json"
    deck_file.write_text(json.dumps(LECTURE_DECK), encoding="utf-8")
    deck_id = parse(deck_file.read_text(encoding="utf-8")).id
    url = f"sqlite:///{tmp_path / 'rooms.sqlite3'}"
    with serving(extra_env={DATABASE_URL_VAR: url}) as app_url:
        try:
            present_to_a_room(browser, app_url, url, deck_file, deck_id, shots)
        except Exception:  # every screen as it was, for whoever reads the failure
            for i, context in enumerate(browser.contexts):
                for j, page in enumerate(context.pages):
                    page.screenshot(path=str(shots / f"failed-{i}-{j}.png"))
            raise


def present_to_a_room(browser, app_url: str, url: str, deck_file, deck_id: str, shots) -> None:
    from playwright.sync_api import expect

    projector_context = browser.new_context(viewport={"width": 1440, "height": 900})
    projector = projector_context.new_page()
    seen = shots / "projector-console.txt"  # its errors and addresses, read when the test fails
    seen.write_text("", encoding="utf-8")

    def note(line: str) -> None:
        with seen.open("a", encoding="utf-8") as f:
            f.write(f"{time.time():.1f} {line}\n")

    projector.on("console", lambda m: m.type == "error" and note(f"console: {m.text[:300]}"))
    projector.on("pageerror", lambda e: note(f"page error: {e}"))
    projector.on("framenavigated", lambda f: note(f"address: {f.url}"))
    projector.goto(f"{app_url}/room")
    projector.get_by_role("button", name="Open a room").click()
    projector.get_by_text("Room code:").wait_for(timeout=LOAD_MS)
    projector.wait_for_url(re.compile(r"room=[A-Z0-9]{8}"), timeout=LOAD_MS)
    code = re.search(r"room=([A-Z0-9]{8})", projector.url).group(1)
    link = projector.locator('[data-testid="stCode"]').filter(has_text="view=presenter").first.text_content()
    keyed = re.search(r"room\?room=[A-Z0-9]{8}&key=[A-Za-z0-9_-]+&view=presenter", link).group(0)

    presenter = browser.new_context(viewport=TABLET).new_page()
    presenter.goto(f"{app_url}/{keyed}")
    phones = []
    for _ in range(3):  # each its own context: three anonymous students, who type the projected code
        phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True).new_page()
        phone.goto(f"{app_url}/room")
        phones.append(phone)
    for phone in phones:
        phone.get_by_label("Room code").fill(f"{code[:4]}-{code[4:]}")
        phone.get_by_role("button", name="Join the room").click()
    presenter.get_by_text("Presenter view of room").wait_for(timeout=LOAD_MS)

    # The deck builder, in the session that opened the room: the file imported, a question previewed.
    projector.get_by_text(re.compile(r"View \d+ more")).click()  # the sidebar's navigation, unfolded
    projector.get_by_role("link", name="Deck builder").click()
    projector.get_by_text("No steps yet").wait_for(timeout=LOAD_MS)
    projector.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(deck_file))
    projector.get_by_text("Imported “Attention, then padding”: 6 steps.").wait_for(timeout=LOAD_MS)
    step = projector.get_by_label("Step", exact=True)
    step.fill("4")
    step.press("Enter")
    preview = projector.locator(".st-key-deck-preview")
    expect(preview).to_contain_text("The answer:", timeout=LOAD_MS)
    wait_settled(projector)
    projector.screenshot(path=str(shots / "builder.png"))
    projector.get_by_role("button", name="Present in lecture mode").click()
    on_step(projector, 1, path="attention")
    assert RoomStore(url).deck_place(code) == (deck_id, 0)  # the room knows the deck its lecturer presents
    for phone in phones:
        phone.get_by_text("Waiting for your lecturer").wait_for(timeout=LOAD_MS)

    # The presenter view shows the room's deck, and its Next moves the projector.
    remote_says(presenter, 1)
    presenter.get_by_role("button", name="Next").click()
    on_step(projector, 2, path="room")
    remote_says(presenter, 2)
    projector.locator(".st-key-deck-question").wait_for(timeout=LOAD_MS)  # the deck's question, ready on both

    # Step 2, the quiz question, asked from the tablet with a 30 s timer.
    timer = presenter.get_by_role("combobox", name="Timer for each vote")
    timer.click()
    presenter.get_by_role("option", name="30 s: the vote closes by itself").click()
    expect(timer).to_have_value("30 s: the vote closes by itself")
    wait_idle(presenter)
    press(
        presenter,
        lambda: presenter.get_by_role("button", name="Ask the deck's question: vote 1 opens").click(),
        lambda: presenter.get_by_text("Votes in vote 1"),
    )
    projector.get_by_text("Votes in vote 1").wait_for(timeout=LOAD_MS)
    asked = lecturer_options(presenter)
    assert 3 <= len(asked) <= 6 and presenter.locator(".st-key-room-lecturer-question").get_by_text("✓").count()
    prompt = presenter.locator(".st-key-room-lecturer-question h3").inner_text()
    for phone in phones:  # every phone: the question and its options, in the round's order, nothing marked
        expect(phone.locator(VOTE)).to_have_count(len(asked), timeout=LOAD_MS)  # every button, not the first
        assert phone.locator(".st-key-room-question").inner_text().strip() == prompt.strip()
        assert options_of(phone, VOTE) == asked
        assert "✓" not in phone.locator("body").inner_text()
    tap(phones[0], 0, 1)
    tap(phones[1], 1, 1)
    wait_count(projector, 1, 2)
    wait_count(presenter, 1, 2)
    presenter.get_by_text("Votes per option").first.wait_for(timeout=LOAD_MS)  # the distribution: tablet only
    assert projector.locator(".js-plotly-plot").count() == 0, "the projector shows a chart during the vote"
    assert projector.locator(".st-key-room-lecturer-question").get_by_text("✓").count() == 0
    projector.locator('[data-testid="stMain"]').evaluate("e => e.scrollTo(0, 0)")  # the bar, question, count
    projector.screenshot(path=str(shots / "projector-vote.png"))
    presenter.locator(".st-key-deck-remote").evaluate(  # the deck's own bar, just under the page's header
        "e => { e.scrollIntoView({block: 'start'}); document.querySelector('[data-testid=stMain]').scrollBy(0, -90); }"
    )
    presenter.screenshot(path=str(shots / "presenter-vote.png"))
    phones[0].screenshot(path=str(shots / "phone-vote.png"))

    # While the timer runs: Page Down on the projector, Previous on the tablet.
    projector.keyboard.press("PageDown")
    on_step(projector, 3, path="attention")
    remote_says(presenter, 3)
    presenter.get_by_role("button", name="Previous").click()
    on_step(projector, 2, path="room")

    # The timer: phones are told it is closing, then vote 1 closes by itself. Its last seconds are what this
    # checks, so the deadline is brought forward to them rather than waited for.
    deadline_in(url, code, seconds=PHONE_WARNING_S - 1)
    phones[2].get_by_text(re.compile(r"Vote 1 is closing in \d+ s")).wait_for(timeout=LOAD_MS)
    for phone in phones:
        phone.get_by_text("Talk it over with your neighbour").wait_for(timeout=LOAD_MS)
    projector.get_by_text("Vote 1 is closed").wait_for(timeout=LOAD_MS)
    presenter.get_by_text("Suggested:").wait_for(timeout=LOAD_MS)
    assert projector.get_by_text("Suggested:").count() == 0  # the projector: the count only
    assert projector.locator(".js-plotly-plot").count() == 0
    projector.get_by_role("button", name="Show results").click()
    projector.get_by_text("Suggested:").wait_for(timeout=LOAD_MS)
    wait_charts(projector, 1)
    presenter.get_by_role("button", name="Reveal the answer").click()
    answer = presenter.get_by_text(re.compile(r"The answer: [A-F]")).first
    answer.wait_for(timeout=LOAD_MS)
    said = answer.inner_text().split(",")[0]
    projector.get_by_text(said).first.wait_for(timeout=LOAD_MS)
    for phone in phones:
        phone.get_by_text(said).wait_for(timeout=LOAD_MS)

    # Step 4, the prediction: asked from the projector, cancelled from the tablet. Nothing of it is revealed.
    presenter.get_by_role("button", name="Next").click()
    on_step(projector, 3, path="attention")
    projector.keyboard.press("PageDown")
    on_step(projector, 4, path="room")
    remote_says(presenter, 4)
    press(
        projector,
        lambda: projector.get_by_role("button", name="Ask the deck's question: vote 1 opens").click(),
        lambda: projector.get_by_text("question 2 ·").first,  # "Question 2 · from a lesson's prediction"
    )
    presenter.get_by_text("Votes in vote 1").wait_for(timeout=LOAD_MS)
    right = presenter.locator(".st-key-room-lecturer-question p:has(strong)").filter(has_text="✓").inner_text()
    right = re.sub(r"^[A-F]\s+", "", right.replace("✓", "")).strip()
    for phone in phones:
        phone.get_by_text("question 2 · vote 1").wait_for(timeout=LOAD_MS)
    tap(phones[0], 0, 1)
    wait_count(projector, 1, 1)
    press(
        presenter,
        lambda: presenter.get_by_role("button", name=re.compile("Cancel this question")).click(),
        lambda: presenter.get_by_text("The last question was cancelled"),
    )
    projector.get_by_text("The last question was cancelled").wait_for(timeout=LOAD_MS)
    for phone in phones:
        phone.get_by_text("Your lecturer withdrew that question").wait_for(timeout=LOAD_MS)
        shown = phone.locator("body").inner_text()
        assert "The answer" not in shown and right not in shown, shown
    shown = projector.locator('[data-testid="stMain"]').inner_text()
    assert right not in shown and "✓" not in shown, "the cancelled round's answer reached the projector"

    # Step 6, the lecturer's own question: the phones get it with its options.
    projector.keyboard.press("PageDown")
    on_step(projector, 5, path="padding")
    projector.keyboard.press("PageDown")
    on_step(projector, 6, path="room")
    projector.get_by_role("button", name="Ask the deck's question: vote 1 opens").click()
    for phone in phones:
        phone.get_by_text("question 2 · vote 1").wait_for(timeout=LOAD_MS)  # the cancelled one's number
        typed_options = LECTURE_DECK["steps"][5]["options"]  # the buttons may land a moment after the heading
        expect(phone.locator(VOTE)).to_have_count(len(typed_options), timeout=LOAD_MS)
        assert sorted(options_of(phone, VOTE)) == sorted(typed_options)
        assert "The answer" not in phone.locator("body").inner_text()
    for page in (projector, presenter, *phones):
        assert_no_exception(page)
        page.context.close()
