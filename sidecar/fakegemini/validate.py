"""Request checks the real Gemini API also makes (roles, parts, turn order, call/response pairing, signatures, tools).

Each rule's message is the API's own; docs/fake-gemini.md lists every rule with where it was seen. Rules that differ
by model are chosen by the model name in the request path (`rules_for`): unknown names get the strictest set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgspec

from sidecar.core.history import Content, Part, parse_contents

CALL_COUNT_MISMATCH = (
    "Please ensure that the number of function response parts is equal to the number of "
    "function call parts of the function call turn."
)
RESPONSE_WITHOUT_CALL = "Please ensure that function response turn comes immediately after a function call turn."
CALL_AFTER_WRONG_TURN = (
    "Please ensure that function call turn comes immediately after a user turn or after a function response turn."
)
MODEL_TURN_LAST = "Requests ending with a model turn are not supported."
BAD_ROLE = "Please use a valid role: user, model."
PAYLOAD_LIMIT = 20 * 1024 * 1024
_SCHEMA_KEYS = ("parameters", "parametersJsonSchema", "parameters_json_schema")
#: Models that still accept a request ending with a model turn (they continue it: "prefill").
_PREFILL_MODELS = re.compile(r"^(models/)?(gemini-1\.|gemini-2\.|gemini-3-|gemini-3\.1-|gemini-pro-latest)")
#: Models that check thought signatures on the current turn's function calls.
_SIGNATURE_FREE_MODELS = re.compile(r"^(models/)?(gemini-1\.|gemini-2\.)")


@dataclass(frozen=True)
class ModelRules:
    """The rules that differ by model."""

    #: A request whose last content is a model turn is refused.
    refuse_model_turn_last: bool
    #: The first functionCall part of each model step of the current turn needs a thoughtSignature.
    require_signatures: bool


def rules_for(model: str | None) -> ModelRules:
    """The rule set for a model name as it appears in the request path; unknown names get the strictest set."""
    name = (model or "").strip()
    return ModelRules(
        refuse_model_turn_last=not _PREFILL_MODELS.match(name),
        require_signatures=not _SIGNATURE_FREE_MODELS.match(name),
    )


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


def _data_fields(part: Part) -> list[str]:
    """The names of the part's `data` oneof members that are set (an empty text counts as unset)."""
    fields = []
    if part.text is not None and (part.text != "" or part.thought):
        fields.append("text")
    for name, value in (
        ("functionCall", part.function_call),
        ("functionResponse", part.function_response),
        ("inlineData", part.inline_data),
        ("fileData", part.file_data),
        ("executableCode", part.executable_code),
        ("codeExecutionResult", part.code_execution_result),
    ):
        if value is not None:
            fields.append(name)
    return fields


def _check_parts(i: int, c: Content) -> None:
    for j, part in enumerate(c.parts):
        fields = _data_fields(part)
        if not fields:
            raise InvalidRequest(
                f"* GenerateContentRequest.contents[{i}].parts[{j}].data: "
                "required oneof field 'data' must have one initialized field"
            )
        if len(fields) > 1:
            raise InvalidRequest(
                f"Invalid value at 'contents[{i}].parts[{j}]' (oneof), oneof field 'data' is already set. "
                f"Cannot set '{fields[1]}'"
            )


