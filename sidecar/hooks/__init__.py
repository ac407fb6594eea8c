"""Hooks: the user's commands run at points of a session (PreCompress, BeforeAgent, SessionStart; docs/hooks.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sidecar.hooks.approval import Ask, ProjectData
    from sidecar.hooks.service import HookService, SessionFile
    from sidecar.session import Session

__all__ = ["wire"]


def wire(
    session: Session,
    recording: SessionFile,
    inform: Callable[[str], None],
    ask: Ask | None,
    project: Callable[[], ProjectData],
    warn: Callable[[str], None] | None = None,
) -> HookService:
    """The hook service of `session`; a workspace file's hooks count once `ask` had the user approve them (None:
    they never count), remembered in `project`'s data."""
    from sidecar.hooks.approval import HookApproval
    from sidecar.hooks.service import HookService

    approval = HookApproval(session, ask, project) if ask is not None else None
    return HookService(session, recording, inform, approval, warn=warn)
