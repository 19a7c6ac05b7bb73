"""Where phones reach the app: the base of the link and QR code a room projects. No UI here.

The address a lecturer's own browser used is often http://localhost:8501, which no phone can open.
So the base is, in order: the lecturer's setting, the ENCODER_LAB_PUBLIC_URL environment variable,
the address the page was opened at. When that last one is a loopback address, the machine's LAN
address (if it has one) is offered instead, with a warning either way.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

PUBLIC_URL_VAR = "ENCODER_LAB_PUBLIC_URL"
URL_CHARS = 300


@dataclass(frozen=True)
class Base:
    url: str  # http(s)://host[:port][/path], no trailing slash; "" when nothing usable is known
    source: str  # setting, environment, page, lan
    warning: str = ""  # shown beside the QR code when phones may not reach it


def clean(raw: object) -> str | None:
    """An http(s) base URL without query, fragment or trailing slash; None if it is not one."""
    text = str(raw or "").strip()
    if not text or len(text) > URL_CHARS or any(ch.isspace() for ch in text):
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_address() -> str | None:
    """This machine's address on its local network: the source address of a route to a private address.
    A UDP socket's connect sends nothing; it only asks the kernel which interface it would use."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            ip = s.getsockname()[0]
    except OSError:
        return None
    return None if ipaddress.ip_address(ip).is_loopback else ip


def page_base(here: str) -> str:
    """The app's base from the address of a page in it (http://host:8501/room?x=1 -> http://host:8501)."""
    base = here.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return base.rsplit("/", 1)[0] if base.rsplit("/", 1)[-1] in ("room", "quiz") else base


def public_base(setting: object, here: str, environ: dict | None = None, lan: str | None = None) -> Base:
    """The base phones should open, and a warning when they may not reach it."""
    environ = os.environ if environ is None else environ
    for source, raw in (("setting", setting), ("environment", environ.get(PUBLIC_URL_VAR, ""))):
        url = clean(raw)
        if url:
            warn = "This address is this machine's own (localhost): phones cannot open it." if is_loopback(url) else ""
            return Base(url, source, warn)
    url = clean(page_base(here)) or ""
    if url and is_loopback(url):
        parts = urlsplit(url)
        if lan:
            lan_url = f"{parts.scheme}://{lan}{':' + str(parts.port) if parts.port else ''}{parts.path}"
            return Base(
                lan_url,
                "lan",
                f"You opened the app at {url}, which phones cannot reach; the link uses this machine's network "
                f"address {lan} instead. If phones still cannot open it, set the public address below or in "
                f"{PUBLIC_URL_VAR}.",
            )
        return Base(
            url,
            "page",
            "The link points at localhost: phones cannot open it. "
            f"Set the public address below or in {PUBLIC_URL_VAR}.",
        )
    return Base(url, "page")
