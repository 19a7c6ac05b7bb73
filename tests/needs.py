"""What a test does when this machine lacks a piece it drives (nginx, PostgreSQL, chromium, WordNet).

CI installs every piece (scripts/ensure_test_packages.sh), so there a missing one is a failure that
names it; on a developer's machine the test skips with the same message.
"""

from __future__ import annotations

import os

import pytest


def missing(piece: str, hint: str = "scripts/ensure_test_packages.sh installs it") -> None:
    message = f"{piece} is missing: {hint}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)
