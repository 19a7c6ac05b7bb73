"""A clone stands alone: no test, script or module builds a path that climbs above the repository root.

Someone who clones the project has nothing beside it, so a fact a test checks against the source
documents is kept in the repository (tests/fixtures/source_facts.json), with its source named. The
check reads the source: `Path(__file__).parents[N]`, a chain of `.parent`, nested
`os.path.dirname(__file__)` and any string holding a `..` path step are followed from the file's own
place; shell scripts are searched for `..` steps.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("tests", "scripts", "encoder_core", "ui", "pages", "classroom")
DOT_DOT = re.compile(r"(^|[/\\])\.\.([/\\]|$)")


def mentions_file(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))


def steps_up(node: ast.AST) -> int | None:
    """How many folders above the file's own folder this expression names, or None if it is no such path.
    Path(__file__) is the file itself; .parent is its folder (0 up); .parents[N] is N up."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
        index = node.slice.value if isinstance(node.slice, ast.Constant) else None
        if mentions_file(node.value.value) and isinstance(index, int):
            return index
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner, count = node, 0
        while isinstance(inner, ast.Attribute) and inner.attr == "parent":
            inner, count = inner.value, count + 1
        if mentions_file(inner) and not isinstance(inner, ast.Attribute):
            return count - 1
    if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "dirname":
        inner, count = node, 0
        while isinstance(inner, ast.Call) and getattr(inner.func, "attr", None) == "dirname" and inner.args:
            inner, count = inner.args[0], count + 1
        if mentions_file(inner):
            return count - 1
    return None


def not_paths(tree: ast.AST) -> set[int]:
    """Strings that name no path: docstrings, and the text of f-strings ("{lo}..{hi}" is a range)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            found |= {id(part) for part in node.values}
    return found


def climbs_in_python(source: str, rel: Path) -> list[str]:
    """Each place in one file's source that names a path above the repository root."""
    tree = ast.parse(source)
    depth = len(rel.parts) - 1  # folders between the file and the root: parents[depth] is the root
    skip = not_paths(tree)
    found = []
    for node in ast.walk(tree):
        up = steps_up(node)
        if up is not None and up > depth:
            found.append(f"line {node.lineno}: {ast.unparse(node)} is {up - depth} above the root")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if DOT_DOT.search(node.value):
                found.append(f"line {node.lineno}: {node.value!r} steps up a folder")
    return found


def project_files() -> list[Path]:
    return sorted(p for folder in CHECKED for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".sh"))


@pytest.mark.parametrize("path", project_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_names_a_path_above_the_repository_root(path):
    rel, text = path.relative_to(ROOT), path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        assert climbs_in_python(text, rel) == []
    else:
        steps = [line for line in text.splitlines() if not line.lstrip().startswith("#") and DOT_DOT.search(line)]
        assert steps == []


@pytest.mark.parametrize(
    "source",
    [
        'SEEDS = Path(__file__).resolve().parents[4] / "shared" / "seeds"',
        "up = Path(__file__).parent.parent.parent.parent.parent",
        "up = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__)))))",
        'open("../shared/seeds/002.txt")',
        'ROOT / ".." / "shared"',
    ],
)
def test_the_check_finds_a_climb(source):
    assert climbs_in_python(source, Path("tests/encoder_core/lessons/test_x.py"))


@pytest.mark.parametrize(
    "source",
    [
        "ROOT = Path(__file__).resolve().parents[3]",
        "here = Path(__file__).parent.parent.parent.parent",
        '"""Run it beside ../main."""',
        'name = "a..b"',
        'label = f"{lo}..{hi}"',
    ],
)
def test_the_check_lets_the_root_and_below_pass(source):
    assert climbs_in_python(source, Path("tests/encoder_core/lessons/test_x.py")) == []
