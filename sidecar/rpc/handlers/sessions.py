"""Session handlers: new, list, resume, transcript, import and undoing a compaction."""

from __future__ import annotations

import asyncio
from typing import Any

from pygls.lsp.server import LanguageServer

from sidecar.chat.sessions import SessionService
from sidecar.protocol import methods
from sidecar.protocol.types import Empty, GetTranscriptParams, ImportParams, ResumeSessionParams
from sidecar.rpc.dispatch import request


def register(server: LanguageServer, sessions: SessionService) -> None:

    @request(server, methods.NEW_SESSION)
    async def new_session(_params: Empty) -> Any:
        return await sessions.new()

    @request(server, methods.LIST_SESSIONS)
    async def list_sessions(_params: Empty) -> Any:
        return sessions.list()

    @request(server, methods.RESUME_SESSION)
    async def resume_session(params: ResumeSessionParams) -> Any:
        return await sessions.resume(params.session_id)

    @request(server, methods.GET_TRANSCRIPT)
    async def get_transcript(params: GetTranscriptParams) -> Any:
        return sessions.transcript(params.session_id)

    @request(server, methods.IMPORT_SESSION)
    async def import_session(params: ImportParams) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, sessions.import_gemini, params.path)

    @request(server, methods.UNDO_COMPACTION)
    async def undo_compaction(_params: Empty) -> Any:
        return await sessions.undo_compaction()
