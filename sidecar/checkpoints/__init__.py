"""Checkpoints: the files the agent changed, saved so a rewind can put them back (docs/checkpoints.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sidecar.checkpoints.service import CheckpointService
    from sidecar.recording.recorder import Recorder
    from sidecar.session import Session
    from sidecar.tools.edits import ApplyEdit, EditorBuffers
    from sidecar.tools.paths import Workspace

__all__ = ["wire"]


class EditorEdits(Protocol):
    """The front-end's way of applying edits (the tool host's): a rewind puts files back through the editor."""

    def apply_edit(self) -> ApplyEdit | None: ...


def wire(
    session: Session,
    recorder: Recorder,
    turn: Callable[[], str | None],
    workspace: Workspace,
    buffers: EditorBuffers,
    editor: EditorEdits | None,
) -> CheckpointService:
    """The checkpoints of `session`'s recording, each under the user message of the turn `turn` names (the live
    conversation's; None: no turn, nothing taken); a rewind restores through the workspace and buffers the agent's
    tools see, and through `editor` where it can apply edits (None: to disk)."""
    from sidecar.checkpoints.service import CheckpointService

    apply_edit: Callable[[], ApplyEdit | None] | None = editor.apply_edit if editor is not None else None
    return CheckpointService(session, recorder, turn=turn, workspace=workspace, buffers=buffers, apply_edit=apply_edit)
