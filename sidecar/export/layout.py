"""The README's map of the code and its layer line, generated from the packages' docstrings and LAYERS."""

from __future__ import annotations

import ast
from pathlib import Path

__all__ = ["LAYERS", "OTHER_FOLDERS", "code_map", "layer_line", "readme_section"]

#: The folders of sidecar/ as layers, lowest first: a module imports only from its own folder or a lower layer
#: (tests/unit/test_architecture.py checks it).
LAYERS = [
    ["sidecar", "sidecar.protocol", "sidecar.logging_setup", "sidecar.allocator", "sidecar.private_files"],
    ["sidecar.core"],
    ["sidecar.config", "sidecar.tools", "sidecar.fakegemini"],
    ["sidecar.session", "sidecar.watcher", "sidecar.mcp"],
    ["sidecar.memory"],
    ["sidecar.gemini", "sidecar.hooks"],
    ["sidecar.compaction"],
    ["sidecar.recording"],
    ["sidecar.checkpoints"],
    ["sidecar.chat"],
    ["sidecar.window"],
    ["sidecar.app"],
    ["sidecar.rpc", "sidecar.acp"],
    ["sidecar.doctor"],  # checks what each front-end would do, so it reads both front-ends' settings code
    # export reads the contract and the settings (config/)
    ["sidecar.cli", "sidecar.demo", "sidecar.prefix_share", "sidecar.export"],
    ["sidecar.__main__"],
]

#: The folders outside sidecar/ (no docstring to read them from): what each holds. A test folder missing here
#: makes the README stale.
OTHER_FOLDERS = {
    "tests/unit/": "the pure tests, mirroring sidecar/ (unit/core, unit/recording, …); `make test-fast` runs them",
    "tests/service/": "the chat service, wired by build_services, against the fake Gemini over HTTP",
    "tests/e2e/": "the real server over stdio, driven by sidecar/rpc/client.py with real editors' capabilities",
    "tests/acp_agent/": "`sidecar acp` as a real process, driven by the ACP SDK's client and by acpx",
    "tests/mcp_client/": "real MCP servers (stdio, HTTP, SSE) started by the sidecar's MCP client",
    "tests/reliability/": "faults, fuzzing, load, the model as the attacker",
    "tests/parity/": "our core against Gemini CLI's own functions under node",
    "tests/fixtures/": "recorded capabilities, sessions and files the suites read",
    "editors/vscode/": "the VS Code extension (TypeScript)",
    "editors/nvim/": "the Neovim plugin (Lua)",
    "bench/": "benchmarks (speed and memory targets live here, never in tests)",
    "docs/": "architecture, protocol, settings, file formats, security",
}


def _summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.split("\n\n")[0].split())


def code_map(root: Path) -> str:
    """The layout: each package and top-level module of sidecar/ with its docstring, then the other folders."""
    package = root / "sidecar"
    entries: list[tuple[str, str]] = []
    for path in sorted(package.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            entries.append((f"{path.name}/", _summary(path / "__init__.py")))
        elif path.suffix == ".py" and path.name != "__init__.py":
            entries.append((path.name, _summary(path)))
    tests = {f"tests/{p.name}/" for p in (root / "tests").iterdir() if p.is_dir() and any(p.glob("*.py"))}
    missing = sorted(tests - set(OTHER_FOLDERS))
    if missing:
        raise ValueError(f"say what {', '.join(missing)} holds in OTHER_FOLDERS (sidecar/export/layout.py)")
    width = max(len(name) for name, _ in entries) + 2
    other = max(len(folder) for folder in OTHER_FOLDERS) + 2
    lines = ["sidecar/", *(f"  {name:<{width}}{what}" for name, what in entries)]
    lines += [f"{folder:<{other}}{what}" for folder, what in OTHER_FOLDERS.items()]
    return "\n".join(lines)


def layer_line() -> str:
    """The layers as one line of the README, lowest first."""

    def short(area: str) -> str:
        return area.removeprefix("sidecar.") if area != "sidecar" else "sidecar (its version)"

    return "Layers, lowest first: " + " → ".join(", ".join(f"`{short(a)}`" for a in layer) for layer in LAYERS) + "."


def readme_section(root: Path) -> str:
    """The README's generated section: the code map in a code block, then the layer line."""
    return f"```\n{code_map(root)}\n```\n\n{layer_line()}"
