"""Lecture mode in a real browser, at laptop (1280x720) size for every lesson in app.py's navigation and at
projector (1920x1080) size for the quiz (test_lecture_hall walks every lesson at the projector's): one step
heading at a time, Next moves on and into the URL, no error.
Screenshots go to artifacts/screenshots/ for a person to look at. Also: keyboard reach, high
contrast, and the figure exports as a browser delivers them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from encoder_core.lessons import LESSON_IDS

from .driver import assert_no_exception, wait_idle

ROOT = Path(__file__).resolve().parents[2]
SIZES = {"projector": (1920, 1080), "laptop": (1280, 720)}
STEP_TEXT = re.compile(r"Step (\d+) of (\d+)")
NEXT_KEY_CLASS = ".st-key-lecture_next"  # Streamlit also renders a hidden copy of each button: ask by role
LOAD_MS = 90_000  # a cold lesson builds its model on first use; the test machine is shared


LESSONS = [*LESSON_IDS, "quiz"]  # every page in the navigation with a URL path


SETTLED = """k => new Promise(done => {
  let last = null, still = 0;
  const started = performance.now();
  const tick = () => {
    const h = [...document.querySelectorAll('[data-testid=stMain] h3')]
      .find(h => h.innerText.trim().startsWith(`Step ${k} of `));
    const top = h ? Math.round(h.getBoundingClientRect().top) : null;
    still = top === last ? still + 1 : 0;
    last = top;
    if (still >= 6 || performance.now() - started > 3000) done(); else setTimeout(tick, 50);
  };
  tick();
})"""


def step_headings(page) -> list[str]:
    texts = page.locator("[data-testid=stMain] h1, [data-testid=stMain] h2, [data-testid=stMain] h3").all_inner_texts()
    return [t.strip() for t in texts if STEP_TEXT.match(t.strip())]


def wait_for_step(page, k: int) -> int:
    """Wait until the page shows step k; return the number of steps."""
    page.wait_for_function(
        """k => Array.from(document.querySelectorAll('[data-testid=stMain] h3'))
                 .some(h => h.innerText.trim().startsWith(`Step ${k} of `))""",
        arg=k,
        timeout=LOAD_MS,
    )
    wait_idle(page, LOAD_MS)
    if page.locator("[data-testid=stPlotlyChart]").count():
        page.wait_for_function(
            "() => document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length > 0", timeout=30_000
        )
    # Lazily loaded parts (charts, tables) show a grey placeholder until they are drawn. Only the
    # screenshot needs them; on a busy machine they may take longer, and that is not a failure.
    try:
        page.wait_for_function("() => !document.querySelector('[data-testid^=stSkeleton]')", timeout=30_000)
    except PlaywrightTimeout:
        pass
    # The step's heading is scrolled into view, and again once content settles: wait until it has
    # stood still for 300 ms (3 s at most), so a screenshot shows the step from its heading.
    page.evaluate(SETTLED, k)
    headings = step_headings(page)
    assert len(headings) == 1, headings
    return int(STEP_TEXT.match(headings[0]).group(2))


def test_the_navigation_has_lessons():
    assert LESSONS, "app.py lists no lesson with a url_path"


@pytest.mark.parametrize("lesson", LESSONS)
def test_lecture_mode_steps_at_projector_and_laptop_sizes(page, app_url, screenshots_dir, lesson):
    # test_lecture_hall walks every step of every lesson at the projector's size, Next and its URL included:
    # a lesson is seen here at the laptop's size only, the quiz at both.
    sizes = SIZES if lesson not in LESSON_IDS else {"laptop": SIZES["laptop"]}
    for size, (width, height) in sizes.items():
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{app_url}/{lesson}?lecture=1")
        n = wait_for_step(page, 1)
        assert_no_exception(page)
        page.screenshot(path=str(screenshots_dir / f"lecture-{lesson}-{size}-step1.png"))
        if n < 2:
            continue
        page.locator(NEXT_KEY_CLASS).get_by_role("button").click()
        wait_for_step(page, 2)
        page.wait_for_url(re.compile(r"[?&]step=1(&|$)"), timeout=30_000)
        assert_no_exception(page)
        page.screenshot(path=str(screenshots_dir / f"lecture-{lesson}-{size}-step2.png"))


def focused(page) -> str:
    return page.evaluate(
        """() => { const e = document.activeElement;
                   return (e.getAttribute('aria-label') || e.innerText || '').trim().split('\\n')[0]; }"""
    )


def test_keyboard_reaches_presenting_toggles_and_lecture_buttons(page, app_url):
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{app_url}/{LESSONS[0]}?lecture=1")
    wait_for_step(page, 1)
    reached = []
    for _ in range(80):
        page.keyboard.press("Tab")
        reached.append(focused(page))
        if reached[-1] == "Next":
            break
    assert "Lecture mode" in reached and "High contrast" in reached, reached
    assert reached[-1] == "Next", reached
    page.keyboard.press("Enter")
    wait_for_step(page, 2)
    # The shortcut N moves on from anywhere except while typing in a text box.
    box = page.locator("[data-testid=stMain] input[type=text]").first
    if box.count():
        box.click()
        page.keyboard.press("n")
        wait_idle(page, LOAD_MS)
        assert STEP_TEXT.match(step_headings(page)[0]).group(1) == "2"
        page.keyboard.press("Escape")
        box.blur()
    page.keyboard.press("n")
    wait_for_step(page, 3)


def test_high_contrast_changes_page_and_figures(page, app_url):
    def caption_colour_and_chart_font(query: str):
        page.goto(f"{app_url}/{LESSONS[0]}?{query}")
        wait_idle(page, LOAD_MS)
        page.wait_for_function(
            "() => document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')", timeout=LOAD_MS
        )
        return page.evaluate(
            """() => [getComputedStyle(document.querySelector('[data-testid=stCaptionContainer]')).color,
                      document.querySelector('[data-testid=stPlotlyChart] .js-plotly-plot')._fullLayout.font.color]"""
        )

    normal = caption_colour_and_chart_font("seed=0")
    contrast = caption_colour_and_chart_font("contrast=1")
    assert contrast == ["rgb(0, 0, 0)", "#000000"], contrast
    assert normal[0] != "rgb(0, 0, 0)" and normal[1] != "#000000", normal


def test_png_camera_and_one_file_of_all_figures(page, app_url):
    page.goto(f"{app_url}/{LESSONS[0]}")
    wait_idle(page, LOAD_MS)
    button = page.get_by_role("button", name=re.compile(r"Download this lesson's \d+ figures? as one HTML file"))
    n = int(re.search(r"(\d+) figure", button.inner_text(timeout=LOAD_MS)).group(1))
    page.wait_for_function(
        """n => Array.from(document.querySelectorAll('[data-testid=stPlotlyChart] .js-plotly-plot'))
                 .filter(el => el.querySelector('.main-svg')).length >= n""",
        arg=n,
        timeout=LOAD_MS,
    )
    charts = page.locator("[data-testid=stPlotlyChart]").count()
    cameras = page.locator('[data-testid=stPlotlyChart] .modebar-btn[data-title="Download plot as a PNG"]').count()
    assert cameras == charts == n > 0  # every chart on the page was shown through show_chart, with a PNG button
    with page.expect_download(timeout=60_000) as info:
        button.click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert text.count('class="plotly-graph-div"') == n
    assert text.count("Plotly.newPlot(") == n
