"""Session record types (a versioned msgspec tagged union) and the replay that turns records into state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from sidecar.core.history import Content

FORMAT_VERSION = 1

MODEL_FACING_KINDS = frozenset({"user", "model", "toolCall", "toolResult", "ideContext", "env"})
DISPLAY_KINDS = frozenset({"info", "error"})
MESSAGE_KINDS = MODEL_FACING_KINDS | DISPLAY_KINDS
_USER_SIDE_KINDS = frozenset({"user", "toolResult", "ideContext", "env"})

COMPRESSED = "COMPRESSED"
CONTENT_TRUNCATED = "CONTENT_TRUNCATED"
HISTORY_CHANGING_STATUSES = frozenset({COMPRESSED, CONTENT_TRUNCATED})
COMPACTION_TOKEN_SOURCE = "estimate"
TITLE_MAX = 80
SUMMARY_MAX = 200


# ---------------------------------------------------------------- records (one JSON line each)


class _Record(msgspec.Struct, tag_field="type", rename="camel", omit_defaults=True, kw_only=True, gc=False):
    time: str  # ISO 8601 UTC, milliseconds, "Z"


class SessionRecord(_Record, tag="session"):
    """First line of every file: format version and who the session belongs to."""

    version: int
    session_id: str
    project_root: str
    project_id: str
    model: str
    title: str | None = None
    sidecar_version: str | None = None
    imported_from: dict[str, Any] | None = None


class MessageRecord(_Record, tag="message"):
    """One message. `content` None = display only (info, error, or a message kept only for the transcript)."""

    id: str
    kind: str
    content: Content | None = None
    text: str | None = None
    turn_id: str | None = None
    meta: dict[str, Any] | None = None


class UsageRecord(_Record, tag="usage"):
    prompt_token_count: int
    source: str
    message_id: str | None = None
    raw: dict[str, Any] | None = None


class CompactionRecord(_Record, tag="compaction"):
    """One compaction attempt. COMPRESSED replaces the history; CONTENT_TRUNCATED only replaces contents."""

    id: str
    trigger: str
    status: str
    original_token_count: int
    new_token_count: int
    snapshot: str | None = None
    summary: Content | None = None
    ack: Content | None = None
    env: Content | None = None
    kept_from: str | None = None
    replacements: dict[str, Content] | None = None


class UndoCompactionRecord(_Record, tag="undoCompaction"):
    compaction_id: str


class RewindRecord(_Record, tag="rewind"):
    """Drops message `to_id` and all after it from the model-facing history (the transcript keeps them)."""

    to_id: str


class StatsRecord(_Record, tag="stats"):
    """Counters written at turn and compaction boundaries, so listing sessions reads only a file's tail."""

    message_count: int
    compaction_count: int
    title: str | None = None


Record = (
    SessionRecord | MessageRecord | UsageRecord | CompactionRecord | UndoCompactionRecord | RewindRecord | StatsRecord
)


class Header(msgspec.Struct, rename="camel"):
    """The part of a first line read before anything else: is it a session, and which format version."""

    type: str = ""
    version: int = 0


def head_ids(compaction_id: str, with_env: bool) -> list[str]:
    """Stable ids of the contents a compaction puts in front of the kept tail: [env], summary, ack."""
    ids = [f"{compaction_id}.summary", f"{compaction_id}.ack"]
    return [f"{compaction_id}.env", *ids] if with_env else ids


# ---------------------------------------------------------------- what editors see


class TranscriptMessage(
    msgspec.Struct, tag="message", tag_field="type", rename="camel", omit_defaults=True, gc=False
):
    id: str
    time: str
    role: Literal["user", "model"]
    kind: str
    text: str
    turn_id: str | None = None


class TranscriptCompaction(msgspec.Struct, tag="compaction", tag_field="type", rename="camel"):
    id: str
    time: str
    trigger: str
    status: str
    original_token_count: int
    new_token_count: int
    undone: bool


TranscriptEntry = TranscriptMessage | TranscriptCompaction


class LastUsage(msgspec.Struct, rename="camel", frozen=True):
    prompt_token_count: int
    source: str


