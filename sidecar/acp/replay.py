"""session/load: the whole visible conversation replayed as session updates (as an editor's resume shows it), with a
marker at each compaction; the model itself goes on with the compacted history."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from acp import tool_diff_content, update_agent_message_text, update_agent_thought_text, update_user_message_text
from acp.schema import ToolCallLocation

from sidecar.acp import updates
from sidecar.core.history import Content
from sidecar.core.ide_context import DELTA_HEADER, FULL_HEADER
from sidecar.core.recording import is_summary_id
from sidecar.core.visible_text import visible
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptEntry, TranscriptFork, TranscriptMessage
from sidecar.tools.builtin import acp_kind

COMPACTION_MARKER = "⟪ Compacted here"
#: Messages the model gets but a person does not read: editor context, the <session_context> turn, summaries.
_NOT_SHOWN = frozenset({"ideContext", "env", "summary"})


def _is_ide_context(content: Content) -> bool:
    text = content.parts[0].text if len(content.parts) == 1 else None
    return text is not None and text.startswith((FULL_HEADER, DELTA_HEADER))


#: The words of a live call's title (the plan's description), from the recorded arguments: for sessions recorded
#: before the titles were kept with the tool results.
_TITLES = {
    "read_file": "Read {path}",
    "list_directory": "List {path}",
    "glob": "Find files matching {pattern}",
    "search_text": "Search /{pattern}/",
    "write_file": "Write {path}",
    "replace": "Edit {path}",
    "run_shell_command": "Run `{command}`",
}


def _title(name: str, args: dict[str, Any]) -> str:
    """The call's title rebuilt in the words a live call shows, for a call recorded without its title."""
    template = _TITLES.get(name)
    if template is not None:
        try:
            return " ".join(template.format(**{k: v for k, v in args.items() if isinstance(v, str)}).split())
        except KeyError:
            pass
    if name.startswith("mcp_"):
        return f"MCP tool {name}"
    return name


def _where(args: dict[str, Any], root: str | None) -> list[ToolCallLocation]:
    raw = args.get("path", args.get("directory"))
    if not isinstance(raw, str) or not raw:
        return []
    path = raw if os.path.isabs(raw) or root is None else os.path.normpath(os.path.join(root, raw))
    line = args.get("start_line")
    return [ToolCallLocation(path=path, line=line if isinstance(line, int) and line >= 0 else None)]


def _diff(name: str, args: dict[str, Any], where: list[ToolCallLocation]) -> list[updates.ToolContent]:
    """An edit's diff from its arguments: replace's old and new text; write_file's text (the text it replaced is
    not recorded, so it shows as written whole)."""
    if not where:
        return []
    path = where[0].path
    if name == "replace" and isinstance(args.get("new_string"), str):
        old = args.get("old_string")
        return [tool_diff_content(path, args["new_string"], old if isinstance(old, str) and old else None)]
    if name == "write_file" and isinstance(args.get("content"), str):
        return [tool_diff_content(path, args["content"], None)]
    return []


def _output(response: dict[str, Any] | None) -> tuple[bool, str]:
    return updates.output_preview(response)


def compaction_marker(entry: TranscriptCompaction) -> str | None:
    """The line shown where a compaction happened (None for one that changed nothing)."""
    if entry.status == "NOOP":
        return None
    counts = f"{entry.original_token_count:,} → {entry.new_token_count:,} tokens"
    counts += ", your edited summary" if entry.edited else ""
    if entry.rating:
        counts += f", rated {'good' if entry.rating == 'good' else 'lost something'}"
    if entry.status == "COMPRESSED":
        if entry.undone:
            return f"{COMPACTION_MARKER} ({entry.trigger}, {counts}), later undone: the model sees all above ⟫\n\n"
        snapshot = f"\n\n{entry.snapshot}" if entry.snapshot else ""
        return (
            f"{COMPACTION_MARKER} ({entry.trigger}, {counts}): the model now sees a summary of the conversation "
            f"above instead of it ⟫{snapshot}\n\n"
        )
    if entry.status == "CONTENT_TRUNCATED":
        return f"{COMPACTION_MARKER} ({entry.trigger}): long tool outputs above were shortened for the model ⟫\n\n"
    return f"⟪ A compaction was attempted here ({entry.trigger}) and failed; nothing changed ({entry.status}) ⟫\n\n"


def conversation_updates(shown: Iterable[tuple[TranscriptEntry, Content | None]], root: str | None = None) -> list[Any]:
    """The updates that show every message and tool call recorded (`LoadedSession.shown()`), rewound ones left out,
    with a marker at each compaction and each branch point. Tool calls keep the ids, titles, diffs and locations the
    live calls had (paths resolved in `root`)."""
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
        _content_updates(entry, content, calls, out, root)
    return out


def _content_updates(
    entry: TranscriptMessage, content: Content, calls: dict[str, list[str]], out: list[Any], root: str | None = None
) -> None:
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
    index = 0  # the call's place among the message's calls (the live id's fallback, as the tool runner numbers)
    titles = [call.title for call in entry.tool_calls or []]  # as the live calls were shown (None: not recorded)
    for number, part in enumerate(content.parts):
        call = part.function_call
        if call is not None:
            index += 1
            turn = entry.turn_id
            # the id the live call had (sidecar.acp.tools.AcpToolHost.acp_id), so a client can match them up
            call_id = f"{turn}/{call.id or f'{turn}-call-{index}'}" if turn else f"replay-{mid}-{number}"
            name, args = call.name or "", call.args or {}
            calls.setdefault(name, []).append(call_id)
            kind = acp_kind(name)
            where = _where(args, root)
            diff = _diff(name, args, where)
            recorded = titles[index - 1] if index <= len(titles) else None
            title = visible(recorded) if recorded is not None else _title(name, args)  # shown, never obeyed
            out.append(updates.tool_call_start(call_id, title, kind, args, diff, where))
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
