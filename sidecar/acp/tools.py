"""The tool runner's ToolHost port for ACP: tool_call updates, session/request_permission, fs/* when offered."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.agent.connection import AgentSideConnection
from acp.schema import PermissionOption, ToolCallUpdate

from sidecar.acp import updates
from sidecar.acp.outbox import Outbox
from sidecar.core.visible_text import visible
from sidecar.protocol.tools import ConfirmToolCallParams, ToolCallParams, ToolDecision
from sidecar.tools import ToolPlan, ToolResult, Workspace
from sidecar.tools.builtin import acp_kind
from sidecar.tools.edits import ApplyEdit

log = logging.getLogger(__name__)

PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allowAlways", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
]
#: For a call that asks every time (a protected path, a hard-linked file): "always" would mean nothing.
ONCE_OPTIONS = [option for option in PERMISSION_OPTIONS if option.kind != "allow_always"]
#: For an MCP tool, also: every tool of its server from now on.
SERVER_OPTION = PermissionOption(option_id="allowAlwaysServer", name="Always allow this server", kind="allow_always")
DECISIONS: dict[str, ToolDecision] = {
    "allow": "allow",
    "allowAlways": "allowAlways",
    "allowAlwaysServer": "allowAlwaysServer",
    "deny": "deny",
}


@dataclass
class ClientFiles:
    """What the client offered at initialize, and the buffers read through it for the call being run."""

    conn: AgentSideConnection
    session_id: Callable[[], str]
    read: bool = False
    write: bool = False
    texts: dict[str, str] = field(default_factory=dict)

    def editor_text(self, path: Path) -> str | None:
        """The client's text of `path` fetched for this call, if any (unsaved changes included)."""
        return self.texts.get(str(path))

    async def fetch(self, path: Path) -> None:
        """Read the client's view of `path` (unsaved changes included); a file it cannot read is read from disk."""
        if not self.read:
            return
        try:
            response = await self.conn.read_text_file(session_id=self.session_id(), path=str(path))
        except (RequestError, ConnectionError, ValueError) as exc:
            log.debug("fs/read_text_file %s: %s; reading the disk", path, exc)
            return
        self.texts[str(path)] = response.content

    async def write_file(self, path: Path, text: str) -> tuple[bool, str | None]:
        """Write through the client (fs/write_text_file): (written, the client's error in words)."""
        try:
            await self.conn.write_text_file(session_id=self.session_id(), path=str(path), content=text)
        except (RequestError, ConnectionError) as exc:
            return False, str(exc)
        self.texts.pop(str(path), None)
        return True, None


class AcpToolHost:
    """Implements sidecar.chat.tool_runner.ToolHost: tool calls become tool_call / tool_call_update updates, the
    client's buffers are read before a call is planned and edits are written through the client when offered."""

    def __init__(self, outbox: Outbox, conn: AgentSideConnection, files: ClientFiles, workspace: Workspace) -> None:
        self._outbox = outbox
        self._conn = conn
        self._files = files
        #: Where a call's `path` / `directory` argument points, for the tool_call update's locations.
        self._workspace = workspace
        #: callId -> what the start update showed (kind, diff), for the permission request and the end update.
        self._shown: dict[str, tuple[str, list[updates.ToolContent]]] = {}

    @staticmethod
    def acp_id(turn_id: str, call_id: str) -> str:
        """Unique within the session: Gemini's call ids (and ours) repeat across turns."""
        return f"{turn_id}/{call_id}"

    async def before_plan(self, paths: list[Path]) -> None:
        """Read the client's view of the files (unsaved changes included), when it offered fs/read_text_file."""
        for path in paths:
            await self._files.fetch(path)

    def after_call(self) -> None:
        """The buffers read for the call are stale once it is answered."""
        self._files.texts.clear()

    def tool_call(self, notice: ToolCallParams, plan: ToolPlan | None = None, result: ToolResult | None = None) -> None:
        """A tool call's state as ACP tool_call / tool_call_update notifications."""
        call_id = self.acp_id(notice.turn_id, notice.call_id)
        status = notice.status
        if status == "pending":
            kind = acp_kind(notice.name)
            content = updates.plan_content(plan)
            where = updates.locations(plan, notice.args, self._workspace.resolve)
            self._shown[call_id] = (kind, content)
            title = visible(notice.summary)  # escapes and bidi controls shown, never obeyed
            self._outbox.put(updates.tool_call_start(call_id, title, kind, notice.args, content, where))
            return
        acp_status = updates.TOOL_STATUS.get(status, "failed")
        if status == "running":
            self._outbox.put(updates.tool_call_update(call_id, acp_status))
            return
        _kind, shown = self._shown.pop(call_id, ("other", []))
        output = updates.shell_output(plan, result.response if result is not None else None)
        content = [*shown, updates.text_content(notice.summary), *output]
        self._outbox.put(updates.tool_call_update(call_id, acp_status, content=content))

    async def confirm(self, request: ConfirmToolCallParams, plan: ToolPlan | None = None) -> ToolDecision:
        """Ask the client (session/request_permission) and map its answer to a decision."""
        call_id = self.acp_id(request.turn_id, request.call_id)
        kind, content = self._shown.get(call_id, ("other", []))
        if not content and request.diff:
            content = [updates.text_content(f"```diff\n{request.diff}```")]
        options = PERMISSION_OPTIONS
        if request.mcp_server:  # MCP: also "every tool of this server"
            options = [*PERMISSION_OPTIONS[:2], SERVER_OPTION, PERMISSION_OPTIONS[2]]
        if plan is not None and plan.kind == "shell":  # the whole command, as it will run (the title is one line)
            content = [*content, updates.text_content(f"```sh\n{visible(str(plan.args.get('command', '')))}\n```")]
        if request.ask_reason is not None:  # "allow always" would count once: not offered
            content = [*content, updates.text_content(f"Asks every time: {request.ask_reason}.")]
            options = ONCE_OPTIONS
        tool_call = ToolCallUpdate(
            tool_call_id=call_id,
            title=visible(request.description),  # escapes and bidi controls shown, never obeyed
            kind=kind,  # type: ignore[arg-type]
            status="pending",
            content=content or None,
            raw_input=request.args,
        )
        await self._outbox.flush()  # the client has seen the tool call before it is asked about it
        response = await self._conn.request_permission(
            session_id=self._outbox.session_id, tool_call=tool_call, options=options
        )
        outcome = response.outcome
        if outcome.outcome != "selected":
            return "deny"  # cancelled: the prompt is being cancelled
        chosen = getattr(outcome, "option_id", "")
        if chosen not in {option.option_id for option in options}:  # e.g. "always" for a call that asks every time
            log.warning(
                "the client chose %r, which it was not offered for %s; treating it as denied", chosen, request.tool_name
            )
            return "deny"
        return DECISIONS.get(chosen, "deny")

    def apply_edit(self, plan: ToolPlan | None = None) -> ApplyEdit | None:
        """An edit of the agent goes through fs/write_text_file when the client offered it; ACP has no
        workspace/applyEdit, so the rest (and a rewind's restores) are written to disk."""
        files, edit = self._files, plan.edit_plan if plan is not None else None
        if edit is None or not files.write:
            return None

        async def through_client(_lsp_edit: dict[str, Any]) -> tuple[bool, str | None]:
            return await files.write_file(edit.path, edit.after)

        return through_client
