"""Context-file memory (GEMINI.md, AGENTS.md): discovery, @path imports, the service, the session context turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.memory.service import MemoryService
    from sidecar.memory.session_context import SessionContext, SessionStartHook
    from sidecar.protocol.memory import MemoryInfo
    from sidecar.session import Session

__all__ = ["wire"]


def wire(
    session: Session,
    on_change: Callable[[MemoryInfo], None] | None,
    warn: Callable[[str], None] | None,
    session_start: SessionStartHook,
) -> tuple[MemoryService, SessionContext]:
    """The context files of `session` (`on_change` hears what loaded; `warn`, if given, is told in words about
    project files an untrusted workspace kept out) and the <session_context> turn built with them and
    `session_start`'s extra context."""
    from sidecar.memory.service import MemoryService
    from sidecar.memory.session_context import SessionContext

    memory = MemoryService(session, on_change, warn)
    return memory, SessionContext(session, memory, session_start)
