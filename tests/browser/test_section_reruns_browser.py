"""In a real browser, a control that only one section reads reruns that section alone (a fragment): the
server sends a fraction of what a page rerun sends, the chart still follows, and the address bar and the
sidebar's link stay exact."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from .driver import CHART, assert_no_exception, chart_data, wait_chart_change, wait_charts, wait_idle

LOAD_MS = 90_000


def received_bytes_during(page, frames: list[int], action) -> int:
    """The bytes the server sent over the WebSocket while the action's rerun ran."""
    frames.clear()
    before = chart_data(page, 0)
    action()
    wait_chart_change(page, before)
    wait_idle(page)
    page.wait_for_timeout(300)
    return sum(frames)


def sidebar_link(page) -> dict:
    code = page.locator('[data-testid="stSidebar"] [data-testid="labLink"] code').first.inner_text()
    return dict(parse_qsl(urlsplit(code.strip()).query))


def test_a_slider_the_section_alone_reads_reruns_only_that_section(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    frames: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(len(f))))
    page.goto(f"{app_url}/attention", timeout=LOAD_MS)
    wait_charts(page, 1, LOAD_MS)
    wait_idle(page, LOAD_MS)

    def type_sentence():
        box = page.get_by_role("textbox", name="Sentence", exact=True)
        box.fill("the dog ran home")
        box.press("Enter")

    def move_head():
        page.get_by_role("slider", name="Head").focus()
        page.keyboard.press("ArrowRight")

    whole_page = received_bytes_during(page, frames, type_sentence)
    section = received_bytes_during(page, frames, move_head)
    assert_no_exception(page)
    print(f"bytes sent: page rerun {whole_page}, section rerun {section}")
    assert section < 0.8 * whole_page, (section, whole_page)
    assert page.locator("h1").count() == 1  # the page above the section is still there
    assert page.locator(CHART).count() >= 1
    query = dict(parse_qsl(urlsplit(page.url).query))
    assert query.get("head") == "1" and query.get("sentence") == "the dog ran home"
    assert sidebar_link(page) == query
    context.close()
