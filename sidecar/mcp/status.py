"""The MCP servers' state on the wire: sidecar/listMcpServers rows and the sidecar/mcpStatus notification."""

from __future__ import annotations

from sidecar.mcp.manager import McpManager
from sidecar.protocol.mcp import McpServerInfo, McpStatusParams
from sidecar.protocol.methods import MCP_STATUS

__all__ = ["MCP_STATUS", "mcp_status", "server_rows"]


def server_rows(manager: McpManager) -> list[McpServerInfo]:
    """The servers as the wire lists them (sidecar/listMcpServers)."""
    return [McpServerInfo(name=s.name, status=s.status, tools=s.tools, error=s.error) for s in manager.servers()]


def mcp_status(manager: McpManager) -> McpStatusParams:
    """The sidecar/mcpStatus notification for the servers as they are now."""
    return McpStatusParams(servers=server_rows(manager))
