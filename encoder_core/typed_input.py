"""Reading what a student typed where a shape is asked for: shared by a lesson (outputs' shape exercise)
and the quiz, so it belongs to neither."""

from __future__ import annotations

import re

_TUPLE_SEPARATORS = re.compile(r"\s*(?:,|x|×|\*|\s)\s*")


def parse_int_tuple(text: str) -> tuple[int, ...] | None:
    """'(8, 20, 48)', '8,20,48', '[8, 20, 48]', '8 x 20 x 48', 'torch.Size([8, 20, 48])' -> (8, 20, 48)."""
    s = str(text).strip().lower().replace("torch.size", "")
    s = s.strip("()[]{} ").rstrip(",").strip()
    if not s:
        return None
    parts = [p for p in _TUPLE_SEPARATORS.split(s) if p]
    if not parts or not all(re.fullmatch(r"\d+", p) for p in parts):
        return None
    return tuple(int(p) for p in parts)
