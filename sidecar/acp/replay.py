"""session/load: the whole visible conversation replayed as session updates (as an editor's resume shows it), with a
marker at each compaction; the model itself goes on with the compacted history."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acp import update_agent_message_text, update_agent_thought_text, update_user_message_text

from sidecar.acp import updates
from sidecar.core.history import Content
from sidecar.core.ide_context import DELTA_HEADER, FULL_HEADER
from sidecar.core.recording import is_summary_id
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptEntry, TranscriptFork, TranscriptMessage
from sidecar.tools.builtin import acp_kind

COMPACTION_MARKER = "⟪ Compacted here"
OUTPUT_PREVIEW = 2_000
#: Messages the model gets but a person does not read: editor context, the <session_context> turn, summaries.
_NOT_SHOWN = frozenset({"ideContext", "env", "summary"})


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


def compaction_marker(entry: TranscriptCompaction) -> str | None:
    """The line shown where a compaction happened (None for one that changed nothing)."""
    if entry.status == "NOOP":
        return None
    counts = f"{entry.original_token_count:,} → {entry.new_token_count:,} tokens"
    if entry.status == "COMPRESSED":
        if entry.undone:
            return f"{COMPACTION_MARKER} ({entry.trigger}, {counts}), later undone: the model sees all above ⟫\n\n"
        snapshot = f"\n\n{entry.snapshot}" if entry.snapshot else ""
        return (f"{COMPACTION_MARKER} ({entry.trigger}, {counts}): the model now sees a summary of the conversation "
                f"above instead of it ⟫{snapshot}\n\n")
    if entry.status == "CONTENT_TRUNCATED":
        return f"{COMPACTION_MARKER} ({entry.trigger}): long tool outputs above were shortened for the model ⟫\n\n"
    return f"⟪ A compaction was attempted here ({entry.trigger}) and failed; nothing changed ({entry.status}) ⟫\n\n"


def conversation_updates(shown: Iterable[tuple[TranscriptEntry, Content | None]]) -> list[Any]:
    """The updates that show every message and tool call recorded (`LoadedSession.shown()`), rewound ones left out,
    with a marker at each compaction and each branch point."""
    out: list[Any] = []
    calls: dict[str, list[str]] = {}  # function name -> pending ACP ids, to pair responses without ids
    for entry, content in shown:
        if isinstance(entry, TranscriptCompaction):
            marker = compaction_marker(entry)
            if marker is not None:
                out.append(update_agent_message_text(marker))
            continue
        if isinstance(entry, TranscriptFork):
            why = " (it was open in another window)" if entry.reason == "locked" else ""
            text = f"⟪ A branch of session {entry.parent_session_id[:8]} starts here{why} ⟫\n\n"
            out.append(update_agent_message_text(text))
            continue
        if entry.rewound or entry.kind in _NOT_SHOWN:
            continue
        if content is None:  # display only: a note, an error, or a message an import kept only for reading
            if entry.text:
                say = update_user_message_text if entry.role == "user" else update_agent_message_text
                out.append(say(entry.text))
            continue
        _content_updates(entry, content, calls, out)
    return out


def _content_updates(entry: TranscriptMessage, content: Content, calls: dict[str, list[str]], out: list[Any]) -> None:
    mid = entry.id
    if content.role == "user":
        if _is_ide_context(content):
            return
        if entry.kind == "user" and entry.text:  # what the user typed (the content may carry more, e.g. @files)
            out.append(update_user_message_text(entry.text))
            return
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
        return
    for number, part in enumerate(content.parts):
        call = part.function_call
        if call is not None:
            call_id = f"replay-{mid}-{number}"
            calls.setdefault(call.name or "", []).append(call_id)
            kind = acp_kind(call.name or "")
            args = call.args or {}
            out.append(updates.tool_call_start(call_id, _title(call.name or "", args), kind, args, [], []))
        elif part.text and part.thought:
            out.append(update_agent_thought_text(part.text))
        elif part.text:
            out.append(update_agent_message_text(part.text))


def replay_updates(history: list[Content], ids: list[str]) -> list[Any]:
    """The compacted, model-facing history as updates: only for a session with nothing readable recorded (recording
    off), where the transcript is not there to replay. ids: the recording's message ids (`<compaction>.summary`…)."""
    out: list[Any] = []
    calls: dict[str, list[str]] = {}
    for index, content in enumerate(history):
        mid = ids[index] if index < len(ids) else f"h{index}"
        if mid.endswith((".env", ".ack")):
            continue
        if is_summary_id(mid):
            snapshot = "".join(p.text or "" for p in content.parts)
            marker = f"{COMPACTION_MARKER}: the model sees this summary ⟫\n\n{snapshot}\n\n"
            out.append(update_agent_message_text(marker))
            continue
        entry = TranscriptMessage(mid, "", "user" if content.role == "user" else "model", "history", "")
        _content_updates(entry, content, calls, out)
    return out
