"""Checkpoints for both front-ends: taking them (the registry's FileWatch), listing them, previewing and restoring
the files of a rewind (sidecar/listCheckpoints, sidecar/previewRewind, sidecar/rewind restoreFiles)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from sidecar.checkpoints.capture import Checkpointer
from sidecar.checkpoints.prune import Pruner
from sidecar.checkpoints.restore import Restored, RestorePlan, editor_step, plan_restore, write_step
from sidecar.checkpoints.store import BlobStore, store_folder
from sidecar.core.checkpoints import rewind_targets, turn_files
from sidecar.core.recording import FilesRestoredRecord
from sidecar.core.words import counted
from sidecar.protocol import errors
from sidecar.protocol.sessions import (
    Checkpoint,
    CheckpointFile,
    FileProblem,
    ListCheckpointsResult,
    PreviewRewindResult,
    TranscriptMessage,
)
from sidecar.recording.branches import turn_start
from sidecar.recording.reader import now_iso
from sidecar.recording.recorder import Recorder
from sidecar.recording.store import LoadedSession, RecordingError
from sidecar.session import Session
from sidecar.tools.edits import ApplyEdit, EditorBuffers
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.safe_io import PLAN_SECONDS, off_loop

log = logging.getLogger(__name__)

#: Words of a user message shown in a picker.
FIRST_WORDS = 60


@dataclass
class FilesOutcome:
    """What a rewind did (or, previewed, would do) to the files."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[FileProblem] = field(default_factory=list)
    skipped: list[FileProblem] = field(default_factory=list)
    in_editor: int = 0
    #: The checkpointing setting is off: the sentence says that edits made meanwhile were not saved.
    off: bool = False

    def sentence(self, done: bool) -> str:
        """The files part of a rewind's message, in words."""
        off = (
            " Checkpointing is off (setting checkpointing): edits made while it is off are not saved and cannot be "
            "restored."
            if self.off
            else ""
        )
        if not (self.restored or self.removed or self.conflicts or self.skipped):
            return ("No file the agent changed needed restoring." if done else "No file needs restoring.") + off
        parts = []
        if self.restored:
            where = f" ({self.in_editor} in the editor, unsaved)" if self.in_editor else ""
            parts.append(f"{counted(len(self.restored), 'file')} {'restored' if done else 'to restore'}{where}")
        if self.removed:
            parts.append(f"{counted(len(self.removed), 'file')} the agent created {'removed' if done else 'to remove'}")
        if self.conflicts:
            left = "left as they are" if done else "would be left"
            parts.append(f"{len(self.conflicts)} changed since the agent's edit {left} (force overwrites them)")
        if self.skipped:
            parts.append(f"{len(self.skipped)} cannot be restored")
        return "Files: " + "; ".join(parts) + "." + off


