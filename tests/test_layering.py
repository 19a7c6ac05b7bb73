"""The house's rules, read from the source: which layer may import what, and no import cycles in ui/.

- encoder_core never imports streamlit, plotly or pandas (the computation stands alone);
- ui/views never imports streamlit (figures and tables are pure functions);
- a page holds controls, narrative and layout: no torch, no DataFrame built, at most MAX_PAGE_LINES lines;
- one Chart type (ui/views/figures.py) and one show_chart (ui/frame/charts.py); no page draws a chart itself;
- every lesson in the registry has its page, its view and its core module; every page is in the navigation;
- classroom/ (the database layer) imports no torch, no encoder_core and no UI;
- the class room's UI lives in ui/room/, not in ui/frame/, and names no lesson (each lesson registers its own
  room questions).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from encoder_core.lessons import LESSON_IDS

ROOT = Path(__file__).resolve().parents[1]
MAX_PAGE_LINES = 350


def python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, absolute, at any depth (function-level imports included)."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1]) if path.is_relative_to(ROOT) else ""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            # "from ui.frame import sections" imports the module ui.frame.sections
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize("path", python_files("encoder_core"), ids=lambda p: str(p.relative_to(ROOT)))
def test_encoder_core_imports_no_ui_library(path):
    assert not top_level(imported_modules(path)) & {"streamlit", "plotly", "pandas", "ui", "pages"}


@pytest.mark.parametrize("path", python_files("classroom"), ids=lambda p: str(p.relative_to(ROOT)))
def test_classroom_imports_no_model_and_no_ui(path):
    """At any depth, function-level imports included (tests/classroom/test_no_torch.py imports each module)."""
    assert not top_level(imported_modules(path)) & {"torch", "encoder_core", "streamlit", "plotly", "ui", "pages"}


def test_the_class_room_ui_lives_in_ui_room():
    assert not sorted((ROOT / "ui" / "frame").glob("*room*")), "the class room's UI lives in ui/room/"
    for path in python_files("ui/frame"):
        assert not {m for m in imported_modules(path) if m == "ui.room" or m.startswith("ui.room.")}, (
            f"{path.relative_to(ROOT)} imports the class room: the frame sits below it"
        )
    assert (ROOT / "ui" / "room" / "session.py").is_file() and (ROOT / "ui" / "room" / "registry.py").is_file()


def lesson_modules(lesson: str) -> set[str]:
    return {f"encoder_core.lessons.{lesson}", f"ui.questions.{lesson}", f"ui.views.{lesson}", f"pages.{lesson}"}


@pytest.mark.parametrize("path", python_files("ui/room"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_class_room_names_no_lesson(path):
    """A lesson registers its own room questions (ui/room/registry.py), so no room file imports a lesson."""
    imported = imported_modules(path)
    for lesson in LESSON_IDS:
        named = {m for m in imported if any(m == x or m.startswith(x + ".") for x in lesson_modules(lesson))}
        assert not named, f"{path.relative_to(ROOT)} imports {sorted(named)}: let the lesson register it"


def test_the_lesson_rule_can_fail(tmp_path):
    bad = tmp_path / "sources.py"
    bad.write_text("from encoder_core.lessons import attention as core\nfrom ui.views.padding import leak\n")
    imported = imported_modules(bad)
    assert "encoder_core.lessons.attention" in imported and "ui.views.padding.leak" in imported


@pytest.mark.parametrize("path", python_files("ui/views"), ids=lambda p: str(p.relative_to(ROOT)))
def test_views_are_pure(path):
    assert "streamlit" not in top_level(imported_modules(path))


PAGES = sorted((ROOT / "pages").glob("*.py"))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_a_page_holds_no_maths_and_no_tables(path):
    source = path.read_text(encoding="utf-8")
    assert not top_level(imported_modules(path)) & {"torch", "pandas", "numpy"}, f"{path.name} imports maths"
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "DataFrame":
            pytest.fail(f"{path.name}:{node.lineno} builds a DataFrame; build it in its ui/views module")
    assert len(source.splitlines()) <= MAX_PAGE_LINES, f"{path.name} has {len(source.splitlines())} lines"


def test_the_page_rule_can_fail(tmp_path):
    page = tmp_path / "bad.py"
    page.write_text("import pandas as pd\ntable = pd.DataFrame({'a': [1]})\n")
    assert "pandas" in top_level(imported_modules(page))
    calls = [n for n in ast.walk(ast.parse(page.read_text())) if isinstance(n, ast.Call)]
    assert any(getattr(c.func, "attr", "") == "DataFrame" for c in calls)


def repository_files() -> list[Path]:
    """Every Python file of the project, tests included (hidden folders such as .venv left out)."""
    paths = sorted(ROOT.rglob("*.py"))
    return [p for p in paths if not any(part.startswith(".") for part in p.relative_to(ROOT).parts)]


def definitions(path: Path, name: str) -> list[int]:
    """The lines where a file defines name: a class, a function or an assignment to it, at any depth."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            lines.append(node.lineno)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            lines += [node.lineno for t in targets if isinstance(t, ast.Name) and t.id == name]
    return lines


def defined_in(name: str, files: list[Path]) -> list[str]:
    """Each file that defines name, once per definition."""
    return [str(path.relative_to(ROOT)) for path in files for _ in definitions(path, name)]


