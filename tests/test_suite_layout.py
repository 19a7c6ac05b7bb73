"""The suite's own layout: every browser test file is placed in one of make test's browser groups, so the
groups stay balanced by design rather than by a default."""

from pathlib import Path

from conftest import BROWSER_GROUPS, browser_group

BROWSER = Path(__file__).resolve().parent / "browser"


def test_every_browser_file_is_in_one_group():
    placed = [name for names in BROWSER_GROUPS.values() for name in names]
    files = sorted(p.stem.removeprefix("test_") for p in BROWSER.glob("test_*.py"))
    assert sorted(placed) == files  # each file once, none missing, none left over


def test_a_test_outside_the_browser_folder_has_no_group():
    assert browser_group("tests/pages/test_page_attention.py::test_x") is None
    assert browser_group("tests/browser/test_deck_browser.py::test_y[chromium]") == "a"
