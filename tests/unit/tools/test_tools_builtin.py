"""A tool is one module under sidecar/tools/builtin/ and one line in BUILTIN; MCP tools join the same registry."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

from sidecar.tools import BUILTIN, DECLARATIONS, Tool, ToolPlan, ToolRegistry, ToolResult
from sidecar.tools.builtin import acp_kind
from sidecar.tools.registry import SaveOutput

BUILTIN_DIR = Path(__file__).resolve().parents[3] / "sidecar" / "tools" / "builtin"


def test_each_builtin_module_is_one_tool_named_like_it_and_listed() -> None:
    modules = sorted(p.stem for p in BUILTIN_DIR.glob("*.py") if p.stem != "__init__")
    assert modules == sorted(BUILTIN)
    for name in modules:
        tree = ast.parse((BUILTIN_DIR / f"{name}.py").read_text())
        tools = [
            node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef) and any("Tool" in ast.unparse(base) for base in node.bases)
        ]
        assert len(tools) == 1, (name, tools)
        tool = getattr(importlib.import_module(f"sidecar.tools.builtin.{name}"), tools[0])
        assert isinstance(BUILTIN[name], tool) and BUILTIN[name].name == name


def test_the_tools_facts_come_from_their_classes() -> None:
    assert list(DECLARATIONS) == list(BUILTIN)
    assert {n for n, t in BUILTIN.items() if t.trusted_only} == {"run_shell_command"}
    assert {n for n, t in BUILTIN.items() if t.kind == "edit"} == {"write_file", "replace", "save_memory"}
    assert {n for n, t in BUILTIN.items() if t.reads_buffer} == {"read_file", "write_file", "replace"}
    assert acp_kind("glob") == "search" and acp_kind("run_shell_command") == "execute" and acp_kind("x") == "other"


class Echo:
    """An MCP server's one tool, as sidecar/mcp/gate.py offers them."""

    def declarations(self) -> list[dict[str, Any]]:
        return [{"name": "echo", "description": "echo", "parametersJsonSchema": {"type": "object"}}]

    def plan(self, name: str, args: Any) -> ToolPlan | None:
        return ToolPlan(name, dict(args), "mcp", f"echo {args}", payload=args) if name == "echo" else None

    async def run(self, plan: ToolPlan, threshold: int, save_output: SaveOutput) -> ToolResult:
        return ToolResult(True, {"output": str(plan.payload)}, "echoed")


async def test_an_mcp_tool_joins_the_registry_through_the_tool_interface(tmp_path: Path) -> None:
    registry = ToolRegistry(
        [str(tmp_path)], save_output=lambda text, tool: tmp_path / "o", output_threshold=lambda: 100, extra=Echo()
    )
    tool = registry.tool("echo")
    assert isinstance(tool, Tool) and tool.kind == "mcp" and registry.tool("nothing") is None
    plan = tool.plan({"a": 1}, registry)
    assert (await tool.run(plan, registry, None)).response == {"output": "{'a': 1}"}
    assert (await registry.run(registry.plan("echo", {"a": 2}, trusted=True), apply_edit=None)).summary == "echoed"
