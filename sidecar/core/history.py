"""The Gemini content model (Content, Part, ...) as msgspec types, and lossless REST-JSON conversion."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import msgspec

Role = Literal["user", "model"]


class _Api(msgspec.Struct, rename="camel", omit_defaults=True):
    """Base: camelCase on the wire (as the REST API sends it), absent fields omitted."""


class FunctionCall(_Api):
    name: str | None = None
    args: dict[str, Any] | None = None
    id: str | None = None


class FunctionResponse(_Api):
    name: str | None = None
    response: Any = None
    id: str | None = None
    parts: list[dict[str, Any]] | None = None
    will_continue: bool | None = None
    scheduling: str | None = None


class Blob(_Api):
    mime_type: str | None = None
    data: str | None = None
    display_name: str | None = None


class FileData(_Api):
    mime_type: str | None = None
    file_uri: str | None = None
    display_name: str | None = None


class Part(_Api):
    """One part of a Content. Exactly one payload field is normally set."""

    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None
    file_data: FileData | None = None
    executable_code: dict[str, Any] | None = None
    code_execution_result: dict[str, Any] | None = None
    video_metadata: dict[str, Any] | None = None
    part_metadata: dict[str, Any] | None = None
    media_resolution: Any = None


class Content(_Api):
    role: str | None = None
    parts: list[Part] = msgspec.field(default_factory=list)


def text_content(role: Role, text: str) -> Content:
    """A content with a single text part."""
    return Content(role=role, parts=[Part(text=text)])


def parse_contents(items: Iterable[Any]) -> list[Content]:
    """Turn Gemini REST JSON (a list of dicts, camelCase) into Content values.

    Raises msgspec.ValidationError naming the bad field when an item is not a Content.
    """
    return msgspec.convert(list(items), list[Content])


def dump_contents(contents: Sequence[Content]) -> list[dict[str, Any]]:
    """Turn Content values back into REST JSON dicts (camelCase, absent fields omitted)."""
    return msgspec.to_builtins(list(contents))  # type: ignore[no-any-return]


def content_text(content: Content) -> str:
    """The concatenated text parts of a content (thoughts excluded)."""
    return "".join(p.text for p in content.parts if p.text is not None and not p.thought)


def has_function_call(content: Content) -> bool:
    return any(p.function_call is not None for p in content.parts)


def has_function_response(content: Content) -> bool:
    return any(p.function_response is not None for p in content.parts)
