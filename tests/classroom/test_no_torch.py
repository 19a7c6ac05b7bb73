"""classroom/ is the database layer: importing any of its modules loads no torch and no encoder_core (no model,
no quiz engine). Each import runs in a fresh interpreter, so another test's imports cannot hide one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(
    "classroom" if p.name == "__init__.py" else f"classroom.{p.stem}" for p in (ROOT / "classroom").glob("*.py")
)
CHECK = (
    "import importlib, sys; importlib.import_module({module!r}); "
    "heavy = sorted(m for m in ('torch', 'encoder_core', 'streamlit') if m in sys.modules); "
    "assert not heavy, heavy"
)


@pytest.mark.parametrize("module", MODULES)
def test_a_classroom_module_loads_without_torch(module):
    done = subprocess.run(
        [sys.executable, "-c", CHECK.format(module=module)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"importing {module} loads {done.stderr.strip().splitlines()[-1:]}"


def test_the_check_can_fail():
    done = subprocess.run(
        [sys.executable, "-c", CHECK.format(module="encoder_core.quiz")], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode != 0 and "torch" in done.stderr


def test_every_module_is_checked():
    assert {"classroom.store", "classroom.questions", "classroom.decks"} <= set(MODULES) and len(MODULES) >= 10
