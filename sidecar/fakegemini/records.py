"""What the fake logs of each request (RequestRecord), and the error answer in the real shape."""

from __future__ import annotations

from typing import Any

import msgspec

from sidecar.core.history import Content, parse_contents

from . import faults
from .server import Plan


class RequestRecord(msgspec.Struct, kw_only=True):
    """One logged request. The API key itself is never stored, only whether one was sent."""

    index: int
    time: float
    method: str
    path: str
    query: dict[str, str]
    model: str | None
    kind: str  # "generate" | "stream" | "count" | "unknown"
    summary: bool
    has_key: bool
    body: Any
    step: dict[str, Any] | None = None
    status: int = 0
    outcome: str = ""  # "reply" | "error" | "cut" | "midstream_error"
    api: str = "gemini"  # "gemini" | "vertex" | "express" | "token" | ""
    project: str | None = None
    location: str | None = None
    auth: str = ""  # "key" | "bearer" | "" (how the request was authorised; never the secret itself)

    def contents(self) -> list[Content]:
        """The request's contents as Content values."""
        raw = self.body.get("contents", []) if isinstance(self.body, dict) else []
        return parse_contents(raw)


def _error(code: int, message: str | None = None, **kw: Any) -> Plan:
    return Plan("json", status=code, body=faults.error_body(code, message, **kw))
