"""Session record types (a versioned msgspec tagged union) and the replay that turns records into state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from sidecar.core.content_json import check_content, decode_content, decode_contents, encode_content
from sidecar.core.history import Content
from sidecar.core.transcript import display_text as display_text
from sidecar.core.transcript import title_of as title_of
from sidecar.core.transcript import tool_calls_from_meta, tool_calls_of
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptEntry, TranscriptMessage

FORMAT_VERSION = 1

MODEL_FACING_KINDS = frozenset({"user", "model", "toolCall", "toolResult", "ideContext", "env"})
DISPLAY_KINDS = frozenset({"info", "error"})
MESSAGE_KINDS = MODEL_FACING_KINDS | DISPLAY_KINDS
_USER_SIDE_KINDS = frozenset({"user", "toolResult", "ideContext", "env"})

COMPRESSED = "COMPRESSED"
CONTENT_TRUNCATED = "CONTENT_TRUNCATED"
HISTORY_CHANGING_STATUSES = frozenset({COMPRESSED, CONTENT_TRUNCATED})
COMPACTION_TOKEN_SOURCE = "estimate"


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


class RawMessageRecord(_Record, tag="message"):
    """A MessageRecord as read from a file: `content` is its JSON as recorded (empty Raw: none), which the replay
    checks is a Content and keeps undecoded, so a resumed history takes about the file's size, not 3-4 times it."""

    id: str
    kind: str
    content: msgspec.Raw = msgspec.Raw()
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


FileRecord = (
    SessionRecord | RawMessageRecord | UsageRecord | CompactionRecord | UndoCompactionRecord
    | RewindRecord | StatsRecord
)  # what a file's lines are decoded as: Record, but messages keep their content's JSON


class Header(msgspec.Struct, rename="camel"):
    """The part of a first line read before anything else: is it a session, and which format version."""

    type: str = ""
    version: int = 0


def head_ids(compaction_id: str, with_env: bool) -> list[str]:
    """Stable ids of the contents a compaction puts in front of the kept tail: [env], summary, ack."""
    ids = [f"{compaction_id}.summary", f"{compaction_id}.ack"]
    return [f"{compaction_id}.env", *ids] if with_env else ids


# ---------------------------------------------------------------- contents kept as their JSON (see core.content_json)

_NO_CONTENT = msgspec.Raw()


class _Role(msgspec.Struct):
    role: str | None = None


_ROLE = msgspec.json.Decoder(_Role)


# ---------------------------------------------------------------- what editors see (its types: core.transcript)


class LastUsage(msgspec.Struct, rename="camel", frozen=True):
    prompt_token_count: int
    source: str


def transcript_message(rec: MessageRecord | RawMessageRecord) -> TranscriptMessage:
    """The transcript entry of a message record: display text, and who speaks (recorded JSON is decoded here)."""
    text, role = rec.text, None
    content = rec.content if isinstance(rec, MessageRecord) else None
    if isinstance(rec, RawMessageRecord) and rec.content:
        if text is None or rec.kind == "toolCall":
            content = decode_content(rec.content)
        else:
            role = _ROLE.decode(rec.content).role  # the display text wins: only the role is needed
    calls = None
    if content is not None:
        role = content.role
        text = display_text(content) if text is None else text
        calls = tool_calls_of(content) if rec.kind == "toolCall" else None
    elif rec.kind == "toolCall":
        calls = tool_calls_from_meta(rec.meta)
    speaker: Literal["user", "model"]
    if role in ("user", "model"):
        speaker = "user" if role == "user" else "model"
    else:
        speaker = "user" if rec.kind in _USER_SIDE_KINDS else "model"
    return TranscriptMessage(rec.id, rec.time, speaker, rec.kind, "" if text is None else text, rec.turn_id, calls)


# ---------------------------------------------------------------- replay


class ReplayError(Exception):
    """A record that contradicts the ones before it (the file is not a consistent session)."""


@dataclass(slots=True)
class _Applied:
    """What undoing one history-changing compaction needs."""

    compaction_id: str
    before: list[bytes]
    before_ids: list[str]
    after_ids: list[str]
    usage: LastUsage | None
    usage_len: int


