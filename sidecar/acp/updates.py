"""Builders of ACP session updates from the sidecar's values: tool calls, usage, compaction, stop reasons."""

from __future__ import annotations

from typing import Any

from acp import text_block, tool_diff_content
from acp.schema import (
    AgentPlanUpdate,
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
)

from sidecar.protocol.sessions import TodoItem
from sidecar.protocol.types import TokenUsage
from sidecar.tools import ToolPlan

#: The tool runner's statuses -> ACP tool call statuses (ACP has no "denied" or "cancelled": both are failed).
TOOL_STATUS: dict[str, str] = {
    "pending": "pending",
    "running": "in_progress",
    "done": "completed",
    "error": "failed",
    "denied": "failed",
    "cancelled": "failed",
}
#: The most of a tool's output a tool call's card shows (live and replayed); the model gets its own bounded copy.
OUTPUT_PREVIEW = 2_000
REFUSAL_REASONS = frozenset(
    {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE", "PROMPT_BLOCKED"}
)

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent


def stop_reason(finish_reason: str | None) -> str:
    """Gemini's finishReason (and the sidecar's MAX_TOOL_ROUNDS) -> the ACP stopReason of session/prompt."""
    if finish_reason == "MAX_TOKENS":
        return "max_tokens"
    if finish_reason == "MAX_TOOL_ROUNDS":
        return "max_turn_requests"
    if finish_reason is not None and (finish_reason in REFUSAL_REASONS or finish_reason.startswith("PROMPT_BLOCKED")):
        return "refusal"
    return "end_turn"


def usage_update(usage: TokenUsage, memory: tuple[int, int] | None = None) -> UsageUpdate:
    """The token usage as usage_update: used = the prompt's tokens, size = the context window; `_meta` says how
    many context files (GEMINI.md, AGENTS.md) and tokens of them are part of it, when known."""
    meta = {"sidecar": {"memoryFiles": memory[0], "memoryTokens": memory[1]}} if memory is not None else None
    return UsageUpdate(
        session_update="usage_update", used=usage.prompt_token_count, size=usage.token_limit, field_meta=meta
    )


def plan_update(items: list[TodoItem]) -> AgentPlanUpdate:
    """The model's todo list as ACP's `plan` (the whole plan each time; empty: cleared). ACP has no cancelled
    state: a cancelled item is shown completed, and says so."""
    entries = [
        PlanEntry(
            content=item.description if item.status != "cancelled" else f"{item.description} (cancelled)",
            priority="medium",
            status="completed" if item.status == "cancelled" else item.status,
        )
        for item in items
    ]
    return AgentPlanUpdate(session_update="plan", entries=entries)


def text_content(text: str) -> ContentToolCallContent:
    """Text shown in a tool call's card."""
    return ContentToolCallContent(type="content", content=text_block(text))


def output_preview(response: dict[str, Any] | None) -> tuple[bool, str]:
    """(ok, the output or error text cut to OUTPUT_PREVIEW characters) of a tool's functionResponse."""
    response = response or {}
    ok = "error" not in response
    value = response.get("output", response.get("error", ""))
    text = value if isinstance(value, str) else str(value)
    return ok, text if len(text) <= OUTPUT_PREVIEW else text[:OUTPUT_PREVIEW] + "…"


def shell_output(plan: ToolPlan | None, response: dict[str, Any] | None) -> list[ToolContent]:
    """A shell call's output (bounded) for its card; nothing for other tools or an empty output."""
    if plan is None or plan.kind != "shell" or response is None:
        return []
    _ok, text = output_preview(response)
    return [text_content(f"```\n{text}\n```")] if text.strip() else []


def plan_content(plan: ToolPlan | None) -> list[ToolContent]:
    """A diff for an edit (the whole file before and after), else nothing."""
    edit = plan.edit_plan if plan is not None and plan.error is None else None
    if edit is None:
        return []
    return [tool_diff_content(str(edit.path), edit.after, edit.before)]


def locations(plan: ToolPlan | None, args: dict[str, Any], resolve: Any) -> list[ToolCallLocation]:
    """Where the call acts: the planned file, else the `path`/`directory` argument resolved in the workspace."""
    edit = plan.edit_plan if plan is not None else None
    if edit is not None:
        return [ToolCallLocation(path=str(edit.path))]
    raw = args.get("path", args.get("directory"))
    if not isinstance(raw, str) or resolve is None:
        return []
    try:
        path = str(resolve(raw))
    except Exception:
        return []
    line = args.get("start_line")
    return [ToolCallLocation(path=path, line=line if isinstance(line, int) and line >= 0 else None)]


def tool_call_start(
    call_id: str, title: str, kind: str, args: dict[str, Any], content: list[ToolContent], where: list[ToolCallLocation]
) -> ToolCallStart:
    """The tool_call update that announces a call (pending), with its kind, diff and locations."""
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=title,
        kind=kind,  # type: ignore[arg-type]
        status="pending",
        content=content or None,
        locations=where or None,
        raw_input=args,
    )


def tool_call_update(
    call_id: str,
    status: str,
    *,
    title: str | None = None,
    content: list[ToolContent] | None = None,
    raw_output: Any = None,
) -> ToolCallProgress:
    """A tool_call_update: the call's new status, and what to show for it."""
    return ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call_id,
        status=status,  # type: ignore[arg-type]
        title=title,
        content=content,
        raw_output=raw_output,
    )


def compaction_update(
    compaction_id: str, status: str, *, summary: str | None = None, error: str | None = None
) -> dict[str, Any]:
    """`compaction_update` (stable since ACP schema 1.25.0; the SDK has no type for it yet; sent only to clients that
    advertised session.compaction)."""
    update: dict[str, Any] = {"sessionUpdate": "compaction_update", "compactionId": compaction_id, "status": status}
    if summary:
        update["summary"] = [{"type": "text", "text": summary}]
    if error:
        update["error"] = error
    return update
