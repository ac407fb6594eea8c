"""The package's shape, checked from the source: no import cycles, pygls only in rpc/, a pure core."""

from __future__ import annotations

import ast
import functools
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from sidecar.export.layout import LAYERS
from sidecar.protocol import error_info

PACKAGE = Path(__file__).resolve().parents[2] / "sidecar"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks (parsing is most of this file's time)."""
    return ast.parse(path.read_text(), str(path))


def _imports(name: str) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import in a module: top level, in functions and under TYPE_CHECKING."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield (submodule if submodule in MODULES else base), node.lineno


def _graph() -> dict[str, set[str]]:
    return {name: {m for m, _ in _imports(name) if m in MODULES and m != name} for name in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for node in sorted(graph):
            if node not in index:
                visit(node)
    finally:
        sys.setrecursionlimit(limit)
    return found


def _area(module: str) -> str:
    """The folder (or top-level module) a module belongs to: sidecar.chat.service -> sidecar.chat."""
    return ".".join(module.split(".")[:2])


def test_the_module_walk_sees_the_whole_package() -> None:
    assert {"sidecar.rpc.server", "sidecar.chat.service", "sidecar.core.history", "sidecar.session"} <= set(MODULES)
    assert "sidecar.app" in _graph()["sidecar.rpc.server"]


def test_no_import_cycles_between_modules() -> None:
    assert _cycles(_graph()) == []


def test_no_import_cycles_between_folders() -> None:
    """The folders form layers: e.g. chat/ uses compaction/, which never reaches back into chat/."""
    folders: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        folders.setdefault(_area(module), set()).update(_area(t) for t in targets if _area(t) != _area(module))
    folders.pop("sidecar", None)  # the package's __init__ (the version) is imported from everywhere
    for targets in folders.values():
        targets.discard("sidecar")
    assert _cycles(folders) == []


def test_folders_import_only_from_lower_layers() -> None:
    rank = {area: number for number, layer in enumerate(LAYERS) for area in layer}
    upward = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _area(target) != _area(module) and rank[_area(target)] >= rank[_area(module)]
    )
    assert upward == []


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("library", ["pygls", "lsprotocol"])
def test_only_rpc_imports_the_lsp_libraries(library: str) -> None:
    outside = [
        f"{name}:{line}"
        for name in MODULES
        if not name.startswith("sidecar.rpc.") and name != "sidecar.rpc"
        for imported, line in _imports(name)
        if imported == library or imported.startswith(library + ".")
    ]
    assert outside == []


def test_core_is_pure() -> None:
    """sidecar/core/: the standard library, msgspec and the wire types of sidecar.protocol only."""
    allowed = {"msgspec", "sidecar.core", "sidecar.protocol"}
    found = [
        f"{name}:{line} imports {imported}"
        for name in MODULES
        if name.startswith("sidecar.core")
        for imported, line in _imports(name)
        if imported.split(".")[0] not in sys.stdlib_module_names
        and not any(imported == a or imported.startswith(a + ".") for a in allowed)
    ]
    assert found == []


METHOD_NAME = re.compile(r"sidecar/[a-z][A-Za-z]+")
EDITORS = PACKAGE.parent / "editors"


def test_method_names_are_spelled_only_in_protocol() -> None:
    found = [
        f"{name}:{node.lineno} {node.value!r}"
        for name, path in MODULES.items()
        if not name.startswith("sidecar.protocol")
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and METHOD_NAME.fullmatch(node.value)
    ]
    assert found == []


@pytest.mark.parametrize(
    ("folder", "pattern", "generated"),
    [
        ("vscode/src", "*.ts", "protocol.ts"),
        ("nvim/lua/sidecar", "*.lua", "protocol.lua"),
    ],
)
def test_editors_use_only_the_generated_constants(folder: str, pattern: str, generated: str) -> None:
    """No method name or server error code spelled by hand in the editors' code (their tests may)."""
    codes = "|".join(str(-c.code) for c in error_info.CODES)
    literal = re.compile(rf"""['"`]sidecar/[a-z][A-Za-z]+['"`]|-({codes})\b""")
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted((EDITORS / folder).rglob(pattern))
        if path.name != generated
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if literal.search(line.split("--")[0] if pattern == "*.lua" else line.split("//")[0])
    ]
    assert found == []


