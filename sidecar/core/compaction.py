"""Compaction arithmetic of the reference: the split point and the function-response token budget."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

import msgspec

from sidecar.core.history import Content, Part
from sidecar.core.jsonlen import js_json_dumps, js_json_length, utf8_counts, utf16_len
from sidecar.core.tokens import MAX_CHARS_FOR_FULL_HEURISTIC, content_quarters, js_truthy, text_quarters

__all__ = [
    "COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET",
    "COMPRESSION_PRESERVE_THRESHOLD",
    "DEFAULT_COMPRESSION_TOKEN_THRESHOLD",
    "DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD",
    "ContentMeasure",
    "SaveToolOutput",
    "ends_with_plain_model_reply",
    "find_split_point",
    "format_truncated_tool_output",
    "function_response_text",
    "is_split_candidate",
    "measure_content",
    "tool_output_threshold",
    "truncate_history_to_budget",
]

DEFAULT_COMPRESSION_TOKEN_THRESHOLD = 0.5
COMPRESSION_PRESERVE_THRESHOLD = 0.3
COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET = 50_000
DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD = 40_000

ContentLike = Content | Mapping[str, Any]
C = TypeVar("C", Content, Mapping[str, Any])
SaveToolOutput = Callable[[str, str], str | os.PathLike[str]]  # (text, tool name) -> path of the saved file

_MISSING: Any = object()
_encode = msgspec.json.Encoder().encode


def _parts(content: ContentLike) -> Sequence[Any]:
    if isinstance(content, Content):
        return content.parts
    parts = content.get("parts")
    return parts if isinstance(parts, (list, tuple)) else ()


def _role(content: ContentLike) -> Any:
    return content.role if isinstance(content, Content) else content.get("role")


def _field(part: Any, wire: str, attr: str) -> Any:
    if isinstance(part, Part):
        return getattr(part, attr)
    return part.get(wire) if isinstance(part, Mapping) else None


# ---------------------------------------------------------------- split point


class ContentMeasure(NamedTuple):
    """What the compaction arithmetic needs of one content; cache it per content to avoid O(history) work."""

    json_length: int  # JSON.stringify(content).length, the split point's size measure
    quarters: int  # exact token estimate of its parts, in quarter tokens (sum, then floor(total / 4))


def measure_content(content: ContentLike) -> ContentMeasure:
    """Both measures of one content (for a plain-text Content, from a single encoding pass)."""
    return _measure_plain_text(content) or ContentMeasure(js_json_length(content), content_quarters(content))


def _measure_plain_text(content: ContentLike) -> ContentMeasure | None:
    """Fast path for a Content of text parts only, whose only non-ASCII characters are in the texts.

    Then the JSON's non-ASCII characters are exactly the texts' ones, and each text's quarter tokens are its
    UTF-16 units plus 5 per non-ASCII unit, so one msgspec encoding gives both measures. None if not applicable.
    """
    if not isinstance(content, Content) or not (content.role is None or content.role.isascii()):
        return None
    lengths = []
    for p in content.parts:
        text, signature = p.text, p.thought_signature
        if text is None or (signature is not None and not signature.isascii()):
            return None
        if p != Part(text=text, thought=p.thought, thought_signature=signature):
            return None  # some other field is set
        lengths.append(len(text))
    try:
        data = _encode(content)
    except UnicodeEncodeError:  # lone surrogates
        return None
    ascii_count, non_ascii, astral = utf8_counts(data)
    # Each text's UTF-16 length must stay within the full heuristic (<= 100,000 units).
    if any(n > (MAX_CHARS_FOR_FULL_HEURISTIC if astral == 0 else MAX_CHARS_FOR_FULL_HEURISTIC // 2) for n in lengths):
        return None
    text_units = sum(lengths) + astral
    return ContentMeasure(ascii_count + non_ascii + astral, text_units + 5 * (non_ascii + astral))


def is_split_candidate(content: ContentLike) -> bool:
    """A kept tail may start here: a user turn without any functionResponse part."""
    return _role(content) == "user" and not any(
        js_truthy(_field(p, "functionResponse", "function_response")) for p in _parts(content)
    )


def ends_with_plain_model_reply(contents: Sequence[ContentLike]) -> bool:
    """The last content is a model turn without a functionCall, so everything may be compressed."""
    if not contents:
        return False
    last = contents[-1]
    return _role(last) == "model" and not any(
        js_truthy(_field(p, "functionCall", "function_call")) for p in _parts(last)
    )


def find_split_point(contents: Sequence[ContentLike], fraction: float, sizes: Sequence[int] | None = None) -> int:
    """Index of the oldest content to keep when compressing `fraction` of the history by JSON characters.

    Same result as the reference's findCompressSplitPoint; may return len(contents) (compress all).
    `sizes` are precomputed js_json_length values of the contents (e.g. cached ContentMeasure.json_length).
    """
    if not (0 < fraction < 1):
        raise ValueError(f"Fraction must be between 0 and 1, got {fraction}")
    if sizes is None:
        sizes = [js_json_length(c) for c in contents]
    elif len(sizes) != len(contents):
        raise ValueError(f"got {len(sizes)} sizes for {len(contents)} contents")
    target = sum(sizes) * fraction
    last_split_point = 0  # compressing nothing is always valid
    cumulative = 0
    for i, content in enumerate(contents):
        if is_split_candidate(content):
            if cumulative >= target:
                return i
            last_split_point = i
        cumulative += sizes[i]
    if ends_with_plain_model_reply(contents):
        return len(contents)
    return last_split_point


# ---------------------------------------------------------------- function-response budget


def tool_output_threshold(
    token_limit: int, last_prompt_tokens: int, configured: int = DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD
) -> int:
    """Characters a truncated tool output may show: min(4 x remaining tokens, configured).

    Unlike the reference, the result is clamped at 0 once the context is full (the reference goes negative
    and then slices nonsense); at 0 a placeholder shows no output text at all, only the saved file.
    """
    return max(0, min(4 * (token_limit - last_prompt_tokens), configured))


def _utf16_slice(text: str, start: int, stop: int | None) -> str:
    """`text.slice(start, stop)` in UTF-16 code units (may cut a surrogate pair, as JavaScript does)."""
    if utf16_len(text) == len(text):
        return text[start:stop]
    data = text.encode("utf-16-le", "surrogatepass")
    return data[2 * start : None if stop is None else 2 * stop].decode("utf-16-le", "surrogatepass")


def format_truncated_tool_output(content: str, output_file: str, max_chars: int) -> str:
    """The placeholder of formatTruncatedToolOutput: header, first 20% and last 80% of `max_chars` characters.

    Deviation for max_chars <= 0 (unreachable through tool_output_threshold's clamp except at 0): the head
    and tail are empty, where the reference's `slice(-0)` would repeat the whole output.
    """
    length = utf16_len(content)
    if length <= max_chars:
        return content
    head_chars = math.floor(max_chars * 0.2)
    tail_chars = max_chars - head_chars
    head = _utf16_slice(content, 0, head_chars) if head_chars > 0 else ""
    tail = _utf16_slice(content, length - tail_chars, None) if tail_chars > 0 else ""
    omitted = length - head_chars - tail_chars
    return (
        f"Output too large. Showing first {head_chars:,} and last {tail_chars:,} characters. "
        f"For full output see: {output_file}\n{head}\n\n... [{omitted:,} characters omitted] ...\n\n{tail}"
    )


def function_response_text(response: Any) -> str | None:
    """The string the budget measures and saves: the response if a string, else its string `output`,
    else its string `content`, else its pretty JSON. None stands for an absent response (`undefined`)."""
    if response is _MISSING:
        return None
    if isinstance(response, str):
        return response
    if isinstance(response, Mapping):
        for key in ("output", "content"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return js_json_dumps(response, indent=2)


def _response_of(part: Any) -> tuple[bool, Any, Any]:
    """(has a truthy functionResponse, its response or _MISSING, its name)."""
    if isinstance(part, Part):
        fr = part.function_response
        if fr is None:
            return False, _MISSING, None
        return True, _MISSING if fr.response is None else fr.response, fr.name
    fr = part.get("functionResponse") if isinstance(part, Mapping) else None
    if not js_truthy(fr):
        return False, _MISSING, None
    if not isinstance(fr, Mapping):
        return True, _MISSING, None
    return True, fr.get("response", _MISSING), fr.get("name")


def _with_output(part: Any, output: str) -> Any:
    """A part holding only the functionResponse, its response replaced by {output}."""
    if isinstance(part, Part):
        assert part.function_response is not None
        return Part(function_response=msgspec.structs.replace(part.function_response, response={"output": output}))
    return {"functionResponse": {**part["functionResponse"], "response": {"output": output}}}


def _with_parts(content: C, parts: list[Any]) -> C:
    if isinstance(content, Content):
        return msgspec.structs.replace(content, parts=parts)
    return {**content, "parts": parts}


def truncate_history_to_budget(
    history: Sequence[C],
    *,
    budget: int = COMPRESSION_FUNCTION_RESPONSE_TOKEN_BUDGET,
    tool_output_threshold: int,
    save: SaveToolOutput,
) -> list[C]:
    """Keep the newest function responses whole up to `budget` tokens; replace older ones by a placeholder.

    Walks contents newest first and parts last first, like the reference's truncateHistoryToBudget. An
    over-budget response is handed to `save(text, tool_name)`, which stores it and returns the file path,
    and becomes `{output: placeholder}`. If `save` raises, the part is kept and counted whole.
    Returns a new list of the same length and order; the input is not modified. Every content is copied
    (a dict content without parts gains `parts: []`, as in the reference).
    """
    counter = 0
    result: list[C] = list(history)
    for i in range(len(history) - 1, -1, -1):
        content = history[i]
        parts = list(_parts(content))
        for j in range(len(parts) - 1, -1, -1):
            is_response, response, name = _response_of(parts[j])
            if not is_response:
                continue
            text = function_response_text(response)
            tokens = 0 if text is None else text_quarters(text) // 4
            if counter + tokens <= budget:
                counter += tokens
                continue
            try:
                if text is None or not (name is None or isinstance(name, str)):
                    raise TypeError("nothing to save")  # the reference fails here too and keeps the part
                path = save(text, "unknown_tool" if name is None else name)
                placeholder = format_truncated_tool_output(text, os.fspath(path), tool_output_threshold)
            except Exception:
                counter += tokens
                continue
            parts[j] = _with_output(parts[j], placeholder)
            counter += text_quarters(placeholder) // 4
        result[i] = _with_parts(content, parts)
    return result
