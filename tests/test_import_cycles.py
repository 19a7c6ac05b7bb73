"""No import cycle between the project's modules, read from the source with ast (nothing is imported).

The graph: a node per module of encoder_core/, ui/, pages/, classroom/, scripts/, benchmarks/ and
app.py (a package is its __init__.py); an edge from a module to each project module it imports.
`import a.b` and `from a.b import c` import a.b; `from a import b` imports the submodule a.b when there
is one, else a itself; relative imports are resolved against the importing module's package (one that
resolves to no module fails a test of its own). Importing a.b.c also runs the __init__.py of a and a.b
first, so those count too, except the packages that hold the importing module itself: they are
already being initialised when it runs (every package whose __init__.py re-exports its submodules
would otherwise form a cycle with each of them, which is how packages work and harmless).

Which imports count: the ones that run when a module is loaded, at module level, inside `if`, `try`
and class bodies alike, but not under `if TYPE_CHECKING:` (never run) and not inside a function or a
method. A cycle among load-time imports makes an import's result depend on which module happened to
load first: the later one finds the earlier half-initialised, without the names it wants. An import
inside a function runs only once the function is called, after both modules have loaded, so it cannot
cause that; it is how the project defers a dependency on purpose (MiniLM is optional; the quiz package
imports every generator, so a lesson module reads the quiz's parser inside its function).

Lazy imports are still checked, separately: a cycle that only an import inside a function closes is
a two-way dependency between modules (encoder_core.training.everyday_probes' main() imported
encoder_core.pretrained.minilm_mlm, which imported everyday_probes; the command line is in scripts/
now), and it becomes a load-time cycle the moment the import is moved to the top of the file. Each
such cycle must be in ACCEPTED_LAZY_CYCLES with its reason, so a new one fails and a gone one is
struck off the list.

A strongly connected component of more than one module is a cycle; the failure names one loop in it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("encoder_core", "ui", "pages", "classroom", "scripts", "benchmarks", "app.py")


def project_files(root: Path, scanned=SCANNED) -> list[Path]:
    files = []
    for name in scanned:
        path = root / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += [p for p in sorted(path.rglob("*.py")) if "__pycache__" not in p.parts]
    return files


def module_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(tree: ast.Module, lazy: bool) -> list[ast.Import | ast.ImportFrom]:
    """A file's imports that run when it loads, plus (lazy) the ones inside functions and methods;
    never the ones under `if TYPE_CHECKING:`."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            if lazy or not in_function:
                found.append(node)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            children: list[ast.AST] = list(node.orelse)
        else:
            children = list(ast.iter_child_nodes(node))
        inside = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in children:
            visit(child, inside)

    visit(tree, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def resolve(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    base = package.split(".") if package else []
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


def imported_project_modules(path: Path, root: Path, modules: set[str], lazy: bool = False) -> set[str]:
    """The project modules a file imports (see the module docstring for the rules)."""
    name = module_of(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in imports_of(ast.parse(path.read_text(encoding="utf-8")), lazy):
        if isinstance(node, ast.Import):
            targets |= {alias.name for alias in node.names if alias.name in modules}
            continue
        source = resolve(node, package)
        for alias in node.names:
            submodule = f"{source}.{alias.name}" if source else alias.name
            if submodule in modules:
                targets.add(submodule)
            elif source in modules:
                targets.add(source)
    own = name.split(".")
    own_packages = {".".join(own[:i]) for i in range(1, len(own))}
    parents = set()
    for target in targets:  # a.b.c runs a/__init__.py and a/b/__init__.py first
        parts = target.split(".")
        parents |= {".".join(parts[:i]) for i in range(1, len(parts))}
    return (targets | (parents & modules) - own_packages) - {name}


def unresolved_relative_imports(root: Path = ROOT, scanned=SCANNED) -> list[str]:
    """Relative imports, at any depth, that name no module of the project: a typo, or a file moved."""
    files = {module_of(p, root): p for p in project_files(root, scanned)}
    missing = []
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level and resolve(node, package) not in files:
                missing.append(f"{path.relative_to(root)}:{node.lineno} imports {resolve(node, package)}")
    return missing


def import_graph(root: Path = ROOT, scanned=SCANNED, lazy: bool = False):
    """(module -> the project modules it imports, module -> its file); lazy: imports inside functions too."""
    files = {module_of(p, root): p for p in project_files(root, scanned)}
    modules = set(files)
    return {m: imported_project_modules(p, root, modules, lazy) for m, p in files.items()}, files


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; each component's modules sorted, components in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                components.append(sorted(component))
    return sorted(components)


def loop_in(component: list[str], graph: dict[str, set[str]]) -> list[str]:
    """One import loop through a component's first module: the shortest way back to it (breadth first)."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"{component} is not a cycle")


def cycle_components(root: Path = ROOT, scanned=SCANNED, lazy: bool = False) -> dict[frozenset[str], str]:
    """Each import cycle: its modules -> one loop through it as files, a -> b -> a."""
    graph, files = import_graph(root, scanned, lazy)
    found = {}
    for component in strongly_connected(graph):
        if len(component) > 1:
            loop = loop_in(component, graph)
            found[frozenset(component)] = " -> ".join(str(files[m].relative_to(root)) for m in loop)
    return found


def cycles(root: Path = ROOT, scanned=SCANNED, lazy: bool = False) -> list[str]:
    """Each import cycle as a readable loop of files and the modules it holds."""
    return [f"{loop}  (all of: {', '.join(sorted(c))})" for c, loop in cycle_components(root, scanned, lazy).items()]


# Cycles closed only by an import inside a function, kept on purpose: the modules of each, and why.
ACCEPTED_LAZY_CYCLES: dict[frozenset[str], str] = {}


def test_the_project_has_no_import_cycle():
    graph, _ = import_graph()
    # the scan reads the project, not nothing: a few edges it must see
    assert "encoder_core.lessons.block.walk" in graph["encoder_core.lessons.block"]
    assert "encoder_core.model.model" in graph["encoder_core.lessons.block.walk"]
    assert "encoder_core.model" in graph["encoder_core.lessons.block.walk"]  # its __init__ runs first
    assert "encoder_core.lessons" not in graph["encoder_core.lessons.block.walk"]  # its own package
    assert "ui.frame.sections" in graph["pages.block"]
    found = cycles()
    assert not found, "import cycles at load time:\n" + "\n".join(found)


def test_no_new_cycle_through_an_import_inside_a_function():
    found = cycle_components(lazy=True)
    graph, _ = import_graph(lazy=True)
    assert "encoder_core.pretrained.minilm" in graph["encoder_core.lessons.outputs.pooling"]  # lazy imports are read
    new = [f"{loop}  (all of: {', '.join(sorted(c))})" for c, loop in found.items() if c not in ACCEPTED_LAZY_CYCLES]
    assert not new, "import cycles through an import inside a function:\n" + "\n".join(new)
    gone = [sorted(c) for c in ACCEPTED_LAZY_CYCLES if c not in found]
    assert not gone, f"no longer a cycle, strike it off ACCEPTED_LAZY_CYCLES: {gone}"


def test_every_relative_import_names_a_module():
    assert unresolved_relative_imports() == []


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, source in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)


def test_a_cycle_is_found_and_named(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "from .a import run\n",
            "pkg/a.py": "from . import b\n\ndef run():\n    return b.VALUE\n",
            "pkg/b.py": "from pkg.c import helper\nVALUE = 1\n",
            "pkg/c.py": "import pkg.a\n\ndef helper():\n    pass\n",
            "pkg/d.py": "from .b import VALUE\n",
            "app.py": "import pkg\n",
        },
    )
    found = cycles(tmp_path, ("pkg", "app.py"))
    assert found == ["pkg/a.py -> pkg/b.py -> pkg/c.py -> pkg/a.py  (all of: pkg.a, pkg.b, pkg.c)"]


def test_a_tree_without_a_cycle_passes(tmp_path):
    write_tree(
        tmp_path,
        {
            "pkg/__init__.py": "from .a import run\nfrom .b import VALUE\n",
            "pkg/a.py": "from .b import VALUE\n\ndef run():\n    from . import d\n",
            "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import run\nVALUE = 1\n",
            "pkg/c.py": "from pkg import a\n",
            "pkg/d.py": "import json\n",
            "app.py": "import pkg.c\n",
        },
    )
    graph, _ = import_graph(tmp_path, ("pkg", "app.py"))
    assert graph == {
        "pkg": {"pkg.a", "pkg.b"},  # a package's __init__ importing its submodules is no cycle
        "pkg.a": {"pkg.b"},  # the import inside run() is not read at load time
        "pkg.b": set(),  # nor the one under TYPE_CHECKING
        "pkg.c": {"pkg.a"},  # from pkg import a: the submodule; pkg, its own package, is left out
        "pkg.d": set(),
        "app": {"pkg", "pkg.c"},  # import pkg.c runs pkg/__init__.py first
    }
    assert cycles(tmp_path, ("pkg", "app.py")) == []
    assert import_graph(tmp_path, ("pkg", "app.py"), lazy=True)[0]["pkg.a"] == {"pkg.b", "pkg.d"}
    assert cycles(tmp_path, ("pkg", "app.py"), lazy=True) == []


def test_importing_a_name_from_a_package_imports_its_init(tmp_path):
    """A submodule taking a name from its own package's __init__, which imports the submodule: a cycle."""
    write_tree(tmp_path, {"pkg/__init__.py": "from .a import f\nLIMIT = 3\n", "pkg/a.py": "from . import LIMIT\n"})
    assert cycles(tmp_path, ("pkg",)) == ["pkg/__init__.py -> pkg/a.py -> pkg/__init__.py  (all of: pkg, pkg.a)"]


def test_importing_a_submodule_runs_its_packages_init(tmp_path):
    """lib.tools imports core.helpers; core/__init__.py, run first, imports lib.tools: a cycle."""
    write_tree(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/tools.py": "from core.helpers import helper\n",
            "core/__init__.py": "from lib.tools import helper as tool\n",
            "core/helpers.py": "def helper():\n    pass\n",
        },
    )
    assert cycles(tmp_path, ("lib", "core")) == [
        "core/__init__.py -> lib/tools.py -> core/__init__.py  (all of: core, lib.tools)"
    ]


def test_imports_inside_try_and_if_count(tmp_path):
    write_tree(
        tmp_path,
        {
            "one.py": "try:\n    import two\nexcept ImportError:\n    two = None\n",
            "two.py": "import sys\nif sys.platform:\n    from one import x\n",
        },
    )
    assert len(cycles(tmp_path, ("one.py", "two.py"))) == 1


def test_an_import_inside_a_function_closes_a_lazy_cycle(tmp_path):
    """The shape of the cycle the project had: a library module importing a tool's module at load time,
    the tool's main() importing the library inside the function."""
    write_tree(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/train.py": "from .probes import PROBES\n",
            "lib/probes.py": "PROBES = ()\n\ndef main():\n    from .train import run\n    run()\n",
        },
    )
    assert cycles(tmp_path, ("lib",)) == []
    assert cycles(tmp_path, ("lib",), lazy=True) == [
        "lib/probes.py -> lib/train.py -> lib/probes.py  (all of: lib.probes, lib.train)"
    ]


def test_a_relative_import_of_nothing_is_found(tmp_path):
    write_tree(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/sub/__init__.py": "", "pkg/sub/a.py": "def f():\n    from ..b import x\n"},
    )
    assert unresolved_relative_imports(tmp_path, ("pkg",)) == ["pkg/sub/a.py:2 imports pkg.b"]
    (tmp_path / "pkg" / "b.py").write_text("x = 1\n")
    assert unresolved_relative_imports(tmp_path, ("pkg",)) == []
