"""A lesson on a 390x844 phone: a prediction's question comes before any chart taller than half the screen,
its targets are at least 44 px tall, a chart's toolbar leaves its title clear, and no heatmap writes cell text
too small to read or wider than its cell. On a desktop the charts keep their own heights. Screenshots go to
artifacts/screenshots/phone/."""

from __future__ import annotations

import pytest

from .driver import assert_no_exception, wait_idle

LOAD_MS = 90_000
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
TARGET_PX = 44
READABLE_PX = 11

# Per open prediction (its commit button is there): the charts between its section's heading and the
# question, with their heights, and the heights of the question's targets.
QUESTIONS_JS = """() => {
  const main = document.querySelector('[data-testid=stMain]');
  const top = e => e.getBoundingClientRect().top + window.scrollY;
  const headings = [...main.querySelectorAll('h1, h2, h3')].map(top);
  const charts = [...main.querySelectorAll('[data-testid=stPlotlyChart]')];
  return [...main.querySelectorAll('[class*="st-key-predict-"]')]
    .filter(p => p.querySelector('[class*="st-key-_predict_commit_"]'))
    .map(p => {
      const at = top(p), section = Math.max(-1, ...headings.filter(h => h < at));
      const targets = [...p.querySelectorAll('[data-testid=stRadioOption], button, [data-baseweb=input]')];
      return {
        key: [...p.classList].find(c => c.startsWith('st-key-predict-')),
        charts: charts.filter(c => top(c) > section && top(c) < at).map(c => c.getBoundingClientRect().height),
        targets: targets.map(t => [t.innerText.trim().slice(0, 30), t.getBoundingClientRect().height]),
      };
    });
}"""

