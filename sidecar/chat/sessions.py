"""Session operations for the editor: new, list, resume, transcript, rename, delete and undoing a compaction."""

from __future__ import annotations

from pathlib import Path

from sidecar.chat.live import LiveConversation
from sidecar.compaction.service import pause_after_undo
from sidecar.core.conversation import Conversation
from sidecar.core.recording import switched_model
from sidecar.core.words import counted
from sidecar.protocol import errors, methods
from sidecar.protocol.sessions import (
    DeletedSession,
    DeleteSessionResult,
    GetTranscriptResult,
    ImportSessionResult,
    ListDeletedSessionsResult,
    ListSessionsPage,
    NewSessionResult,
    RenameSessionResult,
    RestoreSessionResult,
    ResumeSessionResult,
    SessionSummary,
    UndoCompactionResult,
)
from sidecar.protocol.types import ListSessionsParams
from sidecar.recording.gemini_import import import_gemini_session
from sidecar.recording.reader import session_info
from sidecar.recording.search import page
from sidecar.recording.store import LoadedSession, RecordingError, SessionInfo, SessionLocked
from sidecar.recording.trash import KEEP_DAYS, delete, deleted, is_trashed, restore
from sidecar.session import new_session_id


class SessionService:
    """Wholesale history replacements go through here; each one makes the next turn send full IDE context."""

    def __init__(self, live: LiveConversation) -> None:
        self.live = live

    async def new(self) -> NewSessionResult:
        """Start a new, empty conversation (recorded as a new session); the old one stays recorded."""
        async with self.live.lock:
            self.live.switch(Conversation(new_session_id()))
            self.live.recorder.start(self.live.conversation.session_id)
            self.live.fresh_estimate("newSession")
        self.live.push_usage()
        return NewSessionResult(session_id=self.live.conversation.session_id)

    def list(self, params: ListSessionsParams | None = None) -> list[SessionSummary] | ListSessionsPage:
        """Newest first. With none of query/limit/cursor: the bare list (as clients before paging expect);
        with any of them: one page {sessions, nextCursor}."""
        infos = self.live.recorder.sessions()
        if params is None or not params.paged:
            return [_summary(info) for info in infos]
        try:
            found, next_cursor = page(infos, query=params.query, limit=params.limit, cursor=params.cursor)
        except ValueError as exc:
            raise errors.invalid_params(methods.LIST_SESSIONS.name, str(exc)) from None
        return ListSessionsPage(sessions=[_summary(info) for info in found], next_cursor=next_cursor)

    async def resume(self, session_id: str) -> ResumeSessionResult:
        """Continue a recorded session; one open in another window continues in a new branch of it."""
        async with self.live.lock:
            try:
                loaded = self.live.recorder.resume(session_id)
            except (RecordingError, ValueError) as exc:
                raise errors.SidecarError(errors.SESSION_ERROR, self._cannot_resume(session_id, exc)) from None
            self.live.switch(_conversation_of(loaded))
            self._resume_model(loaded)
            if loaded.last_usage is None:
                self.live.fresh_estimate("resume")
        self.live.push_usage()
        count = self.live.conversation.messages_shown()
        if loaded.session_id == session_id:
            return ResumeSessionResult(session_id=session_id, message_count=count)
        # it was open in another window: this one continues in a new branch of it
        title = f"\u201c{loaded.title}\u201d " if loaded.title else ""
        notice = (
            f"Session {title}({session_id[:8]}) is open in another window; continuing in a new branch "
            f"({loaded.session_id[:8]}). Both windows' messages are kept."
        )
        self.live.warn(notice)
        return ResumeSessionResult(
            session_id=loaded.session_id,
            message_count=count,
            forked=True,
            parent_session_id=session_id,
            message=notice,
        )

    def _resume_model(self, loaded: LoadedSession) -> None:
        """A session that switched models (sidecar/setModel) goes on with the model it switched to."""
        model = switched_model(loaded.replay.log) if loaded.replay is not None else None
        session = self.live.session
        if model is None or model == session.settings.model:
            return
        session.sources.overrides["model"] = model
        for problem in session.reload_settings():
            self.live.warn(problem)
        self.live.settings_changed()

    def _cannot_resume(self, session_id: str, exc: Exception) -> str:
        store = self.live.recorder.store
        if not isinstance(exc, SessionLocked) and is_trashed(store, session_id):
            return (
                f"Cannot resume session {session_id[:8]}: it was deleted. Restore it from the trash first (it is "
                f"kept there {KEEP_DAYS} days)."
            )
        return f"Cannot resume session {session_id}: {exc}"

    async def rename(self, session_id: str, title: str) -> RenameSessionResult:
        """Give a session a title (the live one, or a recorded one no other window holds)."""
        title = " ".join(title.split())
        if not title:
            raise errors.invalid_params(methods.RENAME_SESSION.name, "the title is empty")
        if len(title) > 200:
            too_long = f"a title has at most 200 characters ({len(title)})"
            raise errors.invalid_params(methods.RENAME_SESSION.name, too_long)
        recorder = self.live.recorder
        if session_id == self.live.conversation.session_id:
            recorder.rename(title)
            if recorder.problem:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rename the session: {recorder.problem}")
            return RenameSessionResult(session_id=session_id, title=title)
        store = recorder.store
        try:
            loaded = store.load(session_id)
            writer = store.open_for_append(session_id, loaded)
        except SessionLocked:
            raise errors.SidecarError(
                errors.SESSION_ERROR,
                f"Cannot rename session {session_id}: it is open in another window; rename it there.",
            ) from None
        except (RecordingError, ValueError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rename session {session_id}: {exc}") from None
        try:
            writer.rename(title)
        finally:
            writer.close()
        if writer.problem:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rename session {session_id}: {writer.problem}")
        return RenameSessionResult(session_id=session_id, title=title)

    def delete(self, session_id: str) -> DeleteSessionResult:
        """Move a session (never the live one) to the trash for 30 days."""
        if session_id == self.live.conversation.session_id:
            raise errors.SidecarError(
                errors.SESSION_ERROR,
                f"Session {session_id} is the live session and cannot be deleted; start a new session or resume "
                "another one first.",
            )
        try:
            store = self.live.recorder.store
            name = _named(session_info(store.path(session_id))) if store.path(session_id).exists() else session_id
            delete(store, session_id)
        except (RecordingError, ValueError, OSError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot delete session {session_id}: {exc}") from None
        message = f"Session {name} was moved to the trash; it can be restored for {KEEP_DAYS} days."
        return DeleteSessionResult(session_id=session_id, message=message)

    def list_deleted(self) -> ListDeletedSessionsResult:
        """The trash of this project (sidecar/listDeletedSessions)."""
        entries = [
            DeletedSession(
                session_id=info.session_id,
                title=info.title,
                deleted_at=_iso(when),
                last_updated=info.last_updated,
                message_count=info.message_count,
                parent_session_id=info.parent_session_id,
            )
            for info, when in deleted(self.live.recorder.store)
        ]
        return ListDeletedSessionsResult(sessions=entries, keep_days=KEEP_DAYS)

    def restore(self, session_id: str) -> RestoreSessionResult:
        """Bring a deleted session back (sidecar/restoreSession); it is listed again, not resumed."""
        store = self.live.recorder.store
        try:
            store.path(session_id)  # a session id (or its start), never a path: ValueError in words otherwise
            target = restore(store, session_id)
            info = session_info(target)
        except (RecordingError, ValueError, OSError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot restore session {session_id}: {exc}") from None
        return RestoreSessionResult(
            session_id=info.session_id, title=info.title, message=f"Session {_named(info)} was restored."
        )

    def import_gemini(self, path: str) -> ImportSessionResult:
        """A Gemini CLI session file (.json or .jsonl) becomes a new recorded session, ready to resume."""
        try:
            result = import_gemini_session(Path(path).expanduser(), self.live.recorder.store)
        except (RecordingError, OSError, ValueError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot import {path}: {exc}") from None
        return ImportSessionResult(
            session_id=result.session_id, message_count=result.messages, warnings=result.warnings
        )

    def transcript(self, session_id: str | None) -> GetTranscriptResult:
        """Every message ever recorded in a session (default: the live one), with compaction markers."""
        sid = session_id or self.live.conversation.session_id
        try:
            entries = self.live.recorder.transcript(sid)
        except (RecordingError, ValueError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot read session {sid}: {exc}") from None
        return GetTranscriptResult(session_id=sid, entries=entries)

    async def undo_compaction(self) -> UndoCompactionResult:
        """Restore the history from right before the latest compaction, plus everything said since."""
        recorder = self.live.recorder
        async with self.live.lock:
            undoable = recorder.undoable
            if not undoable:
                reason = recorder.problem or "there is no compaction to undo in this session"
                return UndoCompactionResult(restored=False, message=f"Nothing to undo: {reason}.")
            try:
                recorder.undo(undoable[-1])
                loaded = recorder.reload()
            except (RecordingError, ValueError) as exc:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot undo the compaction: {exc}") from None
            before = len(self.live.conversation)
            self.live.switch(_conversation_of(loaded))
            # the count recorded before the compaction is for a request that no longer matches this history
            self.live.fresh_estimate("undo")
            conv = self.live.conversation
            until = pause_after_undo(conv, self.live.session.settings)
            # recorded, so that a restart or resume keeps the pause (sidecar/core/replay.py: LastUsage)
            recorder.usage(conv.last_prompt_tokens, "estimate", conv.ids[-1] if conv.ids else None, None, until)
        self.live.push_usage()
        restored = len(self.live.conversation)
        return UndoCompactionResult(
            restored=True,
            message=f"Compaction undone: the history is back to {counted(restored, 'message')} (it had {before}). "
            f"Automatic compaction is paused until the conversation reaches {until:,} tokens, or until you compress.",
        )


def _summary(info: SessionInfo) -> SessionSummary:
    return SessionSummary(
        session_id=info.session_id,
        title=info.title,
        start_time=info.start_time,
        last_updated=info.last_updated,
        message_count=info.message_count,
        compaction_count=info.compaction_count,
        parent_session_id=info.parent_session_id,
    )


def conversation_of(loaded: LoadedSession) -> Conversation:
    """The live conversation of a loaded session: its history, pinned facts and last known usage."""
    return _conversation_of(loaded)


def _conversation_of(loaded: LoadedSession) -> Conversation:
    conv = Conversation.from_wire(loaded.session_id, loaded.history_wire, loaded.history_ids)
    conv.set_pins(loaded.pins)
    conv.set_todos(loaded.todos)
    usage = loaded.last_usage
    if usage is not None:
        conv.set_prompt_tokens(usage.prompt_token_count, "api" if usage.source == "api" else "estimate")
        if usage.paused_until is not None and usage.prompt_token_count < usage.paused_until:
            conv.auto_compaction_paused_until = usage.paused_until  # an undo's pause outlives a restart
    return conv


def _named(info: SessionInfo) -> str:
    """A session as users know it: its title in quotes and its first 8 id characters."""
    short = info.session_id[:8]
    return f"\u201c{info.title}\u201d ({short})" if info.title else short


def _iso(epoch: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
