"""Local token estimate identical to the reference's estimateTokenCountSync, in exact quarter tokens."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from sidecar.core.history import Content, Part
from sidecar.core.jsonlen import ascii_and_units, js_json_length, utf16_len

__all__ = [
    "DEFAULT_CHARS_PER_TOKEN",
    "content_quarters",
    "estimate_content_tokens",
    "estimate_history_tokens",
    "estimate_text_tokens",
    "estimate_tokens",
    "js_truthy",
    "part_quarters",
    "parts_quarters",
    "quarters_to_tokens",
    "text_quarters",
]

DEFAULT_CHARS_PER_TOKEN = 4
NON_ASCII_TOKENS_PER_CHAR = 1.5
MAX_CHARS_FOR_FULL_HEURISTIC = 100_000
MAX_RECURSION_DEPTH = 3
IMAGE_TOKEN_ESTIMATE = 3000
PDF_TOKEN_ESTIMATE = 25_800

_MISSING: Any = object()  # JavaScript's `undefined`: the key is absent


def js_truthy(v: Any) -> bool:
    """JavaScript truthiness of a JSON value ({} and [] are true, "" 0 NaN null false are not)."""
    if v is None or v is False:
        return False
    if isinstance(v, str):
        return v != ""
    if isinstance(v, (int, float)):
        return v == v and v != 0
    return True


# ---------------------------------------------------------------- part anatomy (Part structs or dicts)


class _FunctionResponse:
    """The fields of a functionResponse that the estimate reads."""

    __slots__ = ("name", "nested", "response")

    def __init__(self, name: Any, response: Any, nested: Any) -> None:
        self.name, self.response, self.nested = name, response, nested


def _function_response(part: Any) -> _FunctionResponse | None:
    """`part.functionResponse` when it is truthy, else None."""
    if isinstance(part, Part):
        fr = part.function_response
        if fr is None:
            return None
        # A struct field left at None is absent on the wire, i.e. `undefined` to the reference.
        return _FunctionResponse(fr.name, _MISSING if fr.response is None else fr.response, fr.parts)
    fr = part.get("functionResponse") if isinstance(part, Mapping) else None
    if not js_truthy(fr):
        return None
    if not isinstance(fr, Mapping):
        return _FunctionResponse(None, _MISSING, None)
    return _FunctionResponse(fr.get("name"), fr.get("response", _MISSING), fr.get("parts"))


def _text(part: Any) -> str | None:
    text = part.text if isinstance(part, Part) else part.get("text") if isinstance(part, Mapping) else None
    return text if isinstance(text, str) else None


def _media_quarters(part: Any) -> int:
    """Quarter tokens of an image or PDF part (by inlineData, then fileData mime type), else 0."""
    if isinstance(part, Part):
        inline, file = part.inline_data, part.file_data
        mime: Any = (inline.mime_type if inline is not None else None) or (file.mime_type if file is not None else None)
    elif isinstance(part, Mapping):
        inline, file = part.get("inlineData"), part.get("fileData")
        first = inline.get("mimeType") if isinstance(inline, Mapping) else None
        mime = first if js_truthy(first) else file.get("mimeType") if isinstance(file, Mapping) else None
    else:
        return 0
    if isinstance(mime, str):
        if mime.startswith("image/"):
            return 4 * IMAGE_TOKEN_ESTIMATE
        if mime.startswith("application/pdf"):
            return 4 * PDF_TOKEN_ESTIMATE
    return 0


def _name_length(name: Any) -> int:
    """`name?.length ?? 0`."""
    if isinstance(name, str):
        return utf16_len(name)
    return len(name) if isinstance(name, (list, tuple)) else 0


def _response_length(response: Any) -> int:
    """The response's characters: its own length if a string, else its JSON length; absent/null is 0."""
    if response is _MISSING or response is None:
        return 0
    return utf16_len(response) if isinstance(response, str) else js_json_length(response)


def _nested(fr: _FunctionResponse) -> list[Any] | tuple[Any, ...] | None:
    nested = fr.nested
    return nested if isinstance(nested, (list, tuple)) and nested else None


# ---------------------------------------------------------------- default path: exact quarter tokens


def text_quarters(text: str) -> int:
    """Quarter tokens of one text: 1 per code unit <= 127 and 6 per other unit; length over 100,000 units."""
    ascii_count, units = ascii_and_units(text)
    if units > MAX_CHARS_FOR_FULL_HEURISTIC:
        return units
    return ascii_count + 6 * (units - ascii_count)