def chart_drawing_calls(path: Path) -> list[int]:
    """The lines where a file calls some_container.plotly_chart(...) itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "plotly_chart"
    ]


def test_one_chart_type_and_one_way_to_show_it():
    files = repository_files()
    assert defined_in("Chart", files) == ["ui/views/figures.py"]
    assert defined_in("show_chart", files) == ["ui/frame/charts.py"]
    assert defined_in("show_figure", files) == [], "show_figure is gone: show a Chart with show_chart"


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_a_page_draws_no_chart_itself(path):
    assert not chart_drawing_calls(path), f"{path.name} calls plotly_chart: hand a Chart to ui.frame.charts"


def test_the_chart_rules_can_fail(tmp_path):
    copy = tmp_path / "outputs.py"
    copy.write_text(
        "from dataclasses import dataclass\n@dataclass\nclass Chart:\n    alt: str\n"
        "def show_chart(key, chart):\n    pass\nplaceholder.plotly_chart(fig, key='live')\n"
    )
    assert definitions(copy, "Chart") == [3] and definitions(copy, "show_chart") == [5]
    assert chart_drawing_calls(copy) == [7]


def ui_import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in python_files("ui")}
    return {name: {m for m in imported_modules(path) if m in modules and m != name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle in a directed graph as a list of nodes, or None (depth-first search with colours)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_ui_has_no_import_cycle():
    graph = ui_import_graph()
    assert "ui.frame.sections" in graph and "ui.frame.charts" in graph["ui.frame.sections"]
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_every_lesson_has_its_three_layers(lesson):
    assert (ROOT / f"pages/{lesson}.py").is_file(), f"{lesson} has no page"
    for layer in (f"ui/views/{lesson}", f"encoder_core/lessons/{lesson}"):
        # a module, or a package of one module per section once the lesson outgrows one file
        module, package = ROOT / f"{layer}.py", ROOT / layer / "__init__.py"
        assert module.is_file() != package.is_file(), f"{lesson} needs exactly one of {layer}.py, {layer}/"


def test_every_page_file_is_in_the_navigation():
    assert {p.stem for p in PAGES} == {"home", "quiz", "progress", "room", "deck", *LESSON_IDS}


def test_every_lesson_has_a_navigation_icon():
    from ui.frame.shell import LESSON_ICONS

    assert set(LESSON_ICONS) == set(LESSON_IDS)


MAX_TOP_LEVEL_CORE_MODULES = 10
MIRRORED = {"lessons", "quiz"}  # one module per lesson in each: the same file names by design


def test_encoder_core_is_grouped_by_role():
    """encoder_core's modules live in subpackages by role (model, objectives, data, training, ...):
    few at the top, and outside lessons/ and quiz/ no two share a file name."""
    top = sorted(p.name for p in (ROOT / "encoder_core").glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_CORE_MODULES, top
    seen: dict[str, Path] = {}
    for path in python_files("encoder_core"):
        rel = path.relative_to(ROOT / "encoder_core")
        if path.name == "__init__.py" or rel.parts[0] in MIRRORED:
            continue
        assert path.name not in seen, f"{rel} and {seen[path.name]} share a file name"
        seen[path.name] = rel
    lesson_names = {p.name for folder in MIRRORED for p in (ROOT / "encoder_core" / folder).glob("*.py")}
    assert not set(seen) & lesson_names, f"named like a lesson module: {sorted(set(seen) & lesson_names)}"


def lesson_param_names(source: str) -> list[str]:
    """The names of the Params a page declares inside its LessonParams(...) call."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LessonParams":
            return [
                arg.args[0].value
                for arg in node.args
                if isinstance(arg, ast.Call) and getattr(arg.func, "id", None) == "Param" and arg.args
                if isinstance(arg.args[0], ast.Constant)
            ]
    return []


@pytest.mark.parametrize("lesson", LESSON_IDS)
def test_a_lessons_controls_are_declared_once_and_read_through_their_param(lesson):
    """Each lesson declares its controls in one LessonParams named after it (keys "<lesson>.<name>"), and
    never writes one of their names again as a widget key or a session-state string."""
    source = (ROOT / "pages" / f"{lesson}.py").read_text(encoding="utf-8")
    assert f'LessonParams(\n    "{lesson}",' in source or f'LessonParams("{lesson}",' in source
    for name in lesson_param_names(source):
        for written in (f'key="{name}"', f'session_state["{name}"]', f'session_state.get("{name}"'):
            assert written not in source, f"pages/{lesson}.py writes {written}: use P.{name}"


MIRRORED_TEST_FOLDERS = ("encoder_core", "ui", "classroom", "pages", "scripts")


def test_the_tests_mirror_the_tree():
    """A test folder below tests/ names a folder of the project (tests/encoder_core/model/ tests
    encoder_core/model/), so the tests of a module are found where the module is."""
    for folder in sorted(p for p in (ROOT / "tests").rglob("*") if p.is_dir()):
        rel = folder.relative_to(ROOT / "tests")
        if rel.parts[0] in ("browser", "fixtures", "__pycache__") or "__pycache__" in rel.parts:
            continue
        assert rel.parts[0] in MIRRORED_TEST_FOLDERS and (ROOT / rel).is_dir(), f"tests/{rel} mirrors nothing"
