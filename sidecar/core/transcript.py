"""What editors see of a session: the readable text and title of contents (entries: sidecar.protocol.sessions)."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.core.history import Content
from sidecar.protocol.sessions import TranscriptToolCall

TITLE_MAX = 80
SUMMARY_MAX = 200


def _clip(text: str, limit: int = SUMMARY_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_clip(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("output", "content", "error"):
            if isinstance(value.get(key), str):
                return _clip(value[key])
    if isinstance(value, str):
        return _clip(value)
    return _clip(msgspec.json.encode(value).decode())


def display_text(content: Content) -> str:
    """Readable text of a content: its text parts, then one line per tool call, tool result or attachment."""
    parts = content.parts
    if len(parts) == 1 and parts[0].text is not None and not parts[0].thought:
        return parts[0].text  # the common case, without building lists
    texts: list[str] = []
    extras: list[str] = []
    for p in parts:
        if p.text is not None:
            if not p.thought:
                texts.append(p.text)
        elif p.function_call is not None:
            extras.append(f"→ {p.function_call.name}({_json_clip(p.function_call.args or {})})")
        elif p.function_response is not None:
            extras.append(f"← {p.function_response.name}: {_json_clip(p.function_response.response)}")
        elif p.inline_data is not None:
            extras.append(f"[attachment {p.inline_data.mime_type or 'data'}]")
        elif p.file_data is not None:
            extras.append(f"[file {p.file_data.file_uri}]")
    text = "".join(texts)
    if extras:
        return "\n".join([text, *extras]) if text else "\n".join(extras)
    return text


def tool_calls_of(content: Content) -> list[TranscriptToolCall] | None:
    """The function calls of a content as transcript data (None when it has none)."""
    calls = [
        TranscriptToolCall(p.function_call.name or "tool", p.function_call.args, p.function_call.id)
        for p in content.parts
        if p.function_call is not None
    ]
    return calls or None


def tool_calls_from_meta(meta: dict[str, Any] | None) -> list[TranscriptToolCall] | None:
    """Tool calls kept only in a record's metadata (an imported message that is in the transcript only)."""
    raw = (meta or {}).get("toolCalls")
    if not isinstance(raw, list):
        return None
    calls = [
        TranscriptToolCall(c["name"], c.get("args"), c.get("id") if isinstance(c.get("id"), str) else None)
        for c in raw
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    ]
    return calls or None


def title_of(text: str) -> str | None:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _clip(first, TITLE_MAX) if first else None
