"""The live session's recording: creates the file on first use, maps compaction outcomes to records."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sidecar.core.history import Content
from sidecar.core.outcome import Outcome, Status
from sidecar.core.recording import FileChangeRecord, FilesRestoredRecord, ForkRecord, MessageKind, head_ids
from sidecar.core.todos import TodoItem
from sidecar.protocol.sessions import TranscriptEntry
from sidecar.recording.branches import Cut, inherit_copies
from sidecar.recording.reader import now_iso
from sidecar.recording.store import (
    LoadedSession,
    RecordingError,
    SessionInfo,
    SessionLocked,
    SessionNotFound,
    SessionStore,
    SessionWriter,
)
from sidecar.session import Session

log = logging.getLogger(__name__)


class Recorder:
    """Appends what happens in the current session to its JSONL file; a failure only turns recording off."""

    def __init__(self, session: Session, warn: Callable[[str], None], *, home: Path | None = None) -> None:
        """Sessions are recorded in the store of `session.project_root` under `home` (default: the data home)."""
        self._session = session
        self._home = home
        self._warn = warn
        self._writer: SessionWriter | None = None
        self._session_id: str | None = None
        self._current_store: SessionStore | None = None
        #: The id of the compaction recorded last (what the editor is told, to rate it).
        self.last_compaction_id: str | None = None

    def _store(self) -> SessionStore:
        """The store of the current project (the workspace folders are only known after `initialize`)."""
        root = self._session.project_root
        store = self._current_store
        if store is None or store.project_root != os.path.realpath(root):
            store = self._current_store = SessionStore(root, home=self._home)
        return store

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, session_id: str) -> None:
        """Switch to a new session; its file is created when the first record arrives."""
        self.close()
        self._session_id = session_id

    def resume(self, session_id: str) -> LoadedSession:
        """Load a recorded session and continue appending to it. Raises RecordingError (nothing changed).

        When another live process records it (another window), continue in a new branch of it instead: the
        returned session's id is then the branch's, and its `fork` names the parent."""
        store = self._store()
        loaded = store.load(session_id)
        self.close()
        try:
            writer = store.open_for_append(session_id, loaded, on_problem=self._problem)
        except SessionLocked:
            cut = Cut(session_id, loaded.valid_size, loaded.last_message_id)
            return self.branch(cut, reason="locked")
        self._session_id = session_id
        self._writer = writer
        for warning in loaded.warnings:
            self._warn(warning)
        return loaded

    def branch(self, cut: Cut, *, reason: str, before: str | None = None) -> LoadedSession:
        """Start a new session that continues from `cut` (a fork record, no copy) and make it the live one."""
        store = self._store()
        fork = ForkRecord(
            time=now_iso(),
            parent_session_id=cut.session_id,
            parent_size=cut.size,
            parent_message_id=cut.last_message_id,
            before_message_id=before,
            reason=reason,
        )
        branch_id = str(uuid.uuid4())
        writer = store.create(branch_id, model=self._session.settings.model, fork=fork)
        problem = writer.problem
        writer.close()
        if problem is not None:
            raise RecordingError(problem)
        inherit_copies(cut.copy_folder, store.path(branch_id))  # a cut in a deleted parent's copy: keep it too
        loaded = store.load(branch_id)
        self.close()
        self._session_id = branch_id
        self._writer = store.open_for_append(branch_id, loaded, on_problem=self._problem)
        return loaded

    def live_cut(self) -> Cut:
        """The fork point at the end of the live session (synced first). RecordingError when it has no file."""
        writer = self._writer
        if writer is None or writer.disabled:
            raise RecordingError(self.problem or "this session has nothing recorded yet")
        writer.sync()
        return Cut(writer.session_id, writer.size, writer.last_message_id)

    def reload(self) -> LoadedSession:
        assert self._session_id is not None
        return self._store().load(self._session_id)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    @property
    def store(self) -> SessionStore:
        return self._store()

    @property
    def path(self) -> Path | None:
        return None if self._session_id is None else self._store().path(self._session_id)

    def session_dir(self) -> Path:
        """The current session's data folder (tool outputs saved by compaction, …), created 0700."""
        assert self._session_id is not None, "start() or resume() first"
        return self._store().session_dir(self._session_id)

    @property
    def undoable(self) -> list[str]:
        return [] if self._writer is None else list(self._writer.undoable)

    @property
    def problem(self) -> str | None:
        return None if self._writer is None else self._writer.problem

    def _open(self) -> SessionWriter:
        if self._writer is None:
            assert self._session_id is not None, "start() or resume() first"
            self._writer = self._store().create(
                self._session_id, model=self._session.settings.model, on_problem=self._problem
            )
        return self._writer

    def _problem(self, text: str) -> None:
        log.warning("%s", text)
        self._warn(text)

    # -- records -------------------------------------------------------------------------------------
    def message(
        self,
        content: Content,
        kind: MessageKind,
        turn_id: str | None = None,
        shown: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Record a model-facing message; `shown`: the transcript's text when it is not the content's text."""
        return self._open().message(content, kind=kind, turn_id=turn_id, text=shown, meta=meta)

    def file_record(self, record: FileChangeRecord | FilesRestoredRecord) -> None:
        """A checkpoint record (docs/checkpoints.md); a files-restored one is fsynced at once."""
        writer = self._open()
        writer.append(record)
        if isinstance(record, FilesRestoredRecord):
            writer.sync()

    def note(self, kind: MessageKind, text: str, turn_id: str | None = None) -> None:
        """A display-only message (info, error): in the transcript, never sent to the model."""
        self._open().message(None, kind=kind, text=text, turn_id=turn_id)

    def note_meta(self, kind: MessageKind, text: str, meta: dict[str, Any]) -> None:
        """A display-only message with facts a resume reads back (e.g. the model the session switched to)."""
        self._open().message(None, kind=kind, text=text, meta=meta)

    def usage(
        self,
        prompt_tokens: int,
        source: str,
        message_id: str | None,
        raw: dict[str, Any] | None,
        paused_until: int | None = None,
        estimated: int | None = None,
    ) -> None:
        """A request's usage; `estimated`: what the sidecar estimated for that request before sending it."""
        self._open().usage(
            prompt_tokens,
            source,
            message_id=message_id or None,
            raw=raw,
            paused_until=paused_until,
            estimated=estimated,
        )

    def rewind(self, message_id: str, undoable: Sequence[str] | None = None) -> None:
        if message_id:
            self._open().rewind(message_id, undoable)

    def pin(self, text: str) -> str:
        pin_id = f"p{os.urandom(4).hex()}"
        self._open().pin(pin_id, text)
        return pin_id

    def unpin(self, pin_id: str) -> None:
        self._open().unpin(pin_id)

    def todos(self, items: list[TodoItem]) -> None:
        """The model's todo list changed (set by write_todos, or cleared by the user)."""
        self._open().todos(items)

    def rename(self, title: str) -> None:
        self._open().rename(title)

    @property
    def session_id(self) -> str | None:
        return self._session_id

    @property
    def recording(self) -> bool:
        """True when the live session's records reach its file (a writer is open and enabled)."""
        return self._writer is not None and not self._writer.disabled

    def sync(self) -> None:
        if self._writer is not None:
            self._writer.sync()

    def compaction(self, outcome: Outcome, ids: Sequence[str]) -> list[str] | None:
        """Record a compaction attempt; for a replaced history, return the message ids of the new one."""
        self.last_compaction_id = None
        if outcome.status is Status.NOOP:
            return None
        writer = self._open()
        replacements = {ids[i]: c for i, c in outcome.replacements.items() if ids[i]}
        if outcome.status is Status.CONTENT_TRUNCATED:
            self.last_compaction_id = writer.compaction(
                trigger=outcome.trigger,
                status=outcome.status.value,
                original_tokens=outcome.original,
                new_tokens=outcome.new,
                replacements=replacements,
            )
            return list(ids)
        if outcome.status is not Status.COMPRESSED or outcome.new_history is None:
            self.last_compaction_id = writer.compaction(
                trigger=outcome.trigger,
                status=outcome.status.value,
                original_tokens=outcome.original,
                new_tokens=outcome.new,
            )
            return None
        env, summary, ack = outcome.new_history[:3]
        kept_from = ids[outcome.kept_from] if outcome.kept_from is not None else None
        cid = writer.compaction(
            trigger=outcome.trigger,
            status=outcome.status.value,
            original_tokens=outcome.original,
            new_tokens=outcome.new,
            snapshot=outcome.snapshot,
            summary=summary,
            ack=ack,
            env=env,
            kept_from=kept_from or None,
            replacements=replacements,
            edited=outcome.edited,
        )
        self.last_compaction_id = cid
        kept = list(ids[outcome.kept_from :]) if outcome.kept_from is not None else []
        return [*head_ids(cid, True), *kept]

    def mask(self, replacements: dict[str, Content], masked_count: int, tokens_saved: int) -> None:
        """Record masked tool outputs by message id (items never recorded have no id and are left out)."""
        kept = {mid: c for mid, c in replacements.items() if mid}
        if kept:
            self._open().mask(kept, masked_count, tokens_saved)

    def undo(self, compaction_id: str) -> None:
        self._open().undo_compaction(compaction_id)

    def rate_compaction(self, compaction_id: str, rating: str, note: str | None) -> None:
        self._open().rate_compaction(compaction_id, rating, note)

    # -- reading ------------------------------------------------------------------------------------
    def sessions(self) -> list[SessionInfo]:
        return self._store().list()

    def transcript(self, session_id: str) -> list[TranscriptEntry]:
        store = self._store()
        if not store.path(session_id).exists():
            if session_id == self._session_id:
                return []
            raise SessionNotFound(f"No recorded session {session_id}.")
        return list(store.load(session_id, salvage=True).transcript)