def _clip(text: str, limit: int = SUMMARY_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_clip(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("output", "content", "error"):
            if isinstance(value.get(key), str):
                return _clip(value[key])
    if isinstance(value, str):
        return _clip(value)
    return _clip(msgspec.json.encode(value).decode())


def display_text(content: Content) -> str:
    """Readable text of a content: its text parts, then one line per tool call, tool result or attachment."""
    parts = content.parts
    if len(parts) == 1 and parts[0].text is not None and not parts[0].thought:
        return parts[0].text  # the common case, without building lists
    texts: list[str] = []
    extras: list[str] = []
    for p in parts:
        if p.text is not None:
            if not p.thought:
                texts.append(p.text)
        elif p.function_call is not None:
            extras.append(f"→ {p.function_call.name}({_json_clip(p.function_call.args or {})})")
        elif p.function_response is not None:
            extras.append(f"← {p.function_response.name}: {_json_clip(p.function_response.response)}")
        elif p.inline_data is not None:
            extras.append(f"[attachment {p.inline_data.mime_type or 'data'}]")
        elif p.file_data is not None:
            extras.append(f"[file {p.file_data.file_uri}]")
    text = "".join(texts)
    if extras:
        return "\n".join([text, *extras]) if text else "\n".join(extras)
    return text


def _text_of(rec: MessageRecord) -> str:
    if rec.text is not None:
        return rec.text
    return "" if rec.content is None else display_text(rec.content)


def transcript_message(rec: MessageRecord) -> TranscriptMessage:
    """The transcript entry of a message record: display text, and who speaks."""
    content = rec.content
    if content is not None and content.role in ("user", "model"):
        role: Literal["user", "model"] = "user" if content.role == "user" else "model"
    else:
        role = "user" if rec.kind in _USER_SIDE_KINDS else "model"
    return TranscriptMessage(rec.id, rec.time, role, rec.kind, _text_of(rec), rec.turn_id)


def title_of(text: str) -> str | None:
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return _clip(first, TITLE_MAX) if first else None


# ---------------------------------------------------------------- replay


class ReplayError(Exception):
    """A record that contradicts the ones before it (the file is not a consistent session)."""


@dataclass(slots=True)
class _Applied:
    """What undoing one history-changing compaction needs."""

    compaction_id: str
    before: list[Content]
    before_ids: list[str]
    after_ids: list[str]
    usage: LastUsage | None
    usage_len: int


class Replay:
    """Applies records in file order. After the last one: history (+ ids), transcript, usage, counters."""

    def __init__(self) -> None:
        self.metadata: SessionRecord | None = None
        self.history: list[Content] = []
        self.history_ids: list[str] = []
        self._log: list[MessageRecord | TranscriptCompaction] = []  # transcript entries, built on demand
        self._transcript: list[TranscriptEntry] = []
        self.message_count = 0
        self.compaction_count = 0
        self.title: str | None = None
        self.last_time: str | None = None
        self._usage: LastUsage | None = None
        self._usage_len = 0  # history length when the usage was recorded
        self._applied: list[_Applied] = []
        self._entries: dict[str, TranscriptCompaction] = {}

    @property
    def transcript(self) -> list[TranscriptEntry]:
        """Every message and compaction so far, in order (texts are derived here, not during replay)."""
        for item in self._log[len(self._transcript) :]:
            self._transcript.append(item if isinstance(item, TranscriptCompaction) else transcript_message(item))
        return self._transcript

    @property
    def last_usage(self) -> LastUsage | None:
        return self._usage

    @property
    def undoable(self) -> list[str]:
        """Ids of compactions that can still be undone, latest last."""
        return [a.compaction_id for a in self._applied]

    def apply(self, record: Record) -> None:
        if self.metadata is None and type(record) is not SessionRecord:
            raise ReplayError(f"expected the session record first, got a {type(record).__name__}")
        self.last_time = record.time
        if isinstance(record, MessageRecord):
            self._message(record)
        elif isinstance(record, UsageRecord):
            self._usage = LastUsage(record.prompt_token_count, record.source)
            self._usage_len = len(self.history)
        elif isinstance(record, CompactionRecord):
            self._compaction(record)
        elif isinstance(record, UndoCompactionRecord):
            self._undo(record.compaction_id)
        elif isinstance(record, RewindRecord):
            self._rewind(record.to_id)
        elif isinstance(record, SessionRecord):
            if self.metadata is not None:
                raise ReplayError("a second session record")
            self.metadata = record
            self.title = record.title
        # StatsRecord: counters for listing; replay recounts.

    def _message(self, rec: MessageRecord) -> None:
        self.message_count += 1
        content = rec.content
        if content is not None and rec.kind not in DISPLAY_KINDS:
            self.history.append(content)
            self.history_ids.append(rec.id)
        if self.title is None and rec.kind == "user":
            self.title = title_of(_text_of(rec))
        self._log.append(rec)

    def _compaction(self, rec: CompactionRecord) -> None:
        if rec.id in self._entries:
            raise ReplayError(f"compaction id {rec.id!r} used twice")
        entry = TranscriptCompaction(
            rec.id, rec.time, rec.trigger, rec.status, rec.original_token_count, rec.new_token_count, False
        )
        if rec.status in HISTORY_CHANGING_STATUSES:
            self._apply_compaction(rec)  # raises before changing anything if the record does not fit
        self._entries[rec.id] = entry
        self._log.append(entry)

    def _apply_compaction(self, rec: CompactionRecord) -> None:
        if rec.status == COMPRESSED:
            if rec.summary is None or rec.ack is None:
                raise ReplayError(f"compaction {rec.id!r} is COMPRESSED but lacks its summary or ack")
            start = len(self.history) if rec.kept_from is None else self._index(rec.kept_from, rec.id)
            head = [rec.summary, rec.ack] if rec.env is None else [rec.env, rec.summary, rec.ack]
            history = head + self.history[start:]
            ids = head_ids(rec.id, rec.env is not None) + self.history_ids[start:]
        else:
            history, ids = list(self.history), list(self.history_ids)
        if rec.replacements:
            where = {mid: i for i, mid in enumerate(ids)}
            for mid, replacement in rec.replacements.items():
                if mid not in where:
                    raise ReplayError(f"compaction {rec.id!r} replaces {mid!r}, which is not in the history")
                history[where[mid]] = replacement
        if rec.status == COMPRESSED:
            self.compaction_count += 1
        before = _Applied(rec.id, self.history, self.history_ids, list(ids), self._usage, self._usage_len)
        self._applied.append(before)
        self.history, self.history_ids = history, ids
        self._usage = LastUsage(rec.new_token_count, COMPACTION_TOKEN_SOURCE)
        self._usage_len = len(history)

    def _index(self, message_id: str, compaction_id: str) -> int:
        try:
            return self.history_ids.index(message_id)
        except ValueError:
            raise ReplayError(
                f"compaction {compaction_id!r} keeps from {message_id!r}, which is not in the history"
            ) from None

    def _undo(self, compaction_id: str) -> None:
        if not self._applied or self._applied[-1].compaction_id != compaction_id:
            latest = self._applied[-1].compaction_id if self._applied else "none"
            raise ReplayError(f"undo of compaction {compaction_id!r}; the latest undoable one is {latest}")
        applied = self._applied.pop()
        after = set(applied.after_ids)
        since = [(mid, c) for mid, c in zip(self.history_ids, self.history, strict=True) if mid not in after]
        self.history = applied.before + [c for _, c in since]
        self.history_ids = applied.before_ids + [mid for mid, _ in since]
        self._usage, self._usage_len = applied.usage, applied.usage_len
        self._entries[compaction_id].undone = True

    def _rewind(self, to_id: str) -> None:
        try:
            index = self.history_ids.index(to_id)
        except ValueError:
            raise ReplayError(f"rewind to {to_id!r}, which is not in the history") from None
        del self.history[index:]
        del self.history_ids[index:]
        if self._usage_len > index:
            self._usage = None
