"""MCP calls through the tool registry: the plan the user is asked about, when to ask, and the result for the model."""

from __future__ import annotations

import json
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from sidecar.core.compaction import format_truncated_tool_output
from sidecar.core.jsonlen import utf16_len
from sidecar.core.words import counted
from sidecar.mcp.manager import McpManager, McpTool
from sidecar.mcp.results import Converted
from sidecar.tools.registry import SaveOutput, ToolPlan, ToolResult


def server_key(server: str) -> str:
    """The "allow always" key for every tool of a server (Gemini CLI's policy pattern `mcp_<server>_*`)."""
    return f"mcp_{server}_*"


class McpTools:
    """The manager's tools as the registry's ExtraTools: `registry.extra = McpTools(manager)`."""

    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    def declarations(self) -> list[dict[str, Any]]:
        """The MCP tools' declarations, and read_mcp_resource when a server offers resources."""
        extra = [READ_RESOURCE] if self.manager.resources() else []
        return self.manager.declarations() + extra

    def plan(self, name: str, args: Any) -> ToolPlan | None:
        """The plan for an MCP tool call (None: not an MCP tool)."""
        if name == READ_RESOURCE["name"] and self.manager.resources():
            return plan_read(args)
        return plan_call(self.manager, name, args)

    async def run(self, plan: ToolPlan, threshold: int, save_output: SaveOutput) -> ToolResult:
        """Run a planned MCP call or resource read; the result cut to the tool-output threshold."""
        if plan.name == READ_RESOURCE["name"]:
            out = await self.manager.read_resource(plan.args["uri"], plan.args.get("server"))
            return _result(plan, out, threshold, save_output, f"Read {plan.args['uri']}")
        return await run_call(self.manager, plan, threshold, save_output)


#: Declared while a ready server lists resources (Gemini CLI's read_mcp_resource).
READ_RESOURCE: dict[str, Any] = {
    "name": "read_mcp_resource",
    "description": "Read a resource an MCP server offers, by its URI (the resources are listed in the result when "
    "the URI is unknown).",
    "parametersJsonSchema": {
        "type": "object",
        "properties": {
            "uri": {"type": "string", "description": "The resource's URI."},
            "server": {"type": "string", "description": "The MCP server (default: the one that lists the URI)."},
        },
        "required": ["uri"],
    },
}


def plan_read(args: Any) -> ToolPlan:
    """Reading a listed resource changes nothing: it runs without asking, as a file read does."""
    name = READ_RESOURCE["name"]
    uri = args.get("uri") if isinstance(args, dict) else None
    server = args.get("server") if isinstance(args, dict) else None
    if not isinstance(uri, str) or not uri or (server is not None and not isinstance(server, str)):
        error = f"Invalid arguments for {name}: 'uri' must be a non-empty string and 'server' a string."
        return ToolPlan(name, dict(args) if isinstance(args, dict) else {}, "mcp", f"{name} refused", error=error)
    clean = {"uri": uri, **({"server": server} if server else {})}
    return ToolPlan(name, clean, "mcp", f"Read MCP resource {uri}", confirm=lambda mode, allowed: False)


def plan_call(manager: McpManager, name: str, args: Any) -> ToolPlan | None:
    """A plan for an MCP tool (None: `name` is not one). The description names server, tool and all arguments."""
    entry = manager.tool(name)
    if entry is None:
        return None
    if args is not None and not isinstance(args, dict):
        error = f"Invalid arguments for {name}: they must be an object, got {type(args).__name__}."
        return ToolPlan(name, {}, "mcp", f"{name} with invalid arguments", error=error)
    clean = dict(args or {})
    shown = json.dumps(clean, ensure_ascii=False, sort_keys=True)
    description = f"MCP server {entry.server.name}: {entry.tool.name} {shown}"

    def confirm(mode: str, always_allowed: AbstractSet[str]) -> bool:
        return needs_confirmation(entry, name, mode, always_allowed)

    server = entry.server.name
    return ToolPlan(
        name,
        clean,
        "mcp",
        description,
        allow_key=name,
        payload=entry,
        server_key=server_key(server),
        server=server,
        confirm=confirm,
    )


def needs_confirmation(entry: McpTool, name: str, approval_mode: str, always_allowed: AbstractSet[str]) -> bool:
    """Ask in default and autoEdit unless the server is trusted (`trust: true`, never from a workspace file) or
    the user allowed the tool or its server always; in autoEdit a tool hinted read-only runs without asking."""
    if entry.server.trust or approval_mode == "yolo":
        return False
    if approval_mode == "autoEdit" and entry.tool.read_only:
        return False
    return name not in always_allowed and server_key(entry.server.name) not in always_allowed


async def run_call(
    manager: McpManager,
    plan: ToolPlan,
    threshold: int,
    save_output: SaveOutput,
) -> ToolResult:
    """Call the tool; a long text result is saved and shortened like a shell output (the tool-output budget)."""
    entry: McpTool = plan.payload
    out = await manager.call(plan.name, plan.args)
    return _result(plan, out, threshold, save_output, f"{entry.tool.name} on {entry.server.name}")


def _result(plan: ToolPlan, out: Converted, threshold: int, save_output: SaveOutput, label: str) -> ToolResult:
    text, saved = out.text, None
    if not out.error and utf16_len(text) > max(0, threshold):
        try:
            saved = Path(save_output(text, plan.name))
            where = str(saved)
        except Exception as exc:
            where = f"(the full output could not be saved: {exc})"
        text = format_truncated_tool_output(text, where, max(0, threshold))
    media = f", {counted(len(out.media), 'media part')}" if out.media else ""
    summary = f"{label} failed" if out.error else f"{label} done{media}"
    return ToolResult(not out.error, {"error" if out.error else "output": text}, summary, saved, media=out.media)
