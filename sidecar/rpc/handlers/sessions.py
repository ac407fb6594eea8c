"""Session handlers: new, list, resume, transcript, import, undo; fork, rewind, rename, delete, pins and todos."""

from __future__ import annotations

import asyncio

from pygls.lsp.server import LanguageServer

from sidecar.chat.actions import SessionActions
from sidecar.chat.sessions import SessionService
from sidecar.protocol import methods
from sidecar.protocol.sessions import (
    ClearTodosResult,
    DeleteSessionResult,
    ForkSessionResult,
    GetTodosResult,
    GetTranscriptResult,
    ImportSessionResult,
    ListCheckpointsResult,
    ListDeletedSessionsResult,
    ListPinsResult,
    ListSessionsPage,
    NewSessionResult,
    PinResult,
    PreviewRewindResult,
    RenameSessionResult,
    RestoreSessionResult,
    ResumeSessionResult,
    RewindResult,
    SessionSummary,
    UndoCompactionResult,
    UnpinResult,
)
from sidecar.protocol.types import (
    Empty,
    ForkParams,
    GetTranscriptParams,
    ImportParams,
    ListCheckpointsParams,
    ListSessionsParams,
    PinParams,
    PreviewRewindParams,
    RenameParams,
    ResumeSessionParams,
    RewindParams,
    UnpinParams,
)
from sidecar.rpc.dispatch import request


def register(server: LanguageServer, sessions: SessionService, actions: SessionActions) -> None:
    """Register the session methods on `server`: history replacements, listing, pins, fork and rewind."""

    @request(server, methods.NEW_SESSION)
    async def new_session(_params: Empty) -> NewSessionResult:
        return await sessions.new()

    @request(server, methods.LIST_SESSIONS)
    async def list_sessions(params: ListSessionsParams) -> list[SessionSummary] | ListSessionsPage:
        return sessions.list(params)

    @request(server, methods.RESUME_SESSION)
    async def resume_session(params: ResumeSessionParams) -> ResumeSessionResult:
        return await sessions.resume(params.session_id)

    @request(server, methods.GET_TRANSCRIPT)
    async def get_transcript(params: GetTranscriptParams) -> GetTranscriptResult:
        return sessions.transcript(params.session_id)

    @request(server, methods.IMPORT_SESSION)
    async def import_session(params: ImportParams) -> ImportSessionResult:
        return await asyncio.get_running_loop().run_in_executor(None, sessions.import_gemini, params.path)

    @request(server, methods.UNDO_COMPACTION)
    async def undo_compaction(_params: Empty) -> UndoCompactionResult:
        return await sessions.undo_compaction()

    @request(server, methods.FORK_SESSION)
    async def fork_session(params: ForkParams) -> ForkSessionResult:
        return await actions.fork(params.session_id, params.before_message_id)

    @request(server, methods.REWIND)
    async def rewind(params: RewindParams) -> RewindResult:
        return await actions.rewind(params.message_id, restore_files=params.restore_files, force=params.force)

    @request(server, methods.PREVIEW_REWIND)
    async def preview_rewind(params: PreviewRewindParams) -> PreviewRewindResult:
        return await actions.checkpoints.preview_rewind(params.message_id)

    @request(server, methods.LIST_CHECKPOINTS)
    async def list_checkpoints(params: ListCheckpointsParams) -> ListCheckpointsResult:
        return actions.checkpoints.list_checkpoints(params.session_id)

    @request(server, methods.RENAME_SESSION)
    async def rename_session(params: RenameParams) -> RenameSessionResult:
        return await sessions.rename(params.session_id, params.title)

    @request(server, methods.DELETE_SESSION)
    async def delete_session(params: ResumeSessionParams) -> DeleteSessionResult:
        return sessions.delete(params.session_id)

    @request(server, methods.LIST_DELETED_SESSIONS)
    async def list_deleted_sessions(_params: Empty) -> ListDeletedSessionsResult:
        return sessions.list_deleted()

    @request(server, methods.RESTORE_SESSION)
    async def restore_session(params: ResumeSessionParams) -> RestoreSessionResult:
        return sessions.restore(params.session_id)

    @request(server, methods.PIN)
    async def pin(params: PinParams) -> PinResult:
        return actions.pin(params.text)

    @request(server, methods.UNPIN)
    async def unpin(params: UnpinParams) -> UnpinResult:
        return actions.unpin(params.pin_id)

    @request(server, methods.LIST_PINS)
    async def list_pins(_params: Empty) -> ListPinsResult:
        return actions.list_pins()

    @request(server, methods.GET_TODOS)
    async def get_todos(_params: Empty) -> GetTodosResult:
        return actions.todos()

    @request(server, methods.CLEAR_TODOS)
    async def clear_todos(_params: Empty) -> ClearTodosResult:
        return actions.clear_todos()
