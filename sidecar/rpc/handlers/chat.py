"""Chat handlers: sendMessage, getTokenUsage, compress (and its command), preview/apply/rate, ideContext."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pygls.lsp.server import LanguageServer

from sidecar.chat.compaction_control import CompactionControl
from sidecar.chat.live import LiveConversation
from sidecar.chat.service import ChatService
from sidecar.core.ide_context import decode_open_files, normalize
from sidecar.protocol import methods
from sidecar.protocol.compaction import (
    ApplyCompactionParams,
    ApplyCompactionResult,
    PreviewCompactionParams,
    PreviewCompactionResult,
    RateCompactionParams,
    RateCompactionResult,
)
from sidecar.protocol.ide import IdeContextParams
from sidecar.protocol.types import (
    CompressParams,
    CompressResult,
    Empty,
    SendMessageParams,
    SendMessageResult,
    TokenUsage,
    to_wire,
)
from sidecar.rpc.dispatch import notification, request
from sidecar.rpc.editor import start_progress


def register(
    server: LanguageServer,
    chat: ChatService,
    live: LiveConversation,
    *,
    trust_changed: Callable[[], None],
    compaction: CompactionControl,
) -> None:
    """Register the chat methods on `server`: turns and compactions go to `chat`, state reads to `live`."""

    @request(server, methods.SEND_MESSAGE)
    async def send_message(params: SendMessageParams) -> SendMessageResult:
        editor = live.ide.current  # before any await: the editor context this message was sent with
        work = await start_progress(server, methods.PROGRESS_TURN)
        try:
            return await chat.send_message(params.text, work, editor)
        finally:
            work.end()

    @request(server, methods.GET_TOKEN_USAGE)
    async def get_token_usage(_params: Empty) -> TokenUsage:
        return live.usage()

    @request(server, methods.COMPRESS)
    async def compress(params: CompressParams) -> CompressResult:
        return await compaction.compress(params.instructions, params.up_to_message_id)

    @request(server, methods.PREVIEW_COMPACTION)
    async def preview_compaction(params: PreviewCompactionParams) -> PreviewCompactionResult:
        return await compaction.preview(params.instructions, params.up_to_message_id)

    @request(server, methods.APPLY_COMPACTION)
    async def apply_compaction(params: ApplyCompactionParams) -> ApplyCompactionResult:
        return await compaction.apply(params.preview_id, params.snapshot)

    @request(server, methods.RATE_COMPACTION)
    async def rate_compaction(params: RateCompactionParams) -> RateCompactionResult:
        return compaction.rate(params.compaction_id, params.rating, params.note)

    @server.command(methods.COMPRESS_COMMAND)
    async def compress_command(*args: Any) -> Any:
        instructions = args[0] if args and isinstance(args[0], str) else None
        return to_wire(await chat.compress(instructions))

    @notification(server, methods.IDE_CONTEXT)
    def ide_context(params: IdeContextParams) -> None:
        if live.set_ide_context(normalize(decode_open_files(params.open_files)), params.is_trusted):
            trust_changed()  # workspace hooks follow the trust decision
