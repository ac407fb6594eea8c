"""Wire types of the MCP methods: sidecar/listMcpServers, sidecar/restartMcpServer, sidecar/mcpStatus."""

from __future__ import annotations

from typing import Literal

import msgspec

McpServerStatus = Literal["starting", "ready", "failed", "disabled"]


class McpServerInfo(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """One configured MCP server: its status, the tool names the model sees, why it failed."""

    name: str
    status: McpServerStatus
    tools: list[str]
    error: str | None = None


class McpStatusParams(msgspec.Struct, rename="camel", kw_only=True):
    """Params of sidecar/mcpStatus: every server, sent whenever a status or a tool list changes."""

    servers: list[McpServerInfo]


class RestartMcpServerParams(msgspec.Struct, rename="camel", kw_only=True):
    name: str


class RestartMcpServerResult(msgspec.Struct, rename="camel", kw_only=True):
    """`restarted` is false when no server has that name."""

    restarted: bool
