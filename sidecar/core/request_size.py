"""A model request's size from above (JSON bytes / 4, never below the token estimate; an image as the API counts it),
and tool responses cut to fit (media parts that do not fit replaced with a note)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from sidecar.core.compaction import format_truncated_tool_output, function_response_text
from sidecar.core.content_json import decode_content
from sidecar.core.history import Blob, Content, FunctionResponse, Part
from sidecar.core.media_tokens import media_bytes, media_note, media_tokens
from sidecar.core.request_overhead import request_overhead_tokens
from sidecar.core.tokens import estimate_tokens

__all__ = [
    "READ_THE_REST",
    "content_upper_tokens",
    "fit_responses",
    "overhead_upper_tokens",
    "parts_upper_tokens",
    "wire_upper_tokens",
]

SaveOutput = Callable[[str, str], "str | os.PathLike[str]"]

#: Added to a tool response cut to fit the context window: how the model reads what was left out.
READ_THE_REST = (
    "\n\n[This tool output was cut to fit the context window. The full output is in the file named above: read "
    "it with read_file, using start_line and end_line to page through it.]"
)

_encode = msgspec.json.Encoder().encode


def wire_upper_tokens(data: bytes, estimate: int = 0) -> int:
    """One content's tokens from above: a quarter of its JSON bytes (plus the separator), or the estimate if more;
    a content with inline images is measured without their base64, each image as the API counts it."""
    if b'"inlineData"' in data:
        return max(estimate, content_upper_tokens(decode_content(data)))
    return max(estimate, math.ceil((len(data) + 1) / 4))


def content_upper_tokens(content: Content) -> int:
    """A content's tokens from above: its JSON bytes / 4 with each inline image's data left out and counted as the
    API counts images instead (258 tokens a tile, core/media_tokens.py); never below the token estimate."""
    images = 0
    parts: list[Part] = []
    for part in content.parts:
        tokens = media_tokens(part)
        if tokens is None:
            parts.append(part)
            continue
        images += tokens
        assert part.inline_data is not None
        parts.append(Part(inline_data=Blob(mime_type=part.inline_data.mime_type, data="")))
    if not images:
        return max(estimate_tokens(content.parts), math.ceil((len(_encode(content)) + 1) / 4))
    stripped = _encode(Content(role=content.role, parts=parts))
    return max(estimate_tokens(content.parts), math.ceil((len(stripped) + 1) / 4) + images)


def parts_upper_tokens(role: str, parts: Sequence[Part]) -> int:
    return content_upper_tokens(Content(role=role, parts=list(parts))) if parts else 0


def overhead_upper_tokens(system_instruction: str | None, tools: list[dict[str, Any]] | None) -> int:
    """The system instruction and tool declarations, as JSON bytes / 4 (at least the usual estimate)."""
    upper = 0
    if system_instruction:
        upper += math.ceil(len(_encode({"parts": [{"text": system_instruction}]})) / 4)
    if tools:
        upper += math.ceil(len(_encode(tools)) / 4)
    return max(upper, request_overhead_tokens(system_instruction, tools))


def _cuttable(response: Any) -> tuple[str, str] | None:
    """(key, text) of the response's text to cut: its string output, error or content, else its JSON."""
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return key, value
    text = function_response_text(response)
    return None if text is None else ("output", text)


def _media_within(parts: list[Part], room_bytes: int | None) -> list[Part]:
    """The parts with each media part that would take the request past `room_bytes` (what the API's request size
    limit leaves) replaced with a note."""
    if room_bytes is None:
        return parts
    used = 0
    out: list[Part] = []
    for part in parts:
        size = media_bytes(part)
        if size and used + size > room_bytes:
            out.append(media_note(part, "it would make the request larger than the API accepts (20 MB in all)"))
            continue
        used += size
        out.append(part)
    return out


def fit_responses(
    parts: Sequence[Part], budget_tokens: int, save: SaveOutput, room_bytes: int | None = None
) -> tuple[list[Part], bool]:
    """The function-response parts, each text cut (head 20% / tail 80%, the full text saved, READ_THE_REST added)
    to the longest length at which all of them fit in `budget_tokens`; media parts (images, audio, blobs that
    follow the responses) that pass `room_bytes` or, with every text cut, still do not fit are replaced with a note,
    the largest first. Returns (parts, fits): when even the shortest form does not fit, that form with fits=False.
    Parts that fit already are returned unchanged."""
    parts = _media_within(list(parts), room_bytes)
    if parts_upper_tokens("user", parts) <= budget_tokens:
        return parts, True
    texts: dict[int, tuple[str, str]] = {}
    for i, part in enumerate(parts):
        fr = part.function_response
        found = _cuttable(fr.response) if fr is not None else None
        if found is not None:
            texts[i] = found
    saved: dict[int, str] = {}

    def saved_path(i: int) -> str:
        if i not in saved:
            fr = parts[i].function_response
            assert fr is not None
            try:
                saved[i] = os.fspath(save(texts[i][1], fr.name or "unknown_tool"))
            except Exception as exc:  # a full disk: the model is told the rest is gone
                saved[i] = f"(the full output could not be saved: {exc})"
        return saved[i]

    def build(max_chars: int) -> list[Part]:
        out = list(parts)
        for i, (key, text) in texts.items():
            if len(text) <= max_chars:
                continue
            fr = parts[i].function_response
            assert fr is not None
            short = format_truncated_tool_output(text, saved_path(i), max_chars) + READ_THE_REST
            response = {**fr.response, key: short} if isinstance(fr.response, dict) else {key: short}
            out[i] = Part(function_response=FunctionResponse(name=fr.name, id=fr.id, response=response))
        return out

    longest = max((len(t) for _, t in texts.values()), default=0)
    low, high = 0, longest
    media = sorted(
        (i for i, part in enumerate(parts) if media_bytes(part)),
        key=lambda i: -(media_tokens(parts[i]) or math.ceil(media_bytes(parts[i]) / 4)),
    )
    while media and parts_upper_tokens("user", build(0)) > budget_tokens:
        i = media.pop(0)
        parts[i] = media_note(parts[i], "it does not fit in what is left of the context window")
    if parts_upper_tokens("user", build(0)) > budget_tokens:
        return build(0), False
    while low < high:  # the longest max_chars that fits
        middle = (low + high + 1) // 2
        if parts_upper_tokens("user", build(middle)) <= budget_tokens:
            low = middle
        else:
            high = middle - 1
    return build(low), True
