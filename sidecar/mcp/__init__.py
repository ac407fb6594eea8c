"""MCP servers: their settings, processes, tools for the model and results, with the official `mcp` SDK."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.mcp.manager import McpManager

__all__ = ["wire"]


def wire(on_change: Callable[[], None] | None, inform: Callable[[str], None]) -> McpManager:
    """The MCP servers (none running until the settings are applied); `on_change` hears every status or tool
    list change, `inform` a server's failure in words."""
    from sidecar.mcp.manager import McpManager

    return McpManager(on_change=on_change, inform=inform)
