"""Read a Claude Code session (.jsonl under ~/.claude/projects/<project>/) into a sidecar session's records.

Each line is an entry: `user` / `assistant` (with `message.content` as Anthropic content blocks: text, thinking,
tool_use, tool_result, image), `summary` (a title), `system`, and bookkeeping types. Entries form a tree by
`parentUuid`; the conversation is the chain that ends at the last entry (earlier branches were rewound).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sidecar.core.history import Blob, Part
from sidecar.core.words import counted, plural
from sidecar.recording.foreign_import import ForeignSession, HistoryBuilder, as_json, obj
from sidecar.recording.reader import now_iso
from sidecar.recording.store import RecordingError

_DISPLAY_PREFIXES = ("<command-name>", "<command-message>", "<local-command-stdout>", "Caveat:", "<system-reminder>")


def _map_call(name: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Claude Code's tool call as one of ours with the same meaning, or None (kept as text)."""
    path = args.get("file_path") or args.get("path")
    if name == "Read" and isinstance(path, str):
        mapped: dict[str, Any] = {"path": path}
        offset, limit = args.get("offset"), args.get("limit")
        if isinstance(offset, int):
            mapped["start_line"] = offset
            if isinstance(limit, int):
                mapped["end_line"] = offset + limit - 1
        return "read_file", mapped
    if name == "Write" and isinstance(path, str):
        return "write_file", {"path": path, "content": args.get("content", "")}
    if name == "Edit" and isinstance(path, str) and not args.get("replace_all"):
        return "replace", {
            "path": path,
            "old_string": args.get("old_string", ""),
            "new_string": args.get("new_string", ""),
        }
    if name == "Bash" and isinstance(args.get("command"), str):
        return "run_shell_command", {"command": args["command"]}
    if name == "Glob" and isinstance(args.get("pattern"), str):
        return "glob", {"pattern": args["pattern"], **({"directory": path} if isinstance(path, str) else {})}
    if name == "Grep" and isinstance(args.get("pattern"), str):
        mapped = {"pattern": args["pattern"]}
        if isinstance(path, str):
            mapped["directory"] = path
        if isinstance(args.get("glob"), str):
            mapped["include"] = args["glob"]
        return "search_text", mapped
    if name == "LS" and isinstance(path, str):
        return "list_directory", {"path": path}
    return None


def _text_of(content: Any) -> str:
    """A tool_result's content (a string or text blocks) as text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _chain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries on the path from the root to the last message entry (rewound branches left out)."""
    by_id = {e["uuid"]: e for e in entries if isinstance(e.get("uuid"), str)}
    last = next((e for e in reversed(entries) if e.get("type") in ("user", "assistant") and "uuid" in e), None)
    if last is None:
        return []
    chain, seen = [], set()
    node: dict[str, Any] | None = last
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        chain.append(node)
        parent = node.get("parentUuid")
        node = by_id.get(parent) if isinstance(parent, str) else None
    return list(reversed(chain))


def read_claude_session(path: Path) -> ForeignSession:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordingError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    entries: list[dict[str, Any]] = []
    bad = 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            entry = msgspec.json.decode(line)
        except msgspec.DecodeError:
            bad += 1
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    session_id = next((e["sessionId"] for e in entries if isinstance(e.get("sessionId"), str)), None)
    if session_id is None:
        raise RecordingError(f"{path} is not a Claude Code session file (no sessionId found).")
    chain = [e for e in _chain(entries) if not e.get("isSidechain")]
    start = next((e["timestamp"] for e in chain if isinstance(e.get("timestamp"), str)), now_iso())
    builder = HistoryBuilder(start)
    textual: dict[str, str] = {}  # ids of calls kept as text -> their tool name
    for entry in chain:
        if isinstance(entry.get("timestamp"), str):
            builder.time = entry["timestamp"]
        message = obj(entry.get("message"))
        meta = {"claude": {"uuid": entry.get("uuid"), "type": entry.get("type")}}
        if entry.get("type") == "assistant":
            _assistant(builder, message.get("content"), meta, textual)
        elif entry.get("type") == "user":
            _user(builder, message.get("content"), meta, textual, is_meta=bool(entry.get("isMeta")))
    builder.finish()
    if bad:
        builder.warnings.append(
            f"{counted(bad, 'unreadable line')} in the Claude Code file {plural(bad, 'was', 'were')} ignored."
        )
    if textual:
        names = ", ".join(sorted(set(textual.values())))
        builder.warnings.append(f"Calls of Claude Code tools the sidecar does not have ({names}) are kept as text.")
    title = next(
        (e["summary"] for e in reversed(entries) if e.get("type") == "summary" and isinstance(e.get("summary"), str)),
        None,
    )
    cwd = next((e["cwd"] for e in entries if isinstance(e.get("cwd"), str)), None)
    return ForeignSession(
        "claude-code",
        builder.records,
        builder.message_count,
        builder.history_length,
        start,
        {"format": "jsonl", "sessionId": session_id, **({"cwd": cwd} if cwd else {})},
        title,
        builder.warnings,
    )


def _assistant(builder: HistoryBuilder, content: Any, meta: dict[str, Any], textual: dict[str, str]) -> None:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            builder.model_text(block["text"], meta)
        elif kind == "tool_use" and isinstance(block.get("name"), str):
            args = obj(block.get("input"))
            call_id = str(block.get("id") or f"call-{builder.message_count}")
            mapped = _map_call(block["name"], args)
            if mapped is None:
                textual[call_id] = block["name"]
                builder.call_as_text(f"[Claude Code tool call {block['name']}: {as_json(args)}]", meta)
            else:
                builder.call(mapped[0], mapped[1], call_id, {**meta, "claudeTool": block["name"]})


def _user(
    builder: HistoryBuilder, content: Any, meta: dict[str, Any], textual: dict[str, str], *, is_meta: bool
) -> None:
    if isinstance(content, str):
        if is_meta or content.lstrip().startswith(_DISPLAY_PREFIXES):
            builder.display("env", content, meta)
        else:
            builder.user(content, meta)
        return
    texts: list[str] = []
    images: list[Part] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            call_id = str(block.get("tool_use_id"))
            output = _text_of(block.get("content"))
            if call_id in textual:
                builder.text_result(f"[Result of the Claude Code tool {textual[call_id]}: {output}]")
            elif not builder.result(call_id, {"error": output} if block.get("is_error") else {"output": output}):
                builder.display("info", f"A tool result for an unknown call: {output}", meta)
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image" and isinstance(block.get("source"), dict) and block["source"].get("type") == "base64":
            source = block["source"]
            images.append(Part(inline_data=Blob(mime_type=source.get("media_type"), data=source.get("data"))))
    text = "\n".join(texts)
    if is_meta or text.lstrip().startswith(_DISPLAY_PREFIXES):
        if text.strip():
            builder.display("env", text, meta)
    elif text.strip() or images:
        builder.user(text, meta, images)
