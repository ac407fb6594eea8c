"""Request checks the real Gemini API also makes (roles, empty parts, call/response pairing, tools)."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.core.history import Content, parse_contents

CALL_COUNT_MISMATCH = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
RESPONSE_WITHOUT_CALL = "Please ensure that function response turn comes immediately after a function call turn."
_SCHEMA_KEYS = ("parameters", "parametersJsonSchema", "parameters_json_schema")


class InvalidRequest(Exception):
    """A 400 INVALID_ARGUMENT the real API would answer with this message."""


def contents_of(body: dict[str, Any], *, required: bool) -> list[Content]:
    """Parse body["contents"] (or generateContentRequest.contents) into Content values."""
    raw = body.get("contents")
    inner = body.get("generateContentRequest")
    if raw is None and isinstance(inner, dict):
        raw = inner.get("contents")
    if raw is None or raw == []:
        if required:
            raise InvalidRequest("* GenerateContentRequest.contents: contents is not specified")
        return []
    if not isinstance(raw, list):
        raise InvalidRequest("Invalid value at 'contents': expected a list of Content")
    try:
        return parse_contents(raw)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"Invalid value at 'contents': {exc}") from None


def check_contents(contents: list[Content]) -> None:
    """Roles, non-empty parts, and functionCall / functionResponse pairing."""
    for i, c in enumerate(contents):
        if c.role not in (None, "user", "model"):
            raise InvalidRequest("Please use a valid role: user, model.")
        if not c.parts:
            raise InvalidRequest(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
        responses = sum(1 for p in c.parts if p.function_response is not None)
        prev = contents[i - 1] if i else None
        calls = sum(1 for p in prev.parts if p.function_call is not None) if prev else 0
        if responses and (prev is None or prev.role != "model" or not calls):
            raise InvalidRequest(RESPONSE_WITHOUT_CALL)
        if calls and c.role != "model" and responses != calls:
            raise InvalidRequest(CALL_COUNT_MISMATCH)


def check_tools(tools: Any) -> None:
    """Function declarations need a name and at most one of parameters / parametersJsonSchema."""
    if tools is None:
        return
    if not isinstance(tools, list):
        raise InvalidRequest("Invalid value at 'tools': expected a list of Tool")
    for t, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise InvalidRequest(f"Invalid value at 'tools[{t}]': expected a Tool object")
        decls = tool.get("functionDeclarations", tool.get("function_declarations", []))
        for d, decl in enumerate(decls if isinstance(decls, list) else [None]):
            where = f"tools[{t}].function_declarations[{d}]"
            if not isinstance(decl, dict) or not decl.get("name"):
                raise InvalidRequest(f"* GenerateContentRequest.{where}.name: Name cannot be empty.")
            schemas = [k for k in _SCHEMA_KEYS if k in decl]
            if len(schemas) > 1:
                raise InvalidRequest(
                    f"* GenerateContentRequest.{where}: parameters and parameters_json_schema cannot both be set."
                )


def instruction_ok(system_instruction: Any) -> None:
    """systemInstruction may be a string, a Content, or a list of parts/strings."""
    if system_instruction is None or isinstance(system_instruction, str | list):
        return
    if isinstance(system_instruction, dict):
        try:
            msgspec.convert(system_instruction, Content)
        except msgspec.ValidationError as exc:
            raise InvalidRequest(f"Invalid value at 'system_instruction': {exc}") from None
        return
    raise InvalidRequest("Invalid value at 'system_instruction': expected a Content")