class CheckpointService:
    """The live session's checkpoints (docs/checkpoints.md)."""

    def __init__(
        self,
        session: Session,
        recorder: Recorder,
        *,
        turn: Callable[[], str | None],
        workspace: Workspace | None = None,
        buffers: EditorBuffers | None = None,
        apply_edit: Callable[[], ApplyEdit | None] | None = None,
    ) -> None:
        self._session = session
        self._recorder = recorder
        self._workspace = workspace or Workspace(session.folders)
        self._buffers = buffers or EditorBuffers()
        self._apply_edit = apply_edit or (lambda: None)
        self.pruner = Pruner(session, recorder, self.blobs)
        self.checkpointer = Checkpointer(session, recorder, turn, self.blobs, self.pruner.wrote, self.pruner.admit)

    def blobs(self) -> BlobStore:
        """The current project's store (the workspace folders are only known after `initialize`)."""
        return BlobStore(store_folder(self._recorder.store.directory))

    # -- the methods ---------------------------------------------------------------------------------
    def list_checkpoints(self, session_id: str | None) -> ListCheckpointsResult:
        """sidecar/listCheckpoints: a session (default: the live one) by user message, with each turn's files."""
        recorder = self._recorder
        live = session_id is None or session_id == recorder.session_id
        try:
            if live and not recorder.recording:  # nothing recorded yet: no message to rewind to
                return self.list_of(None, recorder.session_id or "")
            if live:
                recorder.sync()
                loaded = recorder.reload()
            else:
                assert session_id is not None
                loaded = recorder.store.load(session_id)
        except (RecordingError, ValueError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot read session {session_id}: {exc}") from None
        return self.list_of(loaded, loaded.session_id)

    async def preview_rewind(self, message_id: str) -> PreviewRewindResult:
        """sidecar/previewRewind: what a rewind to `message_id` with restoreFiles would do now; nothing changes."""
        try:
            loaded, _first, entry = rewind_point(self._recorder, message_id)
            files = self.preview(await self.plan(loaded, message_id, force=False))
        except (RecordingError, ValueError, ToolError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rewind to {message_id}: {exc}") from None
        return PreviewRewindResult(
            message_id=message_id,
            text=entry.text,
            restored=files.restored,
            removed=files.removed,
            conflicts=files.conflicts,
            skipped=files.skipped,
            message=files.sentence(done=False),
        )

    # -- listing ------------------------------------------------------------------------------------
    def list_of(self, loaded: LoadedSession | None, session_id: str) -> ListCheckpointsResult:
        """Every user message of `loaded` that can be rewound to, oldest first, with the files its turn changed."""
        if loaded is None:
            return ListCheckpointsResult(
                session_id=session_id, checkpoints=[], checkpointing=self._session.settings.checkpointing
            )
        files = turn_files(loaded.file_records)
        checkpoints = [
            Checkpoint(
                message_id=entry.id,
                time=entry.time,
                first_words=first_words(entry.text),
                files=[
                    CheckpointFile(path=f.path, change=f.change, skipped=f.skipped) for f in files.get(entry.id, [])
                ],
            )
            for entry in loaded.transcript
            if isinstance(entry, TranscriptMessage) and entry.kind == "user" and not entry.rewound
        ]
        return ListCheckpointsResult(
            session_id=session_id, checkpoints=checkpoints, checkpointing=self._session.settings.checkpointing
        )

    # -- preview and restore ------------------------------------------------------------------------
    async def plan(self, loaded: LoadedSession, message_id: str, *, force: bool) -> RestorePlan:
        """What putting back the files changed from `message_id` on would do now (nothing is changed)."""
        position = loaded.position(message_id)
        if position is None:
            raise ValueError(f"message {message_id} is not in this session")
        targets = rewind_targets(loaded.file_records, position)
        open_files = {os.path.realpath(f.path) for f in self._session.ide.current or []}
        editor = self._apply_edit() is not None
        blobs, workspace, buffers = self.blobs(), self._workspace, self._buffers
        return await off_loop(
            lambda: plan_restore(targets, blobs, workspace, buffers, force=force, open_files=open_files, editor=editor),
            seconds=PLAN_SECONDS,
            what="Checking the files to restore",
        )

    def preview(self, plan: RestorePlan) -> FilesOutcome:
        """A plan's lists, as the answer of sidecar/previewRewind shows them."""
        off = not self._session.settings.checkpointing
        outcome = FilesOutcome(conflicts=plan.conflicts, skipped=plan.skipped, off=off)
        for step in plan.steps:
            (outcome.restored if step.data is not None else outcome.removed).append(step.path)
        outcome.in_editor = sum(1 for step in plan.steps if step.via_editor and step.data is not None)
        return outcome

    async def restore(self, plan: RestorePlan, to_id: str) -> FilesOutcome:
        """Carry out a plan (open files through the editor when it can apply edits, the rest on disk) and record
        what each file holds now."""
        done = Restored(skipped=list(plan.skipped))
        apply_edit = self._apply_edit()
        for step in plan.steps:
            if step.via_editor and apply_edit is not None and await editor_step(step, self._buffers, apply_edit):
                if step.data is None:
                    done.removed.append(step.path)
                else:
                    done.restored.append(step.path)
                    done.in_editor += 1
                done.now[step.path] = step.digest
                continue
            problem = await off_loop(
                lambda step=step: write_step(step, self._buffers),  # type: ignore[misc]
                seconds=PLAN_SECONDS,
                what=f"Restoring {step.path}",
            )
            if problem is not None:
                done.skipped.append(FileProblem(path=step.path, reason=problem))
                continue
            (done.restored if step.data is not None else done.removed).append(step.path)
            done.now[step.path] = step.digest
        if done.now:
            self._recorder.file_record(FilesRestoredRecord(time=now_iso(), to_id=to_id, files=done.now))
        off = not self._session.settings.checkpointing
        return FilesOutcome(done.restored, done.removed, plan.conflicts, done.skipped, done.in_editor, off)


def rewind_point(recorder: Recorder, message_id: str) -> tuple[LoadedSession, str, TranscriptMessage]:
    """What a rewind to user message `message_id` (and its preview) starts from: the live recording reloaded, the
    first entry of that message's turn, and the message. SidecarError when nothing is recorded; RecordingError or
    ValueError (the message is not in the session, or was already rewound) for the caller to word."""
    if not recorder.recording:
        reason = recorder.problem or "nothing has been recorded in this session yet"
        raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rewind: {reason}.")
    recorder.sync()
    loaded = recorder.reload()
    first, entry = turn_start(loaded.transcript, message_id)
    if entry.rewound:
        raise ValueError(f"message {message_id} was already rewound")
    return loaded, first, entry


def first_words(text: str) -> str:
    """A user message as a picker shows it: its first words, on one line."""
    words = " ".join(text.split())
    if len(words) <= FIRST_WORDS:
        return words
    cut = words.rfind(" ", 0, FIRST_WORDS)
    return words[: cut if cut > FIRST_WORDS // 2 else FIRST_WORDS] + "\u2026"
