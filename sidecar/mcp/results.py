"""An MCP tools/call result as the model gets it (Gemini CLI's transformMcpContentToParts)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sidecar.core.history import Blob, Part

OPEN_TAG, CLOSE_TAG = "<untrusted_context>", "</untrusted_context>"


@dataclass
class Converted:
    """The text for functionResponse.response and the inline data parts that follow it in the same turn."""

    text: str
    error: bool
    media: list[Part] = field(default_factory=list)


def untrusted(text: str) -> str:
    """Text a server wrote, marked as data for the model; a closing tag inside it cannot end the block."""
    return f"{OPEN_TAG}\n{text.replace(CLOSE_TAG, '&lt;/untrusted_context&gt;')}\n{CLOSE_TAG}"


def _dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(by_alias=True, mode="json", exclude_none=True) if callable(dump) else value


def convert(tool: str, args: dict[str, Any], result: Any) -> Converted:
    """Text → wrapped text; image/audio → a label and inline data; an embedded resource → its text or a label and
    its blob; a resource link → `Resource Link: <title|name> at <uri>`; unknown content is dropped.
    `isError` → the model is told the tool failed, with what it said."""
    content = getattr(result, "content", None)
    if getattr(result, "is_error", False):
        shown = json.dumps([_dump(c) for c in content or []], ensure_ascii=False)
        call = json.dumps({"name": tool, "args": args}, ensure_ascii=False)
        text = f"MCP tool '{tool}' reported tool error for function call: {call} with response: {shown}"
        return Converted(text, True)
    if not isinstance(content, list):
        return Converted("[Error: Could not parse tool response]", True)
    texts: list[str] = []
    media: list[Part] = []
    for item in content:
        kind = getattr(item, "type", None)
        if kind == "text":
            texts.append(untrusted(item.text))
        elif kind in ("image", "audio"):
            texts.append(f"[Tool '{tool}' provided the following {kind} data with mime-type: {item.mime_type}]")
            media.append(Part(inline_data=Blob(mime_type=item.mime_type, data=item.data)))
        elif kind == "resource":
            resource = item.resource
            if getattr(resource, "text", None) is not None:
                texts.append(untrusted(resource.text))
            elif getattr(resource, "blob", None) is not None:
                mime = resource.mime_type or "application/octet-stream"
                texts.append(f"[Tool '{tool}' provided the following embedded resource with mime-type: {mime}]")
                media.append(Part(inline_data=Blob(mime_type=mime, data=resource.blob)))
        elif kind == "resource_link":
            texts.append(f"Resource Link: {getattr(item, 'title', None) or item.name} at {item.uri}")
    return Converted("\n".join(texts) if texts else "(no output)", False, media)


def convert_resource(uri: str, result: Any) -> Converted:
    """resources/read contents: text wrapped as untrusted, a blob as a label and inline data."""
    texts: list[str] = []
    media: list[Part] = []
    for item in getattr(result, "contents", None) or []:
        if getattr(item, "text", None) is not None:
            texts.append(untrusted(item.text))
        elif getattr(item, "blob", None) is not None:
            mime = item.mime_type or "application/octet-stream"
            texts.append(f"[Resource {uri} has the following content with mime-type: {mime}]")
            media.append(Part(inline_data=Blob(mime_type=mime, data=item.blob)))
    return Converted("\n".join(texts) if texts else f"The resource {uri} is empty.", False, media)