def part_quarters(part: Any, depth: int = 0) -> int:
    """Exact estimate of one part in quarter tokens (4 chars per token), before any floor."""
    text = _text(part)
    if text is not None:
        return text_quarters(text)
    fr = _function_response(part)
    if fr is not None:
        quarters = _name_length(fr.name) + _response_length(fr.response)
        nested = _nested(fr)
        if nested is not None and depth + 1 <= MAX_RECURSION_DEPTH:
            quarters += 4 * (parts_quarters(nested, depth + 1) // 4)  # the nested estimate is floored
        return quarters
    return _media_quarters(part) or js_json_length(part)


def parts_quarters(parts: Iterable[Any], depth: int = 0) -> int:
    """Exact estimate of a list of parts in quarter tokens, before the final floor."""
    return sum(part_quarters(p, depth) for p in parts)


def _parts_of(content: Content | Mapping[str, Any]) -> Iterable[Any]:
    """`content.parts || []`."""
    if isinstance(content, Content):
        return content.parts
    return content.get("parts") or ()


def content_quarters(content: Content | Mapping[str, Any]) -> int:
    """Quarter tokens of one content's parts; sum them and floor once for a history."""
    return parts_quarters(_parts_of(content))


def quarters_to_tokens(quarters: int) -> int:
    """Math.floor of a quarter-token sum."""
    return quarters // 4


def estimate_content_tokens(content: Content | Mapping[str, Any]) -> int:
    """The estimate of one content's parts."""
    return content_quarters(content) // 4


def estimate_history_tokens(contents: Iterable[Content | Mapping[str, Any]]) -> int:
    """The estimate of all parts of a history, as `estimateTokenCountSync(history.flatMap(c => c.parts))`."""
    return sum(content_quarters(c) for c in contents) // 4


# ---------------------------------------------------------------- other chars-per-token: faithful doubles


def estimate_text_tokens(text: str, chars_per_token: float = DEFAULT_CHARS_PER_TOKEN) -> float:
    """The reference's per-text estimate, summed in the same order with the same double rounding."""
    ascii_count, units = ascii_and_units(text)
    if units > MAX_CHARS_FOR_FULL_HEURISTIC:
        return units / chars_per_token
    per_ascii = 1 / chars_per_token
    scale = max(per_ascii.as_integer_ratio()[1], 2)
    if units * max(per_ascii, NON_ASCII_TOKENS_PER_CHAR) * scale < 2**53:
        # Every partial sum is a multiple of 1/scale below 2**53/scale: exact, so the order does not matter.
        return float(Fraction(per_ascii) * ascii_count + Fraction(3, 2) * (units - ascii_count))
    tokens = 0.0
    for unit in memoryview(text.encode("utf-16-le", "surrogatepass")).cast("H"):
        tokens += per_ascii if unit <= 127 else NON_ASCII_TOKENS_PER_CHAR
    return tokens


def _estimate_float(parts: Iterable[Any], cpt: float, depth: int) -> int:
    total = 0.0
    for part in parts:
        text = _text(part)
        if text is not None:
            total += estimate_text_tokens(text, cpt)
            continue
        fr = _function_response(part)
        if fr is not None:
            tokens = _name_length(fr.name) / cpt
            tokens += _response_length(fr.response) / cpt
            nested = _nested(fr)
            if nested is not None:
                tokens += estimate_tokens(nested, cpt, depth + 1)
            total += tokens
            continue
        media = _media_quarters(part)
        total += media // 4 if media else js_json_length(part) / cpt
    return math.floor(total)


def estimate_tokens(parts: Iterable[Any], chars_per_token: float = DEFAULT_CHARS_PER_TOKEN, depth: int = 0) -> int:
    """`estimateTokenCountSync(parts, depth, charsPerToken)`: parts are Part structs or REST-JSON dicts."""
    if chars_per_token <= 0:
        raise ValueError(f"chars_per_token must be positive, got {chars_per_token}")
    if depth > MAX_RECURSION_DEPTH:
        return 0
    if chars_per_token == DEFAULT_CHARS_PER_TOKEN:
        return parts_quarters(parts, depth) // 4
    return _estimate_float(parts, float(chars_per_token), depth)
