"""The server's side of the conversation with the editor: notifications, progress, confirmations, applyEdit."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from sidecar.chat.tool_runner import decode_decision
from sidecar.core.visible_text import visible
from sidecar.protocol import methods
from sidecar.protocol.tools import ConfirmToolCallParams, ToolCallParams, ToolDecision
from sidecar.protocol.types import (
    CompressedParams,
    MessageDeltaParams,
    RetryParams,
    TokenUsage,
    ToolOutputsMaskedParams,
    to_wire,
)
from sidecar.rpc.transport import SidecarProtocol
from sidecar.tools import ToolPlan, ToolResult
from sidecar.tools.edits import ApplyEdit

log = logging.getLogger(__name__)


class WorkDone:
    """A running work-done progress (a no-op when the client has no progress support)."""

    def __init__(self, server: LanguageServer, token: str | None) -> None:
        self._server = server
        self._token = token

    def report(self, message: str) -> None:
        """Show a step of the work in the editor's progress."""
        if self._token is not None:
            self._server.work_done_progress.report(self._token, lsp.WorkDoneProgressReport(message=message))

    def end(self, message: str | None = None) -> None:
        """End the progress (once), with an optional final message."""
        if self._token is not None:
            self._server.work_done_progress.end(self._token, lsp.WorkDoneProgressEnd(message=message))
            self._token = None


async def start_progress(server: LanguageServer, title: str) -> WorkDone:
    """A cancellable work-done progress titled `title`, when the client supports them."""
    window = server.client_capabilities.window if server.protocol.client_capabilities else None
    if window is None or not window.work_done_progress:
        return WorkDone(server, None)
    token = f"sidecar-{uuid.uuid4().hex[:12]}"
    try:
        await asyncio.wait_for(server.work_done_progress.create_async(token), timeout=5)
    except Exception:
        log.info("client did not accept a progress token; continuing without progress")
        return WorkDone(server, None)
    server.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=True))
    return WorkDone(server, token)


def show(server: LanguageServer, kind: lsp.MessageType, text: str) -> None:
    """A window/showMessage."""
    server.window_show_message(lsp.ShowMessageParams(type=kind, message=text))


class ToolHost:
    """The editor side of tool calls: visibility notifications, confirmations and workspace/applyEdit."""

    def __init__(self, server: LanguageServer, protocol: SidecarProtocol) -> None:
        self._server = server
        self._protocol = protocol

    async def before_plan(self, paths: list[Path]) -> None:
        """Nothing to fetch: the editor syncs its open documents (didOpen/didChange) as they change."""

    def after_call(self) -> None:
        """Nothing was fetched for the call."""

    def tool_call(self, notice: ToolCallParams, plan: ToolPlan | None = None, result: ToolResult | None = None) -> None:
        """Tell the editor a tool call's status changed (sidecar/toolCall)."""
        notice = msgspec.structs.replace(notice, summary=visible(notice.summary))  # shown as data, never obeyed
        self._protocol.notify(methods.TOOL_CALL.name, to_wire(notice))

    async def confirm(self, request: ConfirmToolCallParams, plan: ToolPlan | None = None) -> ToolDecision:
        """Ask the user whether the call may run (sidecar/confirmToolCall); anything unexpected is deny. The question
        shows escapes and bidi controls visibly (`\\e`, `<U+202E>`): what the user approves is what runs."""
        request = msgspec.structs.replace(request, description=visible(request.description))
        result = await self._protocol.send_request_async(methods.CONFIRM_TOOL_CALL.name, to_wire(request))
        return decode_decision(result)

    def apply_edit(self, plan: ToolPlan | None = None) -> ApplyEdit | None:
        """Edits (and a rewind's restores) go through workspace/applyEdit, so the editor's buffers and undo see
        them."""
        workspace = self._server.client_capabilities.workspace
        if workspace is None or not workspace.apply_edit:
            return None
        return self._apply

    async def _apply(self, edit: dict[str, Any]) -> tuple[bool, str | None]:
        typed = self._protocol.structure(self._versioned(edit), lsp.WorkspaceEdit)
        result = await self._server.workspace_apply_edit_async(
            lsp.ApplyWorkspaceEditParams(edit=typed, label="sidecar edit")
        )
        return bool(result.applied), result.failure_reason

    def _versioned(self, edit: dict[str, Any]) -> dict[str, Any]:
        """The edit naming the version of each synced document it was planned on (planning read the text the
        editor synced): an editor whose buffer changed since refuses it rather than apply ranges to other text."""

        def version_of(uri: str) -> int | None:
            path = to_fs_path(uri)
            synced = self._server.workspace.text_documents.get(from_fs_path(path) or "") if path else None
            return None if synced is None else synced.version

        return with_versions(edit, version_of)


def with_versions(edit: dict[str, Any], version_of: Callable[[str], int | None]) -> dict[str, Any]:
    """`edit` with the version the editor last synced filled into each text edit that names none."""
    if "documentChanges" not in edit:
        return edit
    changes = []
    for change in edit["documentChanges"] or []:
        document = change.get("textDocument") if isinstance(change, dict) else None
        if isinstance(document, dict) and document.get("version") is None and isinstance(document.get("uri"), str):
            version = version_of(document["uri"])
            if version is not None:
                change = {**change, "textDocument": {**document, "version": version}}
        changes.append(change)
    return {**edit, "documentChanges": changes}


class Notifier:
    """What the chat service tells the editor: streamed text, usage, compactions, errors and progress."""

    def __init__(self, server: LanguageServer, protocol: SidecarProtocol) -> None:
        self._server = server
        self._protocol = protocol

    def message_delta(self, turn_id: str, text: str) -> None:
        """One streamed chunk of the reply (sidecar/messageDelta)."""
        self._protocol.notify(methods.MESSAGE_DELTA.name, to_wire(MessageDeltaParams(turn_id=turn_id, text=text)))

    def thought_delta(self, turn_id: str, text: str) -> None:
        """Thought summaries are not sent: the editor protocol streams the answer only (docs/protocol.md)."""

    def token_usage(self, usage: TokenUsage) -> None:
        """Push the token usage for the status bar (sidecar/tokenUsage)."""
        self._protocol.notify(methods.TOKEN_USAGE.name, to_wire(usage))

    def compressed(self, notice: CompressedParams) -> None:
        """Announce a compaction attempt's outcome (sidecar/compressed)."""
        self._protocol.notify(methods.COMPRESSED.name, to_wire(notice))

    def masked(self, notice: ToolOutputsMaskedParams) -> None:
        """Announce masked tool outputs in the chat (sidecar/toolOutputsMasked)."""
        self._protocol.notify(methods.TOOL_OUTPUTS_MASKED.name, to_wire(notice))

    def retry(self, notice: RetryParams) -> None:
        """Tell the editor an unusable reply is retried, so it drops the failed attempt's text."""
        self._protocol.notify(methods.RETRY.name, to_wire(notice))

    def error(self, message: str) -> None:
        """Show an error in words (the request also fails with it)."""
        show(self._server, lsp.MessageType.Error, f"Sidecar: {message}")

    def warning(self, message: str) -> None:
        """Show a warning in words (window/showMessage)."""
        show(self._server, lsp.MessageType.Warning, f"Sidecar: {message}")

    async def progress(self, kind: methods.ProgressKind) -> WorkDone:
        """A work-done progress of this kind, titled as the editors expect (methods.PROGRESS_TITLES)."""
        return await start_progress(self._server, methods.PROGRESS_TITLES[kind])