def test_recording_does_not_import_compaction() -> None:
    """A compaction's Outcome and Status live in core/: recording/ writes them without reaching into compaction/."""
    found = [
        f"{name}:{line} imports {imported}"
        for name in MODULES
        if name.startswith("sidecar.recording")
        for imported, line in _imports(name)
        if imported.startswith("sidecar.compaction")
    ]
    assert found == []


#: The live conversation's state: owned by chat/live.py (LiveConversation), never reached through the chat service.
LIVE_STATE = {"lock", "compressing", "recorder", "conversation", "background", "session", "ide", "push_usage", "usage"}


def test_nothing_reaches_the_live_conversation_through_the_chat_service() -> None:
    """Checked in the package and in the benchmarks and service tests, which wire the services themselves."""
    others = [*(PACKAGE.parent / "bench").glob("*.py"), *(PACKAGE.parent / "tests" / "service").glob("*.py")]
    found = [
        f"{name}:{node.lineno} .chat.{node.attr}"
        for name, path in [*MODULES.items(), *((str(p), p) for p in others)]
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Attribute)
        and node.attr in LIVE_STATE
        and (
            (isinstance(node.value, ast.Attribute) and node.value.attr == "chat")
            or (isinstance(node.value, ast.Name) and node.value.id == "chat")
        )
    ]
    assert found == []


#: The composition code: the root and each feature package's wire(). It builds objects with what they need.
COMPOSITION = ["sidecar.app", "sidecar.checkpoints", "sidecar.hooks", "sidecar.mcp", "sidecar.memory"]


def _finished_after_construction(source: str, filename: str) -> list[str]:
    """Assignments to another object's attribute (`runner.context_files = …`) and `use_*` calls
    (`checkpoints.use_tools(…)`): an object finished after its construction, outside its own methods."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for part in ast.walk(target):
                own = isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self"
                if isinstance(part, ast.Attribute) and not own:
                    found.append(f"{filename}:{node.lineno} assigns {ast.unparse(part)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith("use_"):
            found.append(f"{filename}:{node.lineno} calls {ast.unparse(node.func)}")
    return found


def test_the_composition_code_finishes_no_object_after_construction() -> None:
    """Constructors take what they need; what starts work is Services.start(), which the front-end calls."""
    found = [f for name in COMPOSITION for f in _finished_after_construction(MODULES[name].read_text(), name)]
    assert found == []


def test_an_object_finished_after_construction_is_found() -> None:
    source = "def build(a, b):\n    runner = R(a)\n    runner.context_files = b\n    checkpoints.use_tools(a)\n"
    assert _finished_after_construction(source, "x") == [
        "x:3 assigns runner.context_files",
        "x:4 calls checkpoints.use_tools",
    ]


def test_every_feature_package_wires_itself_in_the_composition_root() -> None:
    """A feature package offers one wire(); the root calls each (a new feature is one more line there)."""
    root = MODULES["sidecar.app"].read_text()
    for name in COMPOSITION[1:]:
        tree = ast.parse(MODULES[name].read_text())
        assert [n.name for n in tree.body if isinstance(n, ast.FunctionDef)] == ["wire"], name
        assert f"{name.rpartition('.')[2]}.wire(" in root, name


def test_no_constructor_starts_the_recording() -> None:
    """Recording begins in Services.start(), after `initialize`: building the services records nothing."""
    found = [
        f"{name}:{node.lineno}"
        for name, path in MODULES.items()
        for function in ast.walk(ast.parse(path.read_text()))
        if isinstance(function, ast.FunctionDef) and function.name == "__init__"
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "start"
        and "recorder" in ast.unparse(node.func.value)
    ]
    assert found == []


def test_no_front_end_subclasses_the_tool_runner_or_the_registry() -> None:
    """Front-ends adapt tool calls through the ToolHost port (given each plan), never by overriding privates."""
    found = [
        f"{name}:{node.lineno} {node.name}"
        for name, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).rpartition(".")[2] in ("ToolRunner", "ToolRegistry") for base in node.bases)
    ]
    assert found == []
