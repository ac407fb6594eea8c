"""Wire types of the session methods: new, list, resume, transcript, import, undo."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from sidecar.protocol.types import Status, Trigger, shown_as

MessageKind = Literal["user", "model", "toolCall", "toolResult", "ideContext", "env", "summary", "info", "error"]


class _Wire(msgspec.Struct, rename="camel", kw_only=True):
    """camelCase on the wire, every field always present."""


class NewSessionResult(_Wire):
    session_id: str


class SessionSummary(_Wire):
    """One entry of sidecar/listSessions (ISO 8601 times; the title is the first user message, shortened)."""

    session_id: str
    title: str | None
    start_time: str
    last_updated: str
    message_count: int
    compaction_count: int


class ResumeSessionResult(_Wire):
    session_id: str
    message_count: int


class ImportSessionResult(_Wire):
    """What an import produced; `sidecar import --json` prints the same fields and the file's path."""

    session_id: str
    message_count: int
    warnings: list[str]


class TranscriptToolCall(msgspec.Struct, rename="camel", omit_defaults=True):
    """A tool call of a model message, as data: editors title its card with `name`, never with the text."""

    name: str
    args: Any = None
    id: str | None = None


class TranscriptMessage(
    msgspec.Struct, tag="message", tag_field="type", rename="camel", omit_defaults=True, gc=False
):
    id: str
    time: str
    role: Literal["user", "model"]
    kind: Annotated[str, shown_as(MessageKind)]
    text: str
    turn_id: str | None = None
    tool_calls: list[TranscriptToolCall] | None = None


class TranscriptCompaction(
    msgspec.Struct, tag="compaction", tag_field="type", rename="camel", omit_defaults=True
):
    id: str
    time: str
    trigger: Trigger
    status: Status
    original_token_count: int
    new_token_count: int
    undone: bool
    snapshot: str | None = None  # the <state_snapshot> text of a COMPRESSED compaction


TranscriptEntry = TranscriptMessage | TranscriptCompaction


class GetTranscriptResult(_Wire):
    session_id: str
    entries: list[TranscriptEntry]


class UndoCompactionResult(_Wire):
    restored: bool
    message: str
