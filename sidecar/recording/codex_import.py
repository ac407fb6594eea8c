"""Read a Codex rollout (.jsonl under ~/.codex/sessions/YYYY/MM/DD/) into a sidecar session's records.

Each line is `{timestamp, type, payload}`: `session_meta` (id, cwd, ...), `turn_context` (model, ...),
`response_item` (a Responses API item: message, reasoning, function_call, function_call_output, local_shell_call,
custom_tool_call, custom_tool_call_output), `event_msg` (UI events, which repeat the items) and `compacted`. Older
rollouts hold a metadata line and then the items themselves, without the wrapper.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import msgspec

from sidecar.core.words import counted, plural
from sidecar.recording.foreign_import import ForeignSession, HistoryBuilder, as_json, obj
from sidecar.recording.reader import now_iso
from sidecar.recording.store import RecordingError

_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>")
_ITEM_TYPES = {
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "local_shell_call",
    "custom_tool_call",
    "custom_tool_call_output",
    "web_search_call",
}


def _command(value: Any) -> str | None:
    """Codex's argv (often ["bash", "-lc", script]) as one command line for run_shell_command."""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if len(value) == 3 and value[0] in ("bash", "sh", "zsh") and value[1] in ("-lc", "-c"):
            return str(value[2])
        return shlex.join(value)
    return None


def _shell_args(command: Any, workdir: Any) -> dict[str, Any] | None:
    line = _command(command)
    if line is None:
        return None
    return {"command": line, **({"directory": workdir} if isinstance(workdir, str) else {})}


def _output(value: Any) -> dict[str, Any]:
    """A function_call_output's output as our response: {output} or {error}."""
    if isinstance(value, dict):
        text = value.get("content") if isinstance(value.get("content"), str) else as_json(value)
        return {"error": text} if value.get("success") is False else {"output": text}
    text = value if isinstance(value, str) else as_json(value)
    try:  # the shell tool answers with JSON: {"output": ..., "metadata": {"exit_code": ...}}
        inner = msgspec.json.decode(text)
    except msgspec.DecodeError:
        inner = None
    if isinstance(inner, dict) and isinstance(inner.get("output"), str):
        code = obj(inner.get("metadata")).get("exit_code")
        return {"output": inner["output"], **({"exitCode": code} if isinstance(code, int) else {})}
    return {"output": text}


def _lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RecordingError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    lines, bad = [], 0
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            record = msgspec.json.decode(line)
        except msgspec.DecodeError:
            bad += 1
            continue
        if isinstance(record, dict):
            lines.append(record)
    return lines, bad


def read_codex_session(path: Path) -> ForeignSession:
    lines, bad = _lines(path)
    meta: dict[str, Any] = {}
    model: str | None = None
    items: list[tuple[str | None, dict[str, Any]]] = []
    for record in lines:
        kind, payload = record.get("type"), record.get("payload")
        time = record.get("timestamp") if isinstance(record.get("timestamp"), str) else None
        if isinstance(payload, dict):
            if kind == "session_meta":
                meta.update(payload)
            elif kind == "turn_context" and isinstance(payload.get("model"), str):
                model = payload["model"]
            elif kind == "response_item":
                items.append((time, payload))
            elif kind == "compacted":
                items.append((time, {"type": "compacted", **payload}))
        elif kind in _ITEM_TYPES:
            items.append((time, record))  # an older rollout: the item itself
        elif "id" in record and ("instructions" in record or "timestamp" in record) and not meta:
            meta.update(record)
    if not isinstance(meta.get("id"), str):
        raise RecordingError(f"{path} is not a Codex rollout (no session_meta with an id found).")
    start = str(meta["timestamp"]) if isinstance(meta.get("timestamp"), str) else now_iso()
    builder = HistoryBuilder(start)
    textual: dict[str, str] = {}
    for time, item in items:
        if time:
            builder.time = time
        _item(builder, item, textual)
    builder.finish()
    if bad:
        builder.warnings.append(
            f"{counted(bad, 'unreadable line')} in the Codex rollout {plural(bad, 'was', 'were')} ignored."
        )
    if textual:
        names = ", ".join(sorted(set(textual.values())))
        builder.warnings.append(f"Calls of Codex tools the sidecar does not have ({names}) are kept as text.")
    imported = {"format": "jsonl", "sessionId": meta["id"], **({"cwd": meta["cwd"]} if "cwd" in meta else {})}
    if model:
        imported["model"] = model
    return ForeignSession(
        "codex", builder.records, builder.message_count, builder.history_length, start, imported, None, builder.warnings
    )


def _item(builder: HistoryBuilder, item: dict[str, Any], textual: dict[str, str]) -> None:
    kind = item.get("type")
    meta = {"codex": {"type": kind}}
    if kind == "message":
        texts = [
            c.get("text", "")
            for c in item.get("content") or []
            if isinstance(c, dict) and c.get("type") in ("input_text", "output_text", "text")
        ]
        text = "\n".join(t for t in texts if isinstance(t, str))
        role = item.get("role")
        if role == "assistant":
            builder.model_text(text, meta)
        elif role == "user" and not text.lstrip().startswith(_CONTEXT_PREFIXES):
            builder.user(text, meta)
        elif text.strip():
            builder.display("env", text, meta)
    elif kind in ("function_call", "local_shell_call", "custom_tool_call"):
        call_id = str(item.get("call_id") or item.get("id") or f"call-{builder.message_count}")
        name = str(item.get("name") or "shell")
        if kind == "function_call":
            try:
                args = msgspec.json.decode(item.get("arguments") or "{}")
            except (msgspec.DecodeError, TypeError):
                args = {"arguments": item.get("arguments")}
        elif kind == "local_shell_call":
            action = obj(item.get("action"))
            args = {"command": action.get("command"), "workdir": action.get("working_directory")}
        else:
            args = {"input": item.get("input")}
        args = args if isinstance(args, dict) else {"arguments": args}
        mapped = None
        if kind == "local_shell_call" or name in ("shell", "container.exec", "exec_command", "shell_command"):
            mapped = _shell_args(args.get("command", args.get("cmd")), args.get("workdir"))
        if mapped is None:
            textual[call_id] = name
            builder.call_as_text(f"[Codex tool call {name}: {as_json(args)}]", meta)
        else:
            builder.call("run_shell_command", mapped, call_id, {**meta, "codexTool": name})
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = str(item.get("call_id"))
        response = _output(item.get("output"))
        if call_id in textual:
            body = response.get("output", response.get("error"))
            builder.text_result(f"[Result of the Codex tool {textual[call_id]}: {body}]")
        elif not builder.result(call_id, response):
            builder.display("info", f"A tool result for an unknown call: {as_json(response)}", meta)
    elif kind == "compacted":
        message = item.get("message")
        builder.display(
            "info",
            "Codex compacted the conversation here." + (f" Its summary: {message}" if isinstance(message, str) else ""),
            meta,
        )
