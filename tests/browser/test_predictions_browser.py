"""Predict, then see, in a real browser: a student can do it all from the keyboard, on a 390-pixel phone and
in lecture mode. (That every lesson asks at least twice and shows no answer before a commit is
test_predictions_thought_browser.py's.) Screenshots go to artifacts/screenshots/predictions/."""

from __future__ import annotations

from playwright.sync_api import expect

from .driver import assert_no_exception, wait_settled

LOAD_MS = 90_000
PREDICT = "[class*='st-key-predict-']"
PHONE = {"width": 390, "height": 844}


def open_all_sections(page, app_url: str, lesson: str, query: str = "all=1") -> None:
    page.goto(f"{app_url}/{lesson}?{query}", timeout=LOAD_MS)
    page.locator(PREDICT).first.wait_for(timeout=LOAD_MS)
    wait_settled(page, LOAD_MS)
    assert_no_exception(page)


def test_a_student_predicts_with_the_keyboard_alone(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    open_all_sections(page, app_url, "attention", "")
    question = page.locator(".st-key-predict-attention-rows")
    answers, sure = question.get_by_role("radiogroup").first, question.get_by_role("radiogroup").last
    answers.get_by_role("radio").first.focus()
    # radio groups move with the arrow keys; the options' order is drawn per visit: find "the last row"
    for _ in range(answers.get_by_role("radio").count()):
        page.keyboard.press("Space")
        if "the last row" in page.evaluate("() => document.activeElement.closest('label').innerText"):
            break
        page.keyboard.press("ArrowDown")
    wait_settled(page, LOAD_MS)  # each choice reruns the section: let the last one land before moving on
    page.keyboard.press("Tab")  # on to "How sure are you?": its first option is "sure"
    page.keyboard.press("Space")
    expect(sure.get_by_role("radio").first).to_be_checked(timeout=10_000)
    wait_settled(page, LOAD_MS)
    for _ in range(6):  # Tab on to the commit button
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.innerText.trim()") == "Commit my prediction":
            break
    page.keyboard.press("Enter")
    page.locator(".st-key-reveal-attention-rows").wait_for(timeout=LOAD_MS)
    assert "Right." in page.locator(".st-key-reveal-attention-rows").inner_text()
    context.close()


def test_on_a_phone_the_question_fits_and_in_a_lecture_it_is_large(browser, app_url, screenshots_dir):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    open_all_sections(page, app_url, "attention", "")
    page.locator(".st-key-predict-attention-rows").scroll_into_view_if_needed()
    (screenshots_dir / "predictions").mkdir(exist_ok=True)
    page.screenshot(path=str(screenshots_dir / "predictions" / "attention-phone.png"))
    wide = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert wide <= 0, f"the page scrolls sideways by {wide} px on a phone"
    buttons = page.locator(".st-key-predict-attention-rows").get_by_role("button")
    buttons.last.wait_for(timeout=LOAD_MS)
    heights = [buttons.nth(i).bounding_box()["height"] for i in range(buttons.count())]
    assert len(heights) == 2 and min(heights) >= 40, heights  # commit and skip: targets a thumb can hit
    context.close()

    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    open_all_sections(page, app_url, "attention", "lecture=1")
    option = page.locator("[class*='st-key-predict-'] [role=radiogroup] p").first
    option.wait_for(timeout=LOAD_MS)
    wait_settled(page, LOAD_MS)  # the lecture stylesheet comes with the run that reads the link
    size = option.evaluate("e => parseFloat(getComputedStyle(e).fontSize)", timeout=LOAD_MS)
    assert size >= 24, f"a lecture's prediction options are {size}px"
    page.screenshot(path=str(screenshots_dir / "predictions" / "attention-lecture.png"))
    context.close()
