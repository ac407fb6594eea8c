"""MCP servers: their settings, processes, tools for the model and results, with the official `mcp` SDK."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.mcp.approval import Ask, ProjectData
    from sidecar.mcp.manager import McpManager

__all__ = ["wire"]


def wire(
    on_change: Callable[[], None] | None,
    inform: Callable[[str], None],
    ask: Ask | None = None,
    project: Callable[[], ProjectData] | None = None,
    project_root: Callable[[], str] | None = None,
    folders: Callable[[], Sequence[str]] | None = None,
) -> McpManager:
    """The MCP servers (none running until the settings are applied); `on_change` hears every status or tool
    list change, `inform` a server's failure in words; a workspace file's servers start once `ask` had the user
    approve their exact definition and the workspace files (under `folders`) that its command runs, remembered in
    `project`'s data (None: they never start, as in ACP)."""
    from sidecar.mcp.approval import McpApproval
    from sidecar.mcp.manager import McpManager

    approve = None
    if ask is not None and project is not None and project_root is not None:
        approve = McpApproval(ask, project, project_root, folders).approved
    return McpManager(on_change=on_change, inform=inform, approve=approve)
