"""Session operations for the editor: new, list, resume, transcript and undoing a compaction."""

from __future__ import annotations

from pathlib import Path

from sidecar.chat.service import ChatService
from sidecar.core.conversation import Conversation
from sidecar.protocol import errors
from sidecar.protocol.sessions import (
    GetTranscriptResult,
    ImportSessionResult,
    NewSessionResult,
    ResumeSessionResult,
    SessionSummary,
    UndoCompactionResult,
)
from sidecar.recording.gemini_import import import_gemini_session
from sidecar.recording.store import LoadedSession, RecordingError
from sidecar.session import new_session_id


class SessionService:
    """Wholesale history replacements go through here; each one makes the next turn send full IDE context."""

    def __init__(self, chat: ChatService) -> None:
        self.chat = chat

    async def new(self) -> NewSessionResult:
        async with self.chat.lock:
            self._switch(Conversation(new_session_id()))
            self.chat.recorder.start(self.chat.conversation.session_id)
            self.chat.fresh_estimate("newSession")
        self.chat.push_usage()
        return NewSessionResult(session_id=self.chat.conversation.session_id)

    def list(self) -> list[SessionSummary]:
        return [
            SessionSummary(
                session_id=info.session_id,
                title=info.title,
                start_time=info.start_time,
                last_updated=info.last_updated,
                message_count=info.message_count,
                compaction_count=info.compaction_count,
            )
            for info in self.chat.recorder.sessions()
        ]

    async def resume(self, session_id: str) -> ResumeSessionResult:
        async with self.chat.lock:
            try:
                loaded = self.chat.recorder.resume(session_id)
            except (RecordingError, ValueError) as exc:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot resume session {session_id}: {exc}") from None
            self._switch(_conversation_of(loaded))
            if loaded.last_usage is None:
                self.chat.fresh_estimate("resume")
        self.chat.push_usage()
        return ResumeSessionResult(session_id=session_id, message_count=len(self.chat.conversation))

    def import_gemini(self, path: str) -> ImportSessionResult:
        """A Gemini CLI session file (.json or .jsonl) becomes a new recorded session, ready to resume."""
        try:
            result = import_gemini_session(Path(path).expanduser(), self.chat.recorder.store)
        except (RecordingError, OSError, ValueError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot import {path}: {exc}") from None
        return ImportSessionResult(
            session_id=result.session_id, message_count=result.messages, warnings=result.warnings
        )

    def transcript(self, session_id: str | None) -> GetTranscriptResult:
        sid = session_id or self.chat.conversation.session_id
        try:
            entries = self.chat.recorder.transcript(sid)
        except (RecordingError, ValueError) as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot read session {sid}: {exc}") from None
        return GetTranscriptResult(session_id=sid, entries=entries)

    async def undo_compaction(self) -> UndoCompactionResult:
        """Restore the history from right before the latest compaction, plus everything said since."""
        recorder = self.chat.recorder
        async with self.chat.lock:
            undoable = recorder.undoable
            if not undoable:
                reason = recorder.problem or "there is no compaction to undo in this session"
                return UndoCompactionResult(restored=False, message=f"Nothing to undo: {reason}.")
            try:
                recorder.undo(undoable[-1])
                loaded = recorder.reload()
            except (RecordingError, ValueError) as exc:
                raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot undo the compaction: {exc}") from None
            before = len(self.chat.conversation)
            self._switch(_conversation_of(loaded))
            # the count recorded before the compaction is for a request that no longer matches this history
            self.chat.fresh_estimate("undo")
        self.chat.push_usage()
        restored = len(self.chat.conversation)
        return UndoCompactionResult(
            restored=True,
            message=f"Compaction undone: the history is back to {restored} messages (it had {before}).",
        )

    def _switch(self, conversation: Conversation) -> None:
        self.chat.session.switch(conversation)


def _conversation_of(loaded: LoadedSession) -> Conversation:
    conv = Conversation.from_wire(loaded.session_id, loaded.history_wire, loaded.history_ids)
    usage = loaded.last_usage
    if usage is not None:
        conv.set_prompt_tokens(usage.prompt_token_count, "api" if usage.source == "api" else "estimate")
    return conv
