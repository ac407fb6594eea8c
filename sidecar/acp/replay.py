"""session/load: the compacted, model-facing conversation replayed as session updates, with compaction markers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acp import update_agent_message_text, update_agent_thought_text, update_user_message_text

from sidecar.acp import updates
from sidecar.core.history import Content
from sidecar.core.ide_context import DELTA_HEADER, FULL_HEADER
from sidecar.core.recording import is_summary_id

COMPACTION_MARKER = "⟪ Compacted here: the conversation before this point was summarised. The model now sees:"
OUTPUT_PREVIEW = 2_000


def _is_ide_context(content: Content) -> bool:
    text = content.parts[0].text if len(content.parts) == 1 else None
    return text is not None and text.startswith((FULL_HEADER, DELTA_HEADER))


def _title(name: str, args: dict[str, Any]) -> str:
    target = args.get("path") or args.get("command") or args.get("pattern") or args.get("directory")
    return f"{name} {target}" if isinstance(target, str) else name


def _output(response: dict[str, Any] | None) -> tuple[bool, str]:
    response = response or {}
    ok = "error" not in response
    value = response.get("output", response.get("error", ""))
    text = value if isinstance(value, str) else str(value)
    return ok, text if len(text) <= OUTPUT_PREVIEW else text[:OUTPUT_PREVIEW] + "…"


def replay_updates(history: Sequence[Content], ids: Sequence[str]) -> list[Any]:
    """The updates that show `history` (ids: the recording's message ids, which mark a compaction's head)."""
    out: list[Any] = []
    calls: dict[str, list[str]] = {}  # function name -> pending ACP ids, to pair responses without ids
    for index, content in enumerate(history):
        mid = ids[index] if index < len(ids) else ""
        if mid.endswith((".env", ".ack")):
            continue
        if is_summary_id(mid):
            snapshot = "".join(p.text or "" for p in content.parts)
            out.append(update_agent_message_text(f"{COMPACTION_MARKER} ⟫\n\n{snapshot}\n\n"))
            continue
        if content.role == "user":
            if _is_ide_context(content):
                continue
            for number, part in enumerate(content.parts):
                response = part.function_response
                if response is not None:
                    name = response.name or ""
                    pending = calls.get(name) or []
                    acp_id = response.id and f"replay-{mid}-{response.id}"
                    call_id = pending.pop(0) if pending else (acp_id or f"replay-{mid}-{number}")
                    ok, text = _output(response.response)
                    status = "completed" if ok else "failed"
                    out.append(updates.tool_call_update(call_id, status, content=[updates.text_content(text)]))
                elif part.text:
                    out.append(update_user_message_text(part.text))
            continue
        for number, part in enumerate(content.parts):
            call = part.function_call
            if call is not None:
                call_id = f"replay-{mid}-{number}"
                calls.setdefault(call.name or "", []).append(call_id)
                kind = updates.TOOL_KINDS.get(call.name or "", "other")
                args = call.args or {}
                out.append(updates.tool_call_start(call_id, _title(call.name or "", args), kind, args, [], []))
            elif part.text and part.thought:
                out.append(update_agent_thought_text(part.text))
            elif part.text:
                out.append(update_agent_message_text(part.text))
    return out
