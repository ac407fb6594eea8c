"""The server's side of the conversation with the editor: notifications, progress, confirmations, applyEdit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from sidecar.tool_runner import Decision, decode_decision
from sidecar.tools.edits import ApplyEdit
from sidecar.wire import CompressedNotice, MessageDelta, RetryNotice, TokenUsage, to_wire

if TYPE_CHECKING:
    from sidecar.server import SidecarServer


class WorkDone:
    """A running work-done progress (a no-op when the client has no progress support)."""

    def __init__(self, server: SidecarServer, token: str | None) -> None:
        self._server = server
        self._token = token

    def report(self, message: str) -> None:
        if self._token is not None:
            self._server.work_done_progress.report(self._token, lsp.WorkDoneProgressReport(message=message))

    def end(self, message: str | None = None) -> None:
        if self._token is not None:
            self._server.work_done_progress.end(self._token, lsp.WorkDoneProgressEnd(message=message))
            self._token = None


class ToolHost:
    """The editor side of tool calls: visibility notifications, confirmations and workspace/applyEdit."""

    def __init__(self, server: SidecarServer) -> None:
        self._server = server

    def tool_call(self, notice: dict[str, Any]) -> None:
        self._server.protocol.notify("sidecar/toolCall", notice)

    async def confirm(self, request: dict[str, Any]) -> Decision:
        result = await self._server.protocol.send_request_async("sidecar/confirmToolCall", request)
        return decode_decision(result)

    def apply_edit(self) -> ApplyEdit | None:
        workspace = self._server.client_capabilities.workspace
        if workspace is None or not workspace.apply_edit:
            return None
        return self._apply

    async def _apply(self, edit: dict[str, Any]) -> tuple[bool, str | None]:
        protocol = self._server.protocol
        typed = protocol._converter.structure(edit, lsp.WorkspaceEdit)
        result = await self._server.workspace_apply_edit_async(
            lsp.ApplyWorkspaceEditParams(edit=typed, label="sidecar edit")
        )
        return bool(result.applied), result.failure_reason


class Notifier:
    def __init__(self, server: SidecarServer) -> None:
        self._server = server

    def message_delta(self, turn_id: str, text: str) -> None:
        self._server.protocol.notify("sidecar/messageDelta", to_wire(MessageDelta(turn_id=turn_id, text=text)))

    def token_usage(self, usage: TokenUsage) -> None:
        self._server.protocol.notify("sidecar/tokenUsage", to_wire(usage))

    def compressed(self, notice: CompressedNotice) -> None:
        self._server.protocol.notify("sidecar/compressed", to_wire(notice))

    def retry(self, notice: RetryNotice) -> None:
        self._server.protocol.notify("sidecar/retry", to_wire(notice))

    def error(self, message: str) -> None:
        self._server.show(lsp.MessageType.Error, f"Sidecar: {message}")

    def warning(self, message: str) -> None:
        self._server.show(lsp.MessageType.Warning, f"Sidecar: {message}")

    async def progress(self, title: str) -> WorkDone:
        return await self._server.start_progress(title)