# Per chart: does its toolbar's box meet its title's box? Per heatmap: its shown cell text's sizes and widths,
# and the narrowest step between two cells.
CHARTS_JS = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')].map(c => {
  const key = [...c.closest('[data-testid=stElementContainer]').classList].find(k => k.startsWith('st-key-'));
  const bar = c.querySelector('.modebar'), title = c.querySelector('.gtitle');
  let overlap = false;
  if (bar && title) {
    const a = bar.getBoundingClientRect(), b = title.getBoundingClientRect();
    overlap = a.width > 0 && b.width > 0 && a.left < b.right && b.left < a.right
      && a.top < b.bottom && b.top < a.bottom;
  }
  const cells = [];
  for (const trace of c.querySelectorAll('.hm')) {
    const texts = [...trace.querySelectorAll('.heatmap-label text')];
    const shown = texts.filter(t => getComputedStyle(t).display !== 'none' && t.textContent.trim());
    const xs = [...new Set(texts.map(t => Math.round(+t.getAttribute('x'))))].sort((p, q) => p - q);
    let step = Infinity;
    for (let i = 1; i < xs.length; i++) step = Math.min(step, xs[i] - xs[i - 1]);
    cells.push({
      written: texts.length,
      sizes: shown.map(t => parseFloat(getComputedStyle(t).fontSize)),
      widest: Math.max(0, ...shown.map(t => t.getBBox().width)),
      step: Number.isFinite(step) ? step : null,
    });
  }
  return {key, height: c.getBoundingClientRect().height, overlap, cells};
})"""


# At least n charts on the page, and every one of them drawn.
DRAWN_JS = """n => { const c = document.querySelectorAll('[data-testid=stPlotlyChart]');
  const svgs = document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length;  // two per chart
  return c.length > Math.max(n - 1, 0) && svgs >= 2 * c.length; }"""


# Padding asks first how many pads the batch gets, and holds its charts back until then: skip that one.
SKIP_FIRST = {"padding": 1}


def open_drawn(browser, app_url: str, lesson: str, viewport: dict, skips: int | None = None):
    """The lesson with every section on one page, its first `skips` predictions skipped (the lesson's
    SKIP_FIRST by default), its run finished and every chart drawn."""
    context = browser.new_context(viewport=viewport)
    page = context.new_page()
    page.goto(f"{app_url}/{lesson}?all=1", timeout=LOAD_MS)
    page.locator("[class*='st-key-predict-']").first.wait_for(timeout=LOAD_MS)
    wait_idle(page, LOAD_MS)
    for _ in range(SKIP_FIRST.get(lesson, 0) if skips is None else skips):
        page.get_by_role("button", name="Skip: just show me").first.click()
        page.locator("[class*='st-key-reveal-']").first.wait_for(timeout=LOAD_MS)
        page.wait_for_timeout(300)
        wait_idle(page, LOAD_MS)
    drawn = 0
    for _ in range(3):  # plotly.js arrives after the run: wait until the number of drawn charts stops growing
        page.wait_for_function(DRAWN_JS, arg=drawn, timeout=LOAD_MS)
        page.wait_for_timeout(700)  # the charts capped on a phone are redrawn at their capped height
        now = page.evaluate("() => document.querySelectorAll('[data-testid=stPlotlyChart]').length")
        if now == drawn:
            break
        drawn = now
    assert_no_exception(page)
    return context, page


@pytest.mark.parametrize("lesson", ["attention", "padding", "block"])
def test_on_a_phone_the_question_comes_before_any_tall_chart_and_its_targets_fit_a_thumb(
    browser, app_url, screenshots_dir, lesson
):
    context, page = open_drawn(browser, app_url, lesson, PHONE)
    questions = page.evaluate(QUESTIONS_JS)
    assert questions, f"{lesson}: no open prediction"
    assert any(q["charts"] for q in questions), "no question has a chart before it: nothing was checked"
    half = PHONE["height"] / 2
    for q in questions:
        tall = [round(h) for h in q["charts"] if h > half]
        assert not tall, f"{q['key']}: a chart {tall} px tall (over half of {PHONE['height']}) before the question"
        small = [(text, round(h)) for text, h in q["targets"] if h < TARGET_PX - 0.5]
        assert len(q["targets"]) >= 4 and not small, f"{q['key']}: targets under {TARGET_PX} px: {small}"
    out = screenshots_dir / "phone"
    out.mkdir(exist_ok=True)
    first = page.locator("[class*='st-key-predict-']").first
    first.evaluate("el => el.scrollIntoView({block: 'end'})")  # the question, and the chart above it
    page.wait_for_timeout(300)
    page.screenshot(path=str(out / f"{lesson}-question.png"))
    context.close()


def test_on_a_phone_the_toolbar_leaves_the_title_clear_and_cell_text_is_readable(browser, app_url, screenshots_dir):
    context, page = open_drawn(browser, app_url, "padding", PHONE, skips=3)
    charts = page.evaluate(CHARTS_JS)
    assert len(charts) >= 3
    assert not [c["key"] for c in charts if c["overlap"]], "a chart's toolbar covers its title"
    half = PHONE["height"] / 2
    assert not [(c["key"], c["height"]) for c in charts if c["height"] > half]
    seen_text = seen_hidden = False
    for c in charts:
        for cells in c["cells"]:
            assert all(size >= READABLE_PX for size in cells["sizes"]), (c["key"], cells["sizes"])
            if cells["sizes"] and cells["step"]:
                assert cells["widest"] <= cells["step"], (c["key"], cells)  # no number runs into the next cell
            seen_text |= bool(cells["sizes"])
            seen_hidden |= cells["written"] > 0 and not cells["sizes"]
    assert seen_text and seen_hidden  # the 4x4 grids keep their numbers; the 12-column grids' are hidden
    page.locator(".st-key-chart_padded_attention_masked").scroll_into_view_if_needed()
    (screenshots_dir / "phone").mkdir(exist_ok=True)
    page.screenshot(path=str(screenshots_dir / "phone" / "padding-chart.png"))
    context.close()

    context, page = open_drawn(browser, app_url, "padding", DESKTOP, skips=3)  # a desktop keeps the chart's height
    heights = {c["key"]: c["height"] for c in page.evaluate(CHARTS_JS)}
    assert heights["st-key-chart_padded_attention_masked"] > DESKTOP["height"] / 2
    context.close()
