"""What the model's own tools change: the memory files (save_memory) and the session's todo list (write_todos)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from sidecar.chat.live import LiveConversation
from sidecar.memory.service import MemoryService
from sidecar.protocol import errors
from sidecar.protocol.memory import AddMemoryScope
from sidecar.tools.paths import ToolError


class ModelState:
    """The registry's AgentState: save_memory writes through the memory service exactly as sidecar/addMemory does;
    write_todos sets the live conversation's todo list (reached late: the live conversation is built after the
    tools)."""

    def __init__(self, memory: MemoryService, live: Callable[[], LiveConversation]) -> None:
        self._memory = memory
        self._live = live

    def memory_file(self, scope: str) -> Path:
        """The file addMemory writes for `scope`; ToolError with the memory service's words when refused."""
        try:
            return self._memory.add_target(_scope(scope))
        except errors.SidecarError as exc:
            raise ToolError(exc.message) from None

    async def save_memory(self, fact: str, scope: str) -> Path:
        """sidecar/addMemory's own write (the line, the section, the refresh); the file written."""
        target = self.memory_file(scope)
        try:
            await self._memory.add(fact, _scope(scope))
        except errors.SidecarError as exc:
            raise ToolError(exc.message) from None
        return target

    def set_todos(self, items: list[Any]) -> None:
        """The live conversation's todo list, replaced."""
        self._live().set_todos(items)


def _scope(scope: str) -> AddMemoryScope:
    if scope not in ("global", "project"):
        raise ToolError(f"Unknown memory scope {scope!r}: global or project.")
    return scope  # type: ignore[return-value]
