"""ACP's `mcpServers` of session/new, load and resume as server configs (stdio, http, sse; `acp` is refused)."""

from __future__ import annotations

import re
from typing import Any

from sidecar.mcp.config import ServerConfig

ORIGIN = "from the ACP client"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def _pairs(items: Any) -> tuple[tuple[str, str], ...]:
    return tuple((item.name, item.value) for item in items or [])


def from_acp(servers: list[Any] | None) -> tuple[dict[str, ServerConfig], list[str]]:
    """Configs by name (a name is made tool-safe: other characters become `_`), and problems in words."""
    configs: dict[str, ServerConfig] = {}
    problems: list[str] = []
    for server in servers or []:
        name = _INVALID.sub("_", server.name)[:64] or "server"
        kind = getattr(server, "type", None)
        if name in configs:
            problems.append(f"MCP server {server.name!r} ({ORIGIN}) is listed twice; the first is used.")
            continue
        if kind in ("http", "sse"):
            configs[name] = ServerConfig(name, kind, url=server.url, headers=_pairs(server.headers), origin=ORIGIN)
        elif kind is None and getattr(server, "command", None):
            configs[name] = ServerConfig(
                name, "stdio", command=server.command, args=tuple(server.args), env=_pairs(server.env), origin=ORIGIN
            )
        else:
            problems.append(f"MCP server {server.name!r} ({ORIGIN}): transport {kind!r} is not supported; skipped.")
    return configs, problems
