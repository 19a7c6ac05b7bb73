"""The command lines live in scripts/: encoder_core holds the library functions and no __main__."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMMANDS_WITH_OPTIONS = ("scripts.train", "scripts.train_minilm_mlm", "scripts.evaluate")
COMMANDS = (*COMMANDS_WITH_OPTIONS, "scripts.probes", "scripts.everyday_probes", "scripts.quiz_table")


def runs_as_main(path: Path) -> bool:
    """Whether a file has an `if __name__ == "__main__":` block."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "__name__":
            if any(isinstance(c, ast.Constant) and c.value == "__main__" for c in node.comparators):
                return True
    return False


def test_encoder_core_has_no_command_line():
    files = sorted((ROOT / "encoder_core").rglob("*.py"))
    assert files
    assert [str(p.relative_to(ROOT)) for p in files if runs_as_main(p)] == []
    assert not [p for p in files if p.name == "__main__.py"]


def test_the_main_finder_finds_one(tmp_path):
    path = tmp_path / "tool.py"
    path.write_text('def main():\n    pass\n\n\nif __name__ == "__main__":\n    main()\n')
    assert runs_as_main(path)
    path.write_text("def main():\n    pass\n")
    assert not runs_as_main(path)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_is_a_script_with_a_main(name):
    module = importlib.import_module(name)
    assert callable(module.main)
    assert runs_as_main(ROOT / (name.replace(".", "/") + ".py"))


@pytest.mark.parametrize("name", COMMANDS_WITH_OPTIONS)
def test_a_command_with_options_answers_help(name, capsys):
    with pytest.raises(SystemExit) as done:
        importlib.import_module(name).main(["--help"])
    assert done.value.code == 0
    assert "--threads" in capsys.readouterr().out or name == "scripts.evaluate"


def test_the_quiz_table_command_prints_the_table(capsys):
    from encoder_core.quiz.table import fixed_questions, quiz_table

    importlib.import_module("scripts.quiz_table").main()
    assert capsys.readouterr().out == quiz_table(fixed_questions()) + "\n"


def test_make_runs_the_scripts():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-m scripts.train\n" in makefile and "-m scripts.train_minilm_mlm\n" in makefile
    assert "-m encoder_core" not in makefile
