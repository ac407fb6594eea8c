"""Tokens every request adds to the history: the system instruction and the tool declarations (local estimate)."""

from __future__ import annotations

import math
from typing import Any

import msgspec

from sidecar.core.history import Part
from sidecar.core.tokens import estimate_tokens


def request_overhead_tokens(system_instruction: str | None, tools: list[dict[str, Any]] | None) -> int:
    """What a request sends besides the contents, estimated as the history is: the system instruction's text with
    the reference's estimator, the tool declarations at four characters of JSON per token (Gemini counts both
    in promptTokenCount, so an estimate without them reads low right after a history rewrite)."""
    total = 0
    if system_instruction:
        total += estimate_tokens([Part(text=system_instruction)])
    if tools:
        total += math.ceil(len(msgspec.json.encode(tools)) / 4)
    return total
