"""The app opens in a real browser: home page, sidebar, no error element."""

from .driver import assert_no_exception, wait_idle


def test_home_opens(page, app_url, screenshots_dir):
    page.goto(app_url)
    page.get_by_role("heading", name="Encoder Lab").wait_for(timeout=30_000)
    wait_idle(page)
    assert_no_exception(page)
    assert page.get_by_text("Lecture mode").count() >= 1
    page.screenshot(path=str(screenshots_dir / "home.png"), full_page=True)


def test_typed_markup_in_link_is_text(page, app_url):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(app_url + "/?seed=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
    wait_idle(page)
    page.get_by_text("is not a number").wait_for(timeout=20_000)
    assert dialogs == []
    assert page.locator("script:has-text('alert(1)')").count() == 0
    assert_no_exception(page)
