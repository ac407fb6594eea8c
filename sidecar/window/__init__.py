"""What fills the context window (the breakdown by category), the model choice, and postponing a compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from sidecar.chat.service import ChatService
    from sidecar.gemini.client import ModelClient
    from sidecar.mcp.manager import McpManager
    from sidecar.memory.service import MemoryService
    from sidecar.window.service import ContextService

__all__ = ["wire"]


def wire(
    chat: ChatService,
    memory: MemoryService,
    mcp: McpManager | None,
    model: Callable[[], Awaitable[ModelClient]],
) -> ContextService:
    """The context service of `chat`'s live conversation: the breakdown reads its next request (with the context
    files of `memory` and the servers of `mcp`); the model list asks `model`'s backend."""
    from sidecar.window.service import ContextService

    return ContextService(chat, memory, mcp, model)
