"""The configured MCP servers: each started through the server's own McpManager (in parallel, each within its own
`timeout`), its tools listed or its failure named with the stderr tail and the next step; all stopped before return."""

from __future__ import annotations

import asyncio
import contextlib

from sidecar.config.workspace_file import read_workspace_settings
from sidecar.doctor.report import Check, Context
from sidecar.mcp.config import ServerConfig, parse_servers
from sidecar.mcp.manager import McpManager

#: Time allowed past the slowest server's own timeout for the SDK to notice it (the deadline is the server's).
GRACE_S = 5.0


def mcp_check(ctx: Context) -> list[Check]:
    servers, problems = parse_servers(ctx.settings.mcp_servers)
    fix = "correct the `mcpServers` entry named (docs/mcp.md)"
    checks = [Check("mcp", False, problem, fix) for problem in problems]
    for name in _untrusted_servers(ctx, servers):
        hint = (
            "trust the workspace in the editor to start it"
            if ctx.front_end == "editor"
            else "`sidecar acp` never starts a workspace file's servers: put it in your user settings file"
        )
        checks.append(Check(f"mcp {name}", True, "not started: untrusted workspace", hint))
    if servers:
        checks += asyncio.run(_probe(servers))
    return checks


def _untrusted_servers(ctx: Context, configured: dict[str, ServerConfig]) -> list[str]:
    """Servers the workspace file defines that stay off because the workspace is not trusted."""
    if ctx.front_end == "editor" and ctx.trusted:
        return []
    section, _ = read_workspace_settings([ctx.project], True)
    raw = section.get("mcpServers")
    if not isinstance(raw, dict):
        return []
    return sorted(str(name) for name in raw if name not in configured)


async def _probe(servers: dict[str, ServerConfig]) -> list[Check]:
    """Start every server at once, wait until none is still starting (each bounded by its own timeout), then stop
    them all: their process groups are gone when this returns."""
    changed = asyncio.Event()
    manager = McpManager(on_change=changed.set, inform=lambda _message: None)
    deadline = asyncio.get_running_loop().time() + max(s.timeout_s for s in servers.values()) + GRACE_S
    try:
        manager.configure(servers)
        while any(s.status == "starting" for s in manager.servers()):
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), timeout=min(left, 0.5))
        return [_check(manager, state.name, servers[state.name]) for state in manager.servers()]
    finally:
        await manager.aclose()


def _check(manager: McpManager, name: str, config: ServerConfig) -> Check:
    connection = manager.connection(name)
    assert connection is not None
    where = config.where()
    if connection.status == "ready":
        tools = ", ".join(t.name for t in connection.tools) or "no tools"
        return Check(f"mcp {name}", True, f"started ({where}); tools: {tools}")
    if connection.status == "starting":
        detail = f"{where}: still starting after its timeout of {config.timeout_s:g} s"
        return Check(f"mcp {name}", False, detail, _next_step(config, detail))
    error = connection.error or f"MCP server {name!r} ({where}) stopped ({connection.status})"
    return Check(f"mcp {name}", False, error, _next_step(config, error))


def _next_step(config: ServerConfig, error: str) -> str:
    if "cannot run" in error:
        return "install the command or give its full path in `command` (docs/mcp.md)"
    if "within" in error or "still starting" in error:
        return "check that it is an MCP server, or raise its `timeout` (milliseconds) if it starts slowly"
    if config.transport == "stdio":
        return (
            "run the command by hand to see why it stops (its stderr is above), fix it, or remove the server "
            "from `mcpServers`"
        )
    return "check that the server is up at that URL and the headers it needs are set"
