"""What the model saw and what the recording holds, in one comparable shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sidecar.core.history import dump_contents, parse_contents
from tests.reliability.proc import records, replay

#: Compaction statuses that leave the model-facing history as it was (docs/recording.md).
FAILED_STATUSES = frozenset(
    {
        "COMPRESSION_FAILED_INFLATED_TOKEN_COUNT",
        "COMPRESSION_FAILED_INSUFFICIENT_REDUCTION",
        "COMPRESSION_FAILED_TOKEN_COUNT_ERROR",
        "COMPRESSION_FAILED_EMPTY_SUMMARY",
    }
)


def normal(contents: list[Any]) -> list[dict[str, Any]]:
    """Contents (REST dicts or Content values) as plain, canonical JSON values."""
    parsed = parse_contents(contents) if contents and isinstance(contents[0], dict) else contents
    return msgspec.json.decode(msgspec.json.encode(dump_contents(parsed)))  # type: ignore[no-any-return]


def chat_requests(fake: Any) -> list[Any]:
    """The fake's log of chat (non-summary) stream requests, oldest first."""
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def last_chat_contents(fake: Any) -> list[dict[str, Any]]:
    return normal(chat_requests(fake)[-1].body["contents"])


def recorded_history(path: Path) -> list[dict[str, Any]]:
    """The model-facing history a resumed sidecar would rebuild from the file (strict replay)."""
    return normal(replay(path).history)


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"text": value}]}


def new_records(path: Path, before: int) -> list[dict[str, Any]]:
    return records(path)[before:]


def message_ids(path: Path) -> list[str]:
    return [r["id"] for r in records(path) if r["type"] == "message"]