def check_contents(contents: list[Content], model: str | None = None, *, generate: bool = True) -> None:
    """Every rule on the contents: roles, parts, turn order, call/response pairing; for a generate or stream
    request (`generate`) also the model's rules on the last turn and on thought signatures."""
    for i, c in enumerate(contents):
        if c.role not in (None, "user", "model"):
            raise InvalidRequest(BAD_ROLE)
        if not c.parts:
            raise InvalidRequest(f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.")
        _check_parts(i, c)
    for i, c in enumerate(contents):
        prev = contents[i - 1] if i else None
        calls = sum(1 for p in prev.parts if p.function_call is not None) if prev is not None else 0
        responses = sum(1 for p in c.parts if p.function_response is not None)
        own_calls = any(p.function_call is not None for p in c.parts)
        if responses and (prev is None or prev.role != "model" or not calls):
            raise InvalidRequest(RESPONSE_WITHOUT_CALL)
        if prev is not None and prev.role == "model" and calls and responses != calls:
            raise InvalidRequest(CALL_COUNT_MISMATCH)
        if own_calls and c.role == "model" and (prev is None or prev.role == "model"):
            raise InvalidRequest(CALL_AFTER_WRONG_TURN)
    if not generate or not contents:
        return
    rules = rules_for(model)
    if rules.refuse_model_turn_last and contents[-1].role == "model":
        raise InvalidRequest(MODEL_TURN_LAST)
    if rules.require_signatures:
        _check_signatures(contents)


def current_turn_start(contents: list[Content]) -> int:
    """Index after the last user content that is not only function responses (where the current turn begins)."""
    for i in range(len(contents) - 1, -1, -1):
        c = contents[i]
        if c.role != "model" and any(p.function_response is None for p in c.parts):
            return i + 1
    return 0


def _check_signatures(contents: list[Content]) -> None:
    for i in range(current_turn_start(contents), len(contents)):
        c = contents[i]
        if c.role != "model":
            continue
        first = next((p for p in c.parts if p.function_call is not None), None)
        if first is not None and not first.thought_signature:
            name = first.function_call.name if first.function_call else ""
            raise InvalidRequest(
                "Function call is missing a thought_signature in functionCall parts. This is required for tools "
                "to work correctly, and missing thought_signature may lead to degraded model performance. "
                f"Additional data, function call `default_api:{name}` , position {i + 1}. Please refer to "
                "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
            )


def check_payload(raw_size: int) -> None:
    """The whole request (inline media included) must stay within the API's 20 MB request limit."""
    if raw_size > PAYLOAD_LIMIT:
        raise InvalidRequest(f"Request payload size exceeds the limit: {PAYLOAD_LIMIT} bytes.")


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


FUNCTION_CALLING_MODES = ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")
_MODE_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode"


def _unknown_fields(value: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    for key in value:
        if key not in known:
            raise InvalidRequest(
                f"Invalid JSON payload received. Unknown name \"{key}\" at '{where}': Cannot find field."
            )


def check_tool_config(tool_config: Any, tools: Any) -> str | None:
    """toolConfig.functionCallingConfig as the API takes it: a known mode; allowedFunctionNames only with ANY or
    VALIDATED, each a declared function. Returns the mode asked (None: none given, which means AUTO)."""
    if tool_config is None:
        return None
    if not isinstance(tool_config, dict):
        raise InvalidRequest("Invalid value at 'tool_config': expected a ToolConfig object")
    _unknown_fields(
        tool_config,
        ("functionCallingConfig", "function_calling_config", "retrievalConfig", "retrieval_config"),
        "tool_config",
    )
    fcc = tool_config.get("functionCallingConfig", tool_config.get("function_calling_config"))
    if fcc is None:
        return None
    where = "tool_config.function_calling_config"
    if not isinstance(fcc, dict):
        raise InvalidRequest(f"Invalid value at '{where}': expected a FunctionCallingConfig object")
    _unknown_fields(fcc, ("mode", "allowedFunctionNames", "allowed_function_names"), where)
    mode = fcc.get("mode", "MODE_UNSPECIFIED")
    if mode not in FUNCTION_CALLING_MODES:
        raise InvalidRequest(f"Invalid value at '{where}.mode' ({_MODE_TYPE}), {msgspec.json.encode(mode).decode()}")
    names = fcc.get("allowedFunctionNames", fcc.get("allowed_function_names"))
    if names is not None:
        if mode not in ("ANY", "VALIDATED"):
            raise InvalidRequest(
                "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: "
                "allowed_function_names should only be set when the mode is ANY or VALIDATED."
            )
        declared = {
            d.get("name")
            for t in tools or []
            if isinstance(t, dict)
            for d in t.get("functionDeclarations", t.get("function_declarations", [])) or []
            if isinstance(d, dict)
        }
        for name in names if isinstance(names, list) else [names]:
            if name not in declared:
                raise InvalidRequest(
                    "* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: "
                    f"function {name!r} is not declared in tools."
                )
    return "AUTO" if mode == "MODE_UNSPECIFIED" else mode
