"""Wire types of tool calls: the sidecar/toolCall notification and the sidecar/confirmToolCall request."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

ToolCallStatus = Literal["pending", "running", "done", "error", "denied", "cancelled"]
ToolDecision = Literal["allow", "allowAlways", "allowAlwaysServer", "deny"]


class ToolCallParams(msgspec.Struct, rename="camel", kw_only=True):
    """Params of sidecar/toolCall: a call's progress, sent at every status change."""

    turn_id: str
    call_id: str
    name: str
    args: dict[str, Any]
    status: ToolCallStatus
    #: One line for the UI: what the call does, or why it failed or was refused.
    summary: str


class ConfirmToolCallParams(msgspec.Struct, rename="camel", kw_only=True, omit_defaults=True):
    """Params of sidecar/confirmToolCall: the server asks the user before an edit or a shell command."""

    turn_id: str
    call_id: str
    tool_name: str
    args: dict[str, Any]
    description: str
    #: Edits: the unified diff of the change.
    diff: str | None = None
    #: MCP tools: the server; the client may then also offer "allowAlwaysServer" (every tool of that server).
    mcp_server: str | None = None
    #: Set when this call asks every time, whatever was allowed before (a protected path, a file with several
    #: hard links): why, in words. "allowAlways" would count as "allow" once, so the client offers allow and deny.
    ask_reason: str | None = None


class ConfirmToolCallResult(msgspec.Struct, rename="camel", kw_only=True):
    decision: ToolDecision
