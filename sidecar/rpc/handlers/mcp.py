"""MCP handlers: list, restart, enable and disable servers; list and expand their prompts."""

from __future__ import annotations

from pygls.lsp.server import LanguageServer

from sidecar.mcp.manager import McpManager
from sidecar.mcp.prompts import get_prompt, prompt_infos
from sidecar.mcp.status import server_rows
from sidecar.protocol import methods
from sidecar.protocol.mcp import (
    GetMcpPromptParams,
    GetMcpPromptResult,
    McpPromptInfo,
    McpServerInfo,
    RestartMcpServerParams,
    RestartMcpServerResult,
    SetMcpServerEnabledParams,
    SetMcpServerEnabledResult,
)
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

    @request(server, methods.SET_MCP_SERVER_ENABLED)
    async def set_mcp_server_enabled(params: SetMcpServerEnabledParams) -> SetMcpServerEnabledResult:
        return SetMcpServerEnabledResult(applied=await manager.set_enabled(params.name, params.enabled))

    @request(server, methods.LIST_MCP_PROMPTS)
    async def list_mcp_prompts(_params: Empty) -> list[McpPromptInfo]:
        return prompt_infos(manager)

    @request(server, methods.GET_MCP_PROMPT)
    async def get_mcp_prompt(params: GetMcpPromptParams) -> GetMcpPromptResult:
        return await get_prompt(manager, params)
