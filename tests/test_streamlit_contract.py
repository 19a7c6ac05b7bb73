"""The private pieces of Streamlit the app relies on, checked so that an upgrade that renames one fails here,
by name, instead of quietly breaking the app on the first visit after a restart.

PRIVATE lists every one: each import from a Streamlit module that is not its public API (streamlit itself,
streamlit.testing.v1, streamlit.components.v1, streamlit.column_config), each private attribute of the
streamlit module, and each attribute read from what a private function returns (ctx = get_script_run_ctx();
ctx.session_id). The source of app.py, pages/, ui/, scripts/ and benchmarks/ is read with ast: a private use
that is not listed fails, a listed one the app no longer uses fails, and each listed one must still exist in
the installed Streamlit.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import types
import typing
from pathlib import Path

import pytest

from ui.frame.shell import LEGACY_PAGES_FLAG

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("app.py", "pages", "ui", "scripts", "benchmarks")
PUBLIC_MODULES = {"streamlit", "streamlit.testing.v1", "streamlit.components.v1", "streamlit.column_config"}
CTX = "streamlit.runtime.scriptrunner_utils.script_run_context"

# name -> where the app uses it (one place is enough: the message of a failure says where to look)
PRIVATE = {
    # the script's run context: this browser session's id, and whether this run is a fragment's own
    "streamlit.runtime.scriptrunner.get_script_run_ctx": "ui/room/session.py client()",
    "streamlit.runtime.scriptrunner.get_script_run_ctx().session_id": "ui/room/session.py client()",
    f"{CTX}.get_script_run_ctx": "ui/frame/sections.py",
    f"{CTX}.get_script_run_ctx().fragment_ids_this_run": "ui/frame/sections.py",
    "streamlit.errors.StreamlitAPIException": "ui/frame/sections.py",
    # leaving the pages/-folder mode (ui/frame/shell.py, LEGACY_PAGES_FLAG, read with getattr)
    "streamlit.runtime.pages_manager.PagesManager": "ui/frame/shell.py leave_legacy_pages_mode()",
    "streamlit.runtime.pages_manager.PagesManager.uses_pages_directory": "ui/frame/shell.py LEGACY_PAGES_FLAG",
    # the browser protocol, spoken by the scripts and benchmarks that play many browsers at once
    "streamlit.proto.BackMsg_pb2.BackMsg": "scripts/streamlit_protocol.py, benchmarks/room_votes.py",
    "streamlit.proto.ForwardMsg_pb2.ForwardMsg": "scripts/streamlit_protocol.py, benchmarks/latency_breakdown.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState": "scripts/streamlit_protocol.py, benchmarks/hall_load.py",
    "streamlit.proto.BackMsg_pb2.BackMsg().rerun_script": "scripts/streamlit_protocol.py, benchmarks/room_votes.py",
    "streamlit.proto.BackMsg_pb2.BackMsg().SerializeToString": "scripts/streamlit_protocol.py",
    "streamlit.proto.ForwardMsg_pb2.ForwardMsg.FromString": "scripts/streamlit_protocol.py",
    "streamlit.proto.ForwardMsg_pb2.ForwardMsg.FINISHED_SUCCESSFULLY": "scripts/streamlit_protocol.py",
    "streamlit.proto.ForwardMsg_pb2.ForwardMsg.FINISHED_EARLY_FOR_RERUN": "scripts/streamlit_protocol.py",
    "streamlit.proto.ForwardMsg_pb2.ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().id": "scripts/streamlit_protocol.py, benchmarks/hall_load.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().WhichOneof": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().bool_value": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().int_value": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().double_value": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().double_array_value": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().string_value": "scripts/streamlit_protocol.py",
    "streamlit.proto.WidgetStates_pb2.WidgetState().trigger_value": "benchmarks/room_votes.py",
    # benchmarks/rerun_cost.py counts what a rerun sends, profiles the script's own thread, and gives the runner
    # and AppTest's pages manager one script cache (each script compiled once, as in a server)
    "streamlit.testing.v1.local_script_runner": "benchmarks/rerun_cost.py",
    "streamlit.testing.v1.local_script_runner.ScriptCache": "benchmarks/rerun_cost.py",
    "streamlit.testing.v1.app_test": "benchmarks/rerun_cost.py",
    "streamlit.testing.v1.app_test.ScriptCache": "benchmarks/rerun_cost.py",
    "streamlit.runtime.forward_msg_queue.ForwardMsgQueue": "benchmarks/rerun_cost.py",
    "streamlit.runtime.forward_msg_queue.ForwardMsgQueue.enqueue": "benchmarks/rerun_cost.py",
    "streamlit.runtime.scriptrunner.script_runner.ScriptRunner": "benchmarks/rerun_cost.py",
    "streamlit.runtime.scriptrunner.script_runner.ScriptRunner._run_script": "benchmarks/rerun_cost.py",
}


def scanned_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return [p for p in files if "__pycache__" not in p.parts]


def is_private_module(module: str) -> bool:
    return module.split(".")[0] == "streamlit" and module not in PUBLIC_MODULES


def private_uses(source: str) -> set[str]:
    """Every private Streamlit name a module's source uses (see the module's docstring)."""
    tree = ast.parse(source)
    streamlit_aliases: set[str] = set()  # names bound to the streamlit module itself
    bound: dict[str, str] = {}  # local name -> the private name it was imported as
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "streamlit":
                    streamlit_aliases.add(alias.asname or "streamlit")
                elif is_private_module(alias.name):
                    bound[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "streamlit":
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if node.module == "streamlit":  # from streamlit import runtime / _private
                    submodule = importlib.util.find_spec(full) if not alias.name.startswith("_") else None
                    if not (alias.name.startswith("_") or (submodule is not None and is_private_module(full))):
                        continue
                elif not is_private_module(node.module):
                    continue
                bound[alias.asname or alias.name] = full
    found = set(bound.values())
    results: dict[str, str] = {}  # a local name bound to what a private function returned -> "<function>()"
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Name) and func.id in bound:
                results |= {t.id: f"{bound[func.id]}()" for t in node.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id in streamlit_aliases and node.attr.startswith("_"):
            found.add(f"streamlit.{node.attr}")
        elif isinstance(owner, ast.Name) and owner.id in results:
            found.add(f"{results[owner.id]}.{node.attr}")
        elif isinstance(owner, ast.Name) and owner.id in bound:
            found.add(f"{bound[owner.id]}.{node.attr}")
        elif isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id in bound:
            found.add(f"{bound[owner.func.id]}().{node.attr}")
    return found


def used_by_the_app() -> dict[str, list[str]]:
    uses: dict[str, list[str]] = {}
    for path in scanned_files():
        for name in private_uses(path.read_text(encoding="utf-8")):
            uses.setdefault(name, []).append(str(path.relative_to(ROOT)))
    legacy = ".".join(LEGACY_PAGES_FLAG)  # read with getattr(PagesManager, LEGACY_PAGES_FLAG[2]): no ast trace
    uses.setdefault(legacy, []).append("ui/frame/shell.py")
    return uses


def test_every_private_name_the_app_uses_is_listed():
    uses = used_by_the_app()
    unlisted = {name: where for name, where in uses.items() if name not in PRIVATE}
    assert not unlisted, (
        f"The app uses private Streamlit names this test does not list: {unlisted}. Prefer a public API; "
        "if there is none, add the name to PRIVATE so an upgrade that removes it fails here."
    )
    stale = sorted(set(PRIVATE) - set(uses))
    assert not stale, f"PRIVATE lists names the app no longer uses: {stale}; take them out"


def resolve(name: str) -> object:
    """The object a dotted name points at: the longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(name)


