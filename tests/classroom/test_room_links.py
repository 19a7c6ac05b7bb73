"""The base of a room's link and QR code: the lecturer's setting, then ENCODER_LAB_PUBLIC_URL, then the page's
own address, with the LAN address offered and a warning when the link would point at localhost."""

from __future__ import annotations

import pytest

from classroom.links import PUBLIC_URL_VAR, clean, is_loopback, lan_address, page_base, public_base


def test_the_setting_wins_then_the_environment_then_the_page():
    env = {PUBLIC_URL_VAR: "https://lab.example.edu/encoder/"}
    assert public_base("http://10.0.0.5:8501", "http://localhost:8501/room", env).url == "http://10.0.0.5:8501"
    from_env = public_base("", "http://localhost:8501/room", env)
    assert (from_env.url, from_env.source, from_env.warning) == ("https://lab.example.edu/encoder", "environment", "")
    page = public_base(None, "https://lab.example.edu/room?room=ABCDEFGH", {})
    assert (page.url, page.source, page.warning) == ("https://lab.example.edu", "page", "")


def test_localhost_is_replaced_by_the_lan_address_or_warned_about():
    lan = public_base("", "http://localhost:8501/room", {}, lan="192.168.1.20")
    assert lan.url == "http://192.168.1.20:8501" and lan.source == "lan" and "localhost:8501" in lan.warning
    alone = public_base("", "http://127.0.0.1:8501/room", {}, lan=None)
    assert alone.url == "http://127.0.0.1:8501" and "phones cannot open it" in alone.warning
    typed_local = public_base("http://localhost:9000", "http://x/room", {})
    assert "phones cannot open it" in typed_local.warning


@pytest.mark.parametrize("bad", ["", "   ", "ftp://x", "javascript:alert(1)", "http://", "http://a b", "x" * 400, None])
def test_a_bad_public_address_is_ignored(bad):
    assert clean(bad) is None
    assert public_base(bad, "https://lab.example.edu/room", {}).url == "https://lab.example.edu"


def test_small_helpers():
    assert page_base("http://h:1/quiz?room=X#y") == "http://h:1" and page_base("http://h:1/") == "http://h:1"
    assert is_loopback("http://[::1]:8501") and not is_loopback("http://10.1.2.3")
    assert lan_address() is None or not is_loopback(f"http://{lan_address()}")
    assert clean("http://h:notaport") is None
