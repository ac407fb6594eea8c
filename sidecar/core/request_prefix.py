"""How much of one request is a byte-identical prefix of another, in the order the model reads a request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

_encode = msgspec.json.Encoder().encode


def prompt_bytes(body: Mapping[str, Any]) -> bytes:
    """A generateContent body as the model reads it: system instruction, tool declarations, then each content (the
    implicit prompt cache matches a prefix in this order). Generation and tool configs are settings, not prompt."""
    pieces = [
        _encode(body.get("systemInstruction")),
        _encode(body.get("tools")),
        *(_encode(c) for c in body.get("contents") or []),
    ]
    return b"\n".join(pieces)


def prefix_share(request: Mapping[str, Any], previous: Mapping[str, Any]) -> float:
    """The share of `request`'s prompt bytes that are a byte-identical prefix of `previous`'s (0.0 … 1.0)."""
    mine, theirs = prompt_bytes(request), prompt_bytes(previous)
    if not mine:
        return 0.0
    return common_prefix_length(mine, theirs) / len(mine)


def common_prefix_length(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share (block by block, then byte by byte in the first that differs)."""
    size, block = min(len(a), len(b)), 4096
    start = 0
    while start < size and a[start : start + block] == b[start : start + block]:
        start += block
    end = min(start + block, size)
    while start < end and a[start] == b[start]:
        start += 1
    return start