class Replay:
    """Applies records in file order. After the last one: history (+ ids), transcript, usage, counters.

    The model history is `wire`, each content's JSON (for messages read from a file, exactly as recorded); the
    `history` property decodes it.
    """

    def __init__(self) -> None:
        self.metadata: SessionRecord | None = None
        self.wire: list[bytes] = []
        self.history_ids: list[str] = []
        self._log: list[MessageRecord | RawMessageRecord | TranscriptCompaction] = []  # transcript, built on demand
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
    def history(self) -> list[Content]:
        """The model history decoded from `wire` (O(n), a new list each time)."""
        return decode_contents(self.wire)

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

    def apply(self, record: Record | FileRecord) -> None:
        """Apply one record; a message read from a file whose content is not a Content raises
        msgspec.ValidationError, an inconsistent record ReplayError, both before anything changes."""
        if self.metadata is None and type(record) is not SessionRecord:
            raise ReplayError(f"expected the session record first, got a {type(record).__name__}")
        if isinstance(record, MessageRecord | RawMessageRecord):
            self._message(record)
        elif isinstance(record, UsageRecord):
            self._usage = LastUsage(record.prompt_token_count, record.source)
            self._usage_len = len(self.wire)
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
        self.last_time = record.time

    def _message(self, rec: MessageRecord | RawMessageRecord) -> None:
        if isinstance(rec, RawMessageRecord):
            # Its content's JSON as bytes of its own: the Raw may view the file's mapped buffer, closed after the
            # replay. Let go of that first, even if the check (ValidationError unless a Content) raises.
            data: bytes | None = bytes(rec.content)
            rec.content = _NO_CONTENT
            if data and check_content(data):
                rec.content = msgspec.Raw(data)  # shares the bytes with the history (decoded for the transcript)
            else:
                data = None
        else:
            data = None if rec.content is None else encode_content(rec.content)
        self.message_count += 1
        if data is not None and rec.kind not in DISPLAY_KINDS:
            self.wire.append(data)
            self.history_ids.append(rec.id)
        if self.title is None and rec.kind == "user":
            self.title = title_of(rec.text if rec.text is not None else transcript_message(rec).text)
        self._log.append(rec)

    def _compaction(self, rec: CompactionRecord) -> None:
        if rec.id in self._entries:
            raise ReplayError(f"compaction id {rec.id!r} used twice")
        entry = TranscriptCompaction(
            rec.id, rec.time, rec.trigger, rec.status, rec.original_token_count, rec.new_token_count, False,
            rec.snapshot,
        )
        if rec.status in HISTORY_CHANGING_STATUSES:
            self._apply_compaction(rec)  # raises before changing anything if the record does not fit
        self._entries[rec.id] = entry
        self._log.append(entry)

    def _apply_compaction(self, rec: CompactionRecord) -> None:
        if rec.status == COMPRESSED:
            if rec.summary is None or rec.ack is None:
                raise ReplayError(f"compaction {rec.id!r} is COMPRESSED but lacks its summary or ack")
            start = len(self.wire) if rec.kept_from is None else self._index(rec.kept_from, rec.id)
            head = [rec.summary, rec.ack] if rec.env is None else [rec.env, rec.summary, rec.ack]
            wire = [encode_content(c) for c in head] + self.wire[start:]
            ids = head_ids(rec.id, rec.env is not None) + self.history_ids[start:]
        else:
            wire, ids = list(self.wire), list(self.history_ids)
        if rec.replacements:
            where = {mid: i for i, mid in enumerate(ids)}
            for mid, replacement in rec.replacements.items():
                if mid not in where:
                    raise ReplayError(f"compaction {rec.id!r} replaces {mid!r}, which is not in the history")
                wire[where[mid]] = encode_content(replacement)
        if rec.status == COMPRESSED:
            self.compaction_count += 1
        before = _Applied(rec.id, self.wire, self.history_ids, list(ids), self._usage, self._usage_len)
        self._applied.append(before)
        self.wire, self.history_ids = wire, ids
        self._usage = LastUsage(rec.new_token_count, COMPACTION_TOKEN_SOURCE)
        self._usage_len = len(wire)

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
        since = [(mid, c) for mid, c in zip(self.history_ids, self.wire, strict=True) if mid not in after]
        self.wire = applied.before + [c for _, c in since]
        self.history_ids = applied.before_ids + [mid for mid, _ in since]
        self._usage, self._usage_len = applied.usage, applied.usage_len
        self._entries[compaction_id].undone = True

    def _rewind(self, to_id: str) -> None:
        try:
            index = self.history_ids.index(to_id)
        except ValueError:
            raise ReplayError(f"rewind to {to_id!r}, which is not in the history") from None
        del self.wire[index:]
        del self.history_ids[index:]
        if self._usage_len > index:
            self._usage = None
