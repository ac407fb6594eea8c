"""MCP handlers: sidecar/listMcpServers and sidecar/restartMcpServer."""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

from sidecar.mcp.manager import McpManager
from sidecar.mcp.status import server_rows
from sidecar.protocol import methods
from sidecar.protocol.mcp import McpServerInfo, RestartMcpServerParams, RestartMcpServerResult
from sidecar.protocol.types import Empty
from sidecar.rpc.dispatch import request


def register(server: LanguageServer, manager: McpManager) -> None:
    """Register the MCP methods on `server`, answered by `manager`."""

    @request(server, methods.LIST_MCP_SERVERS)
    async def list_mcp_servers(_params: Empty) -> list[McpServerInfo]:
        return server_rows(manager)

    @request(server, methods.RESTART_MCP_SERVER)
    async def restart_mcp_server(params: RestartMcpServerParams) -> RestartMcpServerResult:
        return RestartMcpServerResult(restarted=await manager.restart(params.name))
