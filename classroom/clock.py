"""The time the class room and the learner records go by: UTC now, moved forward by
ENCODER_LAB_CLOCK_SHIFT_DAYS (a test setting, so a browser test can see tomorrow's review today; unset
in use). A bad value is ignored."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

SHIFT_VAR = "ENCODER_LAB_CLOCK_SHIFT_DAYS"


def shift() -> timedelta:
    try:
        days = float(os.environ.get(SHIFT_VAR, "0") or 0)
    except ValueError:
        return timedelta(0)
    return timedelta(days=days) if abs(days) < 10_000 else timedelta(0)


def now() -> datetime:
    return datetime.now(UTC) + shift()
