"""Control specs and their validation. No streamlit here: parse a URL value, get the
nearest valid value and a notice saying what was changed."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 2000  # characters kept from a typed or linked sentence


@dataclass(frozen=True)
class Param:
    """One control of a lesson: its widget key (also its URL parameter name) and its valid range."""

    key: str
    default: Any
    kind: str  # "text" | "int" | "float" | "bool" | "choice"
    lo: float | None = None
    hi: float | None = None
    options: tuple = ()
    max_len: int = MAX_TEXT

    def parse(self, raw: str) -> tuple[Any, str | None]:
        """(value, notice). The notice is None when raw was valid as given."""
        raw = str(raw)
        if self.kind == "text":
            if len(raw) > self.max_len:
                return raw[
                    : self.max_len
                ], f"`{self.key}` was {len(raw):,} characters long; kept the first {self.max_len:,}."
            return raw, None
        if self.kind == "bool":
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True, None
            if low in ("0", "false", "no", "off"):
                return False, None
            return self.default, f"`{self.key}={_short(raw)}` is not true/false; using {self.default}."
        if self.kind == "choice":
            for option in self.options:
                if str(option).lower() == raw.strip().lower():
                    return option, None
            return (
                self.default,
                f"`{self.key}={_short(raw)}` is not one of {', '.join(map(str, self.options))}; using {self.default}.",
            )
        try:
            number = float(raw.strip())
            if not math.isfinite(number):
                raise ValueError
        except ValueError:
            return self.default, f"`{self.key}={_short(raw)}` is not a number; using {self.default}."
        value, notice = number, None
        if self.kind == "int" and number != int(number):
            value = round(number)
            notice = f"`{self.key}={_short(raw)}` is not a whole number; using {value}."
        clamped = self.clamp(value)
        if clamped != value:
            notice = f"`{self.key}={_short(raw)}` is outside {self.lo:g}..{self.hi:g}; using {clamped}."
        return (int(clamped) if self.kind == "int" else float(clamped)), notice

    def clamp(self, value):
        if self.lo is not None and value < self.lo:
            value = self.lo
        if self.hi is not None and value > self.hi:
            value = self.hi
        return int(value) if self.kind == "int" else value

    def to_url(self, value) -> str:
        if self.kind == "bool":
            return "1" if value else "0"
        return str(value)


def _short(raw: str, n: int = 24) -> str:
    return raw if len(raw) <= n else raw[:n] + "..."
