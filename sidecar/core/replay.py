"""Replay: applies session records in file order and gives the history, transcript, usage, pins and counters."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from sidecar.core.content_json import check_content, decode_contents, encode_content
from sidecar.core.history import Content
from sidecar.core.outcome import HISTORY_CHANGING, Status
from sidecar.core.pins import Pin
from sidecar.core.recording import (
    COMPACTION_TOKEN_SOURCE,
    DISPLAY_KINDS,
    TOOL_TITLES,
    CompactionRatingRecord,
    CompactionRecord,
    FileChangeRecord,
    FileRecord,
    FilesRestoredRecord,
    ForkRecord,
    LastUsage,
    MaskRecord,
    MessageRecord,
    PinRecord,
    RawMessageRecord,
    Record,
    RenameRecord,
    RewindRecord,
    SessionRecord,
    TodosRecord,
    UndoCompactionRecord,
    UnpinRecord,
    UsageRecord,
    head_ids,
    is_context_message,
    title_of,
    transcript_message,
)
from sidecar.core.todos import TodoItem
from sidecar.protocol.sessions import TranscriptCompaction, TranscriptEntry, TranscriptFork, TranscriptMessage

_NO_CONTENT = msgspec.Raw()


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
    position: int  # where in the transcript log it was applied (a rewind before it discards it)


ParentLoader = Callable[["ForkRecord"], "Replay"]


class Replay:
    """Applies records in file order. After the last one: history (+ ids), transcript, usage, counters.

    The model history is `wire`, each content's JSON (for messages read from a file, exactly as recorded); the
    `history` property decodes it.
    """

    def __init__(self, load_parent: ParentLoader | None = None) -> None:
        self._load_parent = load_parent  # reads a parent's file up to a fork point (the I/O is the caller's)
        self.metadata: SessionRecord | None = None
        self.fork: ForkRecord | None = None
        self.last_message_id: str | None = None
        self.pins: dict[str, str] = {}
        #: The model's todo list now, and each list set with its place in the transcript log (for a rewind).
        self.todos: list[TodoItem] = []
        self._todo_log: list[tuple[int, list[TodoItem]]] = []
        self.wire: list[bytes] = []
        self.history_ids: list[str] = []
        #: Every displayed record in order (the transcript is built from it on demand).
        self.log: list[MessageRecord | RawMessageRecord | TranscriptCompaction | TranscriptFork] = []
        self._transcript: list[TranscriptEntry] = []
        #: The latest model message with function calls, and the titles its calls were shown with, by message id.
        self._calls_message: str | None = None
        self.tool_titles: dict[str, dict[str, str]] = {}
        self.message_count = 0
        self.context_count = 0  # of message_count, the hidden <session_context> turns
        self.compaction_count = 0
        self.title: str | None = None
        self.last_time: str | None = None
        self._usage: LastUsage | None = None
        self._usage_len = 0  # history length when the usage was recorded
        self._applied: list[_Applied] = []
        self._entries: dict[str, TranscriptCompaction] = {}
        self._positions: dict[str, int] = {}  # message id -> its place in the transcript log
        self._rewound: set[str] = set()
        #: Messages whose tool outputs the model saw masked (the transcript marks them).
        self.masked: set[str] = set()
        #: Checkpoint records (docs/checkpoints.md) in file order, each with its place in the transcript log.
        self.file_records: list[tuple[int, FileChangeRecord | FilesRestoredRecord]] = []

    @property
    def history(self) -> list[Content]:
        """The model history decoded from `wire` (O(n), a new list each time)."""
        return decode_contents(self.wire)

    @property
    def transcript(self) -> list[TranscriptEntry]:
        """Every message and compaction so far, in order (texts are derived here, not during replay)."""
        for item in self.log[len(self._transcript) :]:
            if isinstance(item, TranscriptCompaction | TranscriptFork):
                self._transcript.append(item)
                continue
            entry = transcript_message(item)
            entry.rewound = item.id in self._rewound
            entry.masked = item.id in self.masked
            _add_titles(entry, self.tool_titles.get(item.id))
            self._transcript.append(entry)
        return self._transcript

    @property
    def pinned(self) -> list[Pin]:
        return [Pin(pin_id, text) for pin_id, text in self.pins.items()]

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
            self._usage = LastUsage(record.prompt_token_count, record.source, record.paused_until)
            self._usage_len = len(self.wire)
        elif isinstance(record, CompactionRecord):
            self._compaction(record)
        elif isinstance(record, UndoCompactionRecord):
            self._undo(record.compaction_id)
        elif isinstance(record, CompactionRatingRecord):
            rated = self._entries.get(record.compaction_id)
            if rated is None:
                raise ReplayError(f"a rating of compaction {record.compaction_id!r}, which is not in the session")
            rated.rating, rated.rating_note = record.rating, record.note
        elif isinstance(record, RewindRecord):
            self._rewind(record.to_id)
        elif isinstance(record, PinRecord):
            if record.id in self.pins:
                raise ReplayError(f"pin id {record.id!r} used twice")
            self.pins[record.id] = record.text
        elif isinstance(record, UnpinRecord):
            if self.pins.pop(record.pin_id, None) is None:
                raise ReplayError(f"unpin of {record.pin_id!r}, which is not pinned")
        elif isinstance(record, TodosRecord):
            self.todos = list(record.items)
            self._todo_log.append((len(self.log), self.todos))
        elif isinstance(record, RenameRecord):
            self.title = record.title
        elif isinstance(record, FileChangeRecord | FilesRestoredRecord):
            self.file_records.append((len(self.log), record))
        elif isinstance(record, ForkRecord):
            self._fork(record)
        elif isinstance(record, MaskRecord):
            self._mask(record)
        elif isinstance(record, SessionRecord):
            if self.metadata is not None:
                raise ReplayError("a second session record")
            self.metadata = record
            self.title = record.title
        # StatsRecord: counters for listing; replay recounts.
        self.last_time = record.time

    def position(self, message_id: str) -> int | None:
        """Where a message is in the transcript log (file records before it have smaller positions)."""
        return self._positions.get(message_id)

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
        if is_context_message(rec.kind, data, rec.text):
            self.context_count += 1
        self.last_message_id = rec.id
        self._positions[rec.id] = len(self.log)
        if data is not None and rec.kind not in DISPLAY_KINDS:
            self.wire.append(data)
            self.history_ids.append(rec.id)
        if self.title is None and rec.kind == "user":
            self.title = title_of(rec.text if rec.text is not None else transcript_message(rec).text)
        self.log.append(rec)
        if rec.kind == "toolCall":
            self._calls_message = rec.id
        elif rec.kind == "toolResult" and self._calls_message is not None:
            self._titles(self._calls_message, (rec.meta or {}).get(TOOL_TITLES))

    def _titles(self, calls_message: str, titles: Any) -> None:
        """Keep the titles a tool result recorded for the calls of the model message it answers."""
        if not isinstance(titles, dict):
            return
        kept = {k: v for k, v in titles.items() if isinstance(k, str) and isinstance(v, str)}
        self.tool_titles[calls_message] = kept
        position = self._positions[calls_message]
        if position < len(self._transcript):  # already built
            entry = self._transcript[position]
            if isinstance(entry, TranscriptMessage):
                _add_titles(entry, kept)

    def _compaction(self, rec: CompactionRecord) -> None:
        if rec.id in self._entries:
            raise ReplayError(f"compaction id {rec.id!r} used twice")
        entry = TranscriptCompaction(
            rec.id,
            rec.time,
            rec.trigger,
            rec.status,
            rec.original_token_count,
            rec.new_token_count,
            False,
            rec.snapshot,
            rec.edited,
        )
        if rec.status in HISTORY_CHANGING:
            self._apply_compaction(rec)  # raises before changing anything if the record does not fit
        self._entries[rec.id] = entry
        self.log.append(entry)

    def _apply_compaction(self, rec: CompactionRecord) -> None:
        if rec.status == Status.COMPRESSED:
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
        if rec.status == Status.COMPRESSED:
            self.compaction_count += 1
        before = _Applied(rec.id, self.wire, self.history_ids, list(ids), self._usage, self._usage_len, len(self.log))
        self._applied.append(before)
        self.wire, self.history_ids = wire, ids
        self._usage = LastUsage(rec.new_token_count, COMPACTION_TOKEN_SOURCE)
        self._usage_len = len(wire)

    def _mask(self, rec: MaskRecord) -> None:
        """Masked tool outputs: the history items are replaced (a new list: an undoable compaction keeps the old)."""
        where = {mid: i for i, mid in enumerate(self.history_ids)}
        missing = [mid for mid in rec.replacements if mid not in where]
        if missing:
            raise ReplayError(f"a masking replaces {missing[0]!r}, which is not in the history")
        wire = list(self.wire)
        for mid, replacement in rec.replacements.items():
            wire[where[mid]] = encode_content(replacement)
            self.masked.add(mid)
            position = self._positions.get(mid)
            if position is not None and position < len(self._transcript):  # already built: mark in place
                entry = self._transcript[position]
                if isinstance(entry, TranscriptMessage):
                    entry.masked = True
        self.wire = wire

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
        """Back to the history right before `to_id` was recorded: compactions recorded after it are undone
        (their summaries cover rewound messages), then the history is cut; the transcript marks what was cut."""
        position = self._positions.get(to_id)
        if position is None or (to_id not in self.history_ids and not self._undoes_back_to(to_id, position)):
            raise ReplayError(f"rewind to {to_id!r}, which is not in the history")
        while self._applied and self._applied[-1].position > position:
            self._undo(self._applied[-1].compaction_id)
        index = self.history_ids.index(to_id)
        del self.wire[index:]
        del self.history_ids[index:]
        if self._usage_len > index:
            self._usage = None
        for item in self.log[position:]:
            if isinstance(item, MessageRecord | RawMessageRecord):
                self._rewound.add(item.id)
        # the todo list as it was when the first rewound message was recorded
        self._todo_log = [entry for entry in self._todo_log if entry[0] <= position]
        self.todos = list(self._todo_log[-1][1]) if self._todo_log else []
        for entry in self._transcript[position:]:  # already built: mark in place
            if isinstance(entry, TranscriptMessage):
                entry.rewound = entry.id in self._rewound

    def _undoes_back_to(self, to_id: str, position: int) -> bool:
        later = [a for a in self._applied if a.position > position]
        return bool(later) and to_id in later[0].before_ids

    def _fork(self, rec: ForkRecord) -> None:
        """Start from the parent's state at the fork point (its records up to `parent_size` bytes)."""
        if self.message_count or self.fork is not None or self.pins:
            raise ReplayError("a fork record must come right after the session record")
        if self._load_parent is None:
            raise ReplayError(f"this session branches from {rec.parent_session_id}, which cannot be read here")
        parent = self._load_parent(rec)
        if parent.last_message_id != rec.parent_message_id:
            raise ReplayError(
                f"it branches from {rec.parent_session_id} after message {rec.parent_message_id!r}, but the "
                f"parent's file there ends with {parent.last_message_id!r}"
            )
        self.fork = rec
        self.wire, self.history_ids = parent.wire, parent.history_ids
        self.log = parent.log
        self.message_count, self.compaction_count = parent.message_count, parent.compaction_count
        self.context_count = parent.context_count
        self.tool_titles = parent.tool_titles
        self.last_message_id = parent.last_message_id
        self._usage, self._usage_len = parent._usage, parent._usage_len
        self._applied, self._entries = parent._applied, parent._entries
        self._positions, self._rewound = parent._positions, parent._rewound
        self.masked = parent.masked
        self.pins = parent.pins
        self.todos, self._todo_log = parent.todos, parent._todo_log
        self.file_records = parent.file_records  # a branch shares its parent's checkpoints up to the fork point
        self.title = self.title or parent.title
        self.log.append(
            TranscriptFork(
                "fork", rec.time, rec.parent_session_id, rec.parent_message_id, rec.before_message_id, rec.reason
            )
        )


def _add_titles(entry: TranscriptMessage, titles: dict[str, str] | None) -> None:
    """Give each of a model message's calls the title it was shown with (calls without an id are numbered in
    order within the turn, as the tool runner numbers them)."""
    if not titles or not entry.tool_calls:
        return
    for index, call in enumerate(entry.tool_calls):
        call.title = titles.get(call.id or f"{entry.turn_id}-call-{index + 1}")
