"""Lecture mode read from the back of a hall: at 1920x1080, every step of every lesson, each reached by Next
(which also puts the step in the address, for a link to it).

Measured in the rendered page, not assumed from the figures' settings: every piece of chart text
(cell numbers, ticks, titles, legends, colour bars) and every text in the main column (captions,
metrics, tables, labels, code) is at least 18 px; each chart title is one line that fits its chart;
the sidebar is folded away; a step draws at most one chart in full (a side-by-side pair counts as
one), the others wait folded under their titles. A step that asks for a prediction is measured twice:
as it asks, and once answered (skipped here). A screenshot of every step goes to
artifacts/screenshots/lecture-hall/ for a person to look at.
"""

from __future__ import annotations

import re

import pytest

from encoder_core.lessons import LESSON_IDS

from .driver import SKIP, assert_no_exception, skip_predictions
from .test_lecture_screens import LOAD_MS, NEXT_KEY_CLASS, wait_for_step

pytestmark = pytest.mark.slow

MIN_PX = 18
MEASURE = """() => {
  const visible = el => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden'
    && !el.closest('details:not([open])');  // a folded chart waits under its title
  const px = el => parseFloat(getComputedStyle(el).fontSize);
  const charts = [...document.querySelectorAll('[data-testid=stPlotlyChart]')].filter(visible);
  const small = [];
  for (const chart of charts) {
    for (const t of chart.querySelectorAll('.main-svg text')) {
      if (t.textContent.trim() && visible(t) && px(t) < MIN)
        small.push(`chart text "${t.textContent.slice(0, 30)}" ${px(t)}px`);
    }
  }
  const main = document.querySelector('[data-testid=stMain]');
  const texts = main.querySelectorAll('[data-testid=stCaptionContainer], [data-testid=stMetricLabel] p, '
    + '[data-testid=stMetricValue], table td, table th, [data-testid=stWidgetLabel] p, '
    + '[data-testid=stMarkdownContainer] p, [data-testid=stCode] code, [data-testid=stAlertContainer] p');
  for (const t of texts) {
    if (visible(t) && t.innerText.trim() && !t.closest('[data-testid=stPlotlyChart]') && px(t) < MIN)
      small.push(`text "${t.innerText.slice(0, 30)}" ${px(t)}px`);
  }
  const titles = charts.map(chart => {
    const title = chart.querySelector('.gtitle');
    if (!title) return null;
    const box = title.getBoundingClientRect(), frame = chart.getBoundingClientRect();
    return {text: title.textContent, lines: title.querySelectorAll('tspan.line').length || 1,
            fits: box.left >= frame.left - 1 && box.right <= frame.right + 1};
  }).filter(Boolean);
  const sidebar = document.querySelector('[data-testid=stSidebar]');
  const open = sidebar && sidebar.getAttribute('aria-expanded') !== 'false';
  return {small, titles, charts: charts.length, sidebar: open ? sidebar.getBoundingClientRect().width : 0};
}""".replace("MIN", str(MIN_PX))


def measured(page, where: str) -> list[str]:
    """What in this view is too small, or too much, for the back of a hall."""
    found = page.evaluate(MEASURE)
    problems = [f"{where}: {p}" for p in found["small"]]
    problems += [f"{where}: title {t['text']!r} takes {t['lines']} lines" for t in found["titles"] if t["lines"] > 1]
    problems += [f"{where}: title {t['text']!r} is wider than its chart" for t in found["titles"] if not t["fits"]]
    if found["sidebar"] > 0:
        problems.append(f"{where}: the sidebar is open ({found['sidebar']:.0f} px)")
    if found["charts"] > 2:
        problems.append(f"{where}: {found['charts']} charts drawn in full")
    return problems


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_every_lecture_step_reads_from_the_back_of_the_hall(browser, app_url, screenshots_dir, lesson):
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    out = screenshots_dir / "lecture-hall"
    out.mkdir(exist_ok=True)
    page.goto(f"{app_url}/{lesson}?lecture=1&step=0", timeout=LOAD_MS)
    n = wait_for_step(page, 1)
    problems = []
    for step in range(n):
        if step:  # Next, as a lecturer moves on (links to a step are tested in test_lecture_screens)
            page.locator(NEXT_KEY_CLASS).get_by_role("button").click()
            wait_for_step(page, step + 1)
            page.wait_for_url(re.compile(rf"[?&]step={step}(&|$)"), timeout=LOAD_MS)  # a link to this step
        assert_no_exception(page)
        asks = page.get_by_role("button", name=SKIP).count() > 0
        problems += measured(page, f"{lesson} step {step + 1}" + (", asking" if asks else ""))
        page.screenshot(path=str(out / f"{lesson}-step{step + 1}{'-asking' if asks else ''}.png"))
        if asks:  # the step's answer, once the hall has predicted (here: skipped), must read as well
            skip_predictions(page)
            wait_for_step(page, step + 1)
            problems += measured(page, f"{lesson} step {step + 1}, revealed")
            page.screenshot(path=str(out / f"{lesson}-step{step + 1}.png"))
    context.close()
    assert problems == [], "\n".join(problems[:40])