def returned_class(function) -> type:
    """The class a function returns, from its annotation (X | None counts as X); a class makes itself."""
    if isinstance(function, type):
        return function
    hint = typing.get_type_hints(function)["return"]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        (hint,) = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return hint


def has_attribute(cls: type, attr: str) -> bool:
    """An attribute of the class, a dataclass field, or a protobuf message's field."""
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    descriptor = getattr(cls, "DESCRIPTOR", None)
    fields |= set(getattr(descriptor, "fields_by_name", {}))
    return attr in fields or hasattr(cls, attr)


@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_each_listed_private_name_still_exists(name):
    where = PRIVATE[name]
    if "()." in name:
        function_name, attr = name.split("().")
        cls = returned_class(resolve(function_name))
        assert has_attribute(cls, attr), (
            f"Streamlit's {function_name}() returns a {cls.__name__} without {attr} now: fix {where}."
        )
        return
    try:
        resolve(name)
    except (ImportError, AttributeError) as err:
        pytest.fail(f"Streamlit no longer has {name} ({err}): fix {where}.")


def test_the_scan_finds_private_imports_context_attributes_and_underscores():
    source = (
        "import streamlit as st\n"
        "import streamlit.web.server\n"
        "from streamlit import runtime, column_config\n"
        "from streamlit.testing.v1 import AppTest\n"
        "from streamlit.runtime.scriptrunner import get_script_run_ctx as grab\n"
        "def f():\n"
        "    ctx = grab()\n"
        "    st._main.text(ctx.session_id, grab().page_script_hash, st.context.url)\n"
        "    other = browser.new_context()\n"
        "    other.close()\n"
    )
    assert private_uses(source) == {
        "streamlit.web.server",
        "streamlit.runtime",
        "streamlit.runtime.scriptrunner.get_script_run_ctx",
        "streamlit.runtime.scriptrunner.get_script_run_ctx().session_id",
        "streamlit.runtime.scriptrunner.get_script_run_ctx().page_script_hash",
        "streamlit._main",
    }


def test_a_name_that_is_gone_is_reported():
    with pytest.raises((ImportError, AttributeError)):
        resolve("streamlit.runtime.scriptrunner.no_such_function")
    cls = returned_class(resolve(f"{CTX}.get_script_run_ctx"))
    assert has_attribute(cls, "session_id") and not has_attribute(cls, "no_such_field")
    message = returned_class(resolve("streamlit.proto.WidgetStates_pb2.WidgetState"))
    assert has_attribute(message, "bool_value") and not has_attribute(message, "no_such_field")


def test_the_legacy_pages_flag_still_exists():
    module_name, class_name, attribute = LEGACY_PAGES_FLAG
    owner = getattr(importlib.import_module(module_name), class_name)
    assert hasattr(owner, attribute), (
        f"Streamlit no longer has {module_name}.{class_name}.{attribute}: ui/frame/shell.leave_legacy_pages_mode "
        "cannot leave the pages/-folder mode any more. Find the new name in Streamlit's pages_manager.py."
    )


def test_streamlit_still_decides_it_from_a_pages_folder_beside_the_entry_script():
    """The flag is set from the folder's existence: if that rule changes, the workaround may not be needed."""
    from streamlit.runtime import pages_manager

    source = Path(pages_manager.__file__).read_text(encoding="utf-8")
    assert '"pages"' in source and LEGACY_PAGES_FLAG[2] in source
    assert (ROOT / "pages").is_dir() and (ROOT / "app.py").is_file()
