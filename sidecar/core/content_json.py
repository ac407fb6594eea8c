"""Contents kept as their JSON: encoding, checking recorded JSON is a Content without building it, decoding."""

from __future__ import annotations

import json
from collections.abc import Iterable

import msgspec

from sidecar.core.history import Blob, Content, FileData, FunctionCall, FunctionResponse, Part

# Mirrors of the history types (MIRRORS) that accept exactly the same JSON, with every `Any` value taken as a
# Raw: checking a tool result does not build its (large) output. tests/unit/test_recording_wire.py keeps them in step.


class _Api(msgspec.Struct, rename="camel", gc=False):
    pass


class _FunctionCall(_Api):
    name: str | None = None
    args: dict[str, msgspec.Raw] | None = None
    id: str | None = None


class _FunctionResponse(_Api):
    name: str | None = None
    response: msgspec.Raw = msgspec.Raw()
    id: str | None = None
    parts: list[dict[str, msgspec.Raw]] | None = None
    will_continue: bool | None = None
    scheduling: str | None = None


class _Blob(_Api):
    mime_type: str | None = None
    data: str | None = None
    display_name: str | None = None


class _FileData(_Api):
    mime_type: str | None = None
    file_uri: str | None = None
    display_name: str | None = None


class _Part(_Api):
    text: str | None = None
    thought: bool | None = None
    thought_signature: str | None = None
    function_call: _FunctionCall | None = None
    function_response: _FunctionResponse | None = None
    inline_data: _Blob | None = None
    file_data: _FileData | None = None
    executable_code: dict[str, msgspec.Raw] | None = None
    code_execution_result: dict[str, msgspec.Raw] | None = None
    video_metadata: dict[str, msgspec.Raw] | None = None
    part_metadata: dict[str, msgspec.Raw] | None = None
    media_resolution: msgspec.Raw = msgspec.Raw()


class _Content(_Api):
    role: str | None = None
    parts: list[_Part] = msgspec.field(default_factory=list)


MIRRORS: dict[type[msgspec.Struct], type[msgspec.Struct]] = {
    Content: _Content,
    Part: _Part,
    FunctionCall: _FunctionCall,
    FunctionResponse: _FunctionResponse,
    Blob: _Blob,
    FileData: _FileData,
}

_CHECK = msgspec.json.Decoder(_Content | None)
_CONTENT = msgspec.json.Decoder(Content)
_ENCODE = msgspec.json.Encoder().encode


def check_content(data: bytes) -> bool:
    """Whether recorded content JSON is a Content (False: null). Raises msgspec.ValidationError otherwise, naming
    the field as it is in the message record (`$.content.parts[0].text`), as decoding the whole record would."""
    try:
        return _CHECK.decode(data) is not None
    except msgspec.ValidationError as exc:
        text = str(exc)
        where = text.replace(" - at `$", " - at `$.content", 1) if " - at `$" in text else f"{text} - at `$.content`"
        raise msgspec.ValidationError(where) from None


def decode_content(data: bytes | msgspec.Raw) -> Content:
    """A content from its JSON (checked JSON: this does not raise)."""
    return _CONTENT.decode(data)


def decode_contents(wire: Iterable[bytes]) -> list[Content]:
    """Contents from their JSON (one decode each: O(n), for callers that need the structs)."""
    return [_CONTENT.decode(data) for data in wire]


def encode_content(content: Content) -> bytes:
    """A content's wire JSON. A lone surrogate (which UTF-8 cannot carry; every entry point already replaces them)
    becomes U+FFFD rather than failing the turn."""
    try:
        return _ENCODE(content)
    except UnicodeEncodeError:
        text = json.dumps(msgspec.to_builtins(content), ensure_ascii=False, separators=(",", ":"))
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode()
