"""Deterministic replies of the fake Gemini: token rule, chat text, stream chunking, response JSON."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from sidecar.core.history import Content, content_text

from .faults import Call
from .snapshot import one_line

MIN_CHUNKS = 3
MAX_CHUNKS = 6
QUOTE_LIMIT = 60
_WORD_START = re.compile(r"(?<=\s)(?=\S)")


def json_size(value: Any) -> int:
    """UTF-8 byte length of the compact JSON of a value (msgspec encoding, key order as given)."""
    return len(msgspec.json.encode(value))


def count_tokens(*values: Any, multiplier: float = 1) -> int:
    """The token rule: ceil(sum of json_size(v) for present values / 4), then × multiplier, rounded up."""
    base = math.ceil(sum(json_size(v) for v in values if v is not None) / 4)
    return base * multiplier if isinstance(multiplier, int) else math.ceil(base * multiplier)


def prompt_tokens(body: dict[str, Any], multiplier: float = 1) -> int:
    """promptTokenCount of a generate/countTokens request body: contents + systemInstruction + tools."""
    inner = body.get("generateContentRequest")
    if isinstance(inner, dict) and "contents" not in body:
        body = inner
    return count_tokens(
        body.get("contents"),
        body.get("systemInstruction", body.get("system_instruction")),
        body.get("tools"),
        multiplier=multiplier,
    )


def instruction_text(system_instruction: Any) -> str:
    """The text of a systemInstruction given as a string, a Content, a list of parts or strings."""
    if isinstance(system_instruction, str):
        return system_instruction
    if isinstance(system_instruction, dict):
        if "parts" in system_instruction:
            return instruction_text(system_instruction["parts"])
        text = system_instruction.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(system_instruction, list):
        return "\n".join(instruction_text(p) for p in system_instruction)
    return ""


def chat_text(contents: Sequence[Content], number: int) -> str:
    """The normal chat reply: quotes the last user text, or acknowledges the tool results it carries."""
    turns = f"(history: {len(contents)} turn{'' if len(contents) == 1 else 's'})"
    last = next((c for c in reversed(contents) if c.role != "model"), None)
    responses = [p.function_response for p in last.parts if p.function_response] if last else []
    if responses:
        acks = "; ".join(
            f"{r.name or 'unknown_tool'} returned {one_line(msgspec.json.encode(r.response).decode(), QUOTE_LIMIT)}"
            for r in responses
        )
        return f"Fake Gemini reply #{number}: thanks, I received the tool result: {acks} {turns}"
    said = one_line(content_text(last), QUOTE_LIMIT) if last else ""
    return f'Fake Gemini reply #{number}: you said "{said}" {turns}'


def split_chunks(text: str) -> list[str]:
    """Split a text at word boundaries into 3–6 pieces (fewer only if it has fewer words); lossless."""
    words = _WORD_START.split(text)
    if len(words) <= 1:
        return [text]
    n = max(MIN_CHUNKS, min(MAX_CHUNKS, len(words) // 4))
    n = min(n, len(words))
    size, extra = divmod(len(words), n)
    out, i = [], 0
    for k in range(n):
        j = i + size + (1 if k < extra else 0)
        out.append("".join(words[i:j]))
        i = j
    return out


#: The opaque thoughtSignature the fake puts on a Gemini 3 reply's first function call.
FAKE_SIGNATURE = "ZmFrZS10aG91Z2h0LXNpZ25hdHVyZQ=="


def text_parts(text: str) -> list[dict[str, Any]]:
    return [{"text": text}]


def call_parts(calls: Sequence[Call], text: str | None = None, *, signed: bool = False) -> list[dict[str, Any]]:
    """Model parts for function calls (optionally preceded by a text part). `signed`: the first call carries a
    thoughtSignature, as Gemini 3 models send it (and expect it back)."""
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for n, c in enumerate(calls):
        call: dict[str, Any] = {"name": c.name, "args": c.args}
        if c.id is not None:
            call["id"] = c.id
        part: dict[str, Any] = {"functionCall": call}
        if signed and n == 0:
            part["thoughtSignature"] = FAKE_SIGNATURE
        parts.append(part)
    return parts


def usage(prompt: int, candidates: int) -> dict[str, int]:
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "totalTokenCount": prompt + candidates,
    }


def response(
    parts: list[dict[str, Any]] | None,
    *,
    model: str,
    response_id: str,
    finish: bool = True,
    usage_metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A GenerateContentResponse (one stream chunk, or the whole non-stream reply).

    parts=None gives "candidates": [] (a reply with no candidates at all).
    """
    body: dict[str, Any] = {"candidates": []}
    if parts is not None:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if finish:
            cand["finishReason"] = "STOP"
        body["candidates"] = [cand]
    if usage_metadata is not None:
        body["usageMetadata"] = usage_metadata
    body["modelVersion"] = model
    body["responseId"] = response_id
    return body
