"""Control specs and their validation. No streamlit here: parse a URL value, get the
nearest valid value and a notice saying what was changed."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

MAX_TEXT = 2000  # characters kept from a typed or linked sentence


@dataclass(frozen=True)
class Param:
    """One control: its URL parameter name, its valid range and, for a lesson's control, the lesson
    that owns it. Two lessons may both have a `sentence` in their links; their session keys differ."""

    name: str
    default: Any
    kind: str  # "text" | "int" | "float" | "bool" | "choice"
    lo: float | None = None
    hi: float | None = None
    options: tuple = ()
    max_len: int = MAX_TEXT
    lesson: str = ""

    @property
    def key(self) -> str:
        """The widget's key in st.session_state: "<lesson>.<name>", or the bare name for the frame's own."""
        return f"{self.lesson}.{self.name}" if self.lesson else self.name

    def parse(self, raw: str) -> tuple[Any, str | None]:
        """(value, notice). The notice is None when raw was valid as given; the value is always valid."""
        raw = str(raw)
        if self.kind == "text":
            if len(raw) > self.max_len:
                kept = raw[: self.max_len]
                return kept, f"`{self.name}` was {len(raw):,} characters long; kept the first {self.max_len:,}."
            return raw, None
        if self.kind == "bool":
            low = raw.strip().lower()
            if low in ("1", "true", "yes", "on"):
                return True, None
            if low in ("0", "false", "no", "off"):
                return False, None
            return self.default, f"`{self.name}={snippet(raw)}` is not true/false; using {self.default}."
        if self.kind == "choice":
            for option in self.options:
                if str(option).lower() == raw.strip().lower():
                    return option, None
            shown = ", ".join(snippet(str(o)) for o in self.options)
            default = snippet(str(self.default))
            return self.default, f"`{self.name}={snippet(raw)}` is not one of {shown}; using {default}."
        return self._parse_number(raw)

    def _parse_number(self, raw: str) -> tuple[int | float, str | None]:
        try:
            number = float(raw.strip())
        except ValueError:
            return self.default, f"`{self.name}={snippet(raw)}` is not a number; using {self.default}."
        if math.isnan(number) or (math.isinf(number) and (self.lo if number < 0 else self.hi) is None):
            return self.default, f"`{self.name}={snippet(raw)}` is not a usable number; using {self.default}."
        value, notice = number, None
        if self.kind == "int" and math.isfinite(number) and number != int(number):
            value = round(number)
            notice = f"`{self.name}={snippet(raw)}` is not a whole number; using {value}."
        clamped = self.clamp(value)
        if clamped != value:
            notice = f"`{self.name}={snippet(raw)}` is outside {self.range_text()}; using {clamped}."
        return clamped, notice

    def clamp(self, value):
        """The nearest value inside lo..hi (an int for int controls)."""
        lo, hi = self.lo, self.hi
        if self.kind == "int":
            lo = None if lo is None else math.ceil(lo)
            hi = None if hi is None else math.floor(hi)
        if lo is not None and value < lo:
            value = lo
        if hi is not None and value > hi:
            value = hi
        return int(value) if self.kind == "int" else float(value)

    def is_valid(self, value) -> bool:
        """True when value could be the control's value as it stands (right type, in range)."""
        if self.kind == "text":
            return isinstance(value, str) and len(value) <= self.max_len
        if self.kind == "bool":
            return isinstance(value, bool)
        if self.kind == "choice":
            return value in self.options
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.kind == "int" and not isinstance(value, int):
            return False
        return math.isfinite(value) and self.clamp(value) == value

    def nearest_valid(self, value):
        """A stored value made valid: clamped into range, or the default when it cannot be used."""
        if self.is_valid(value):
            return value
        if self.kind in ("int", "float") and not isinstance(value, bool) and isinstance(value, int | float):
            if math.isfinite(value):
                return self.clamp(round(value) if self.kind == "int" else value)
        if self.kind == "text" and isinstance(value, str):
            return value[: self.max_len]
        return self.default

    def range_text(self) -> str:
        if self.lo is not None and self.hi is not None:
            return f"{self.lo:g}..{self.hi:g}"
        if self.lo is not None:
            return f"the values from {self.lo:g} up"
        return f"the values up to {self.hi:g}"

    def to_url(self, value) -> str:
        if self.kind == "bool":
            return "1" if value else "0"
        return str(value)


def snippet(raw: str, n: int = 24) -> str:
    """A piece of a link value that is safe inside a markdown code span: short, one line, no backticks."""
    cut = raw if len(raw) <= n else raw[:n] + "..."
    return "".join(
        "'" if ch == "`" else ("?" if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch) for ch in cut
    )


_short = snippet  # the earlier name


class LessonParams:
    """A lesson's controls, each written once: `P.sentence` is the Param, `P.sentence.key` its widget key
    ("attention.sentence"), `P.sentence.name` its URL name ("sentence"). Iterates like a list of Params.
    shared: the frame's controls a lesson also links (the quiz seed), kept under their own keys."""

    def __init__(self, lesson: str, *params: Param, shared: tuple[Param, ...] = ()):
        self.lesson = lesson
        own = [replace(p, lesson=lesson) for p in params]
        self._params = {p.name: p for p in own + list(shared)}
        if len(self._params) != len(own) + len(shared):
            raise ValueError(f"{lesson}: two controls share a name")

    def __getattr__(self, name: str) -> Param:
        try:
            return self.__dict__["_params"][name]
        except KeyError:
            raise AttributeError(f"{self.__dict__.get('lesson')} has no control named {name!r}") from None

    def __getitem__(self, name: str) -> Param:
        return self._params[name]

    def __iter__(self) -> Iterator[Param]:
        return iter(self._params.values())

    def __len__(self) -> int:
        return len(self._params)
