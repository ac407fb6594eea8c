"""Appending to one session file: one write per record, fsync on demand; failures disable recording."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import msgspec

from sidecar.core.content_json import encode_content
from sidecar.core.history import Content
from sidecar.core.outcome import HISTORY_CHANGING, Status
from sidecar.core.recording import (
    DISPLAY_KINDS,
    MESSAGE_KINDS,
    CompactionRatingRecord,
    CompactionRecord,
    MaskRecord,
    MessageRecord,
    PinRecord,
    Record,
    RenameRecord,
    RewindRecord,
    StatsRecord,
    TodosRecord,
    UndoCompactionRecord,
    UnpinRecord,
    UsageRecord,
    display_text,
    is_context_message,
    title_of,
)
from sidecar.core.todos import TodoItem
from sidecar.recording.reader import BinaryFile, now_iso

log = logging.getLogger(__name__)

ProblemCallback = Callable[[str], None]
_ENCODER = msgspec.json.Encoder()
_BIG_BUFFER = 1 << 20


def problem_text(exc: OSError, path: Path) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        reason = "the disk is full"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "the session directory is not writable"
    else:
        reason = "writing the session file failed"
    return (
        f"Session recording is off: {reason} ({exc.strerror or exc}: {path}). "
        "The conversation continues, but it is not being saved."
    )


class SessionWriter:
    """Appends records to one session file, one write each; an OSError disables recording, never raises.

    Message ids are `m<n>` (n = messages recorded so far in the session, 1-based).
    """

    def __init__(
        self,
        session_id: str,
        path: Path,
        file: BinaryFile | None,
        *,
        message_count: int = 0,
        context_count: int = 0,
        compaction_count: int = 0,
        title: str | None = None,
        undoable: Iterable[str] = (),
        size: int = 0,
        on_problem: ProblemCallback | None = None,
        problem: str | None = None,
        last_message_id: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.last_message_id = last_message_id
        self.path = path
        self.message_count = message_count
        self.context_count = context_count  # of message_count, the hidden <session_context> turns
        self.compaction_count = compaction_count
        self.title = title
        self.problem: str | None = None
        self._file = file
        self._size = size
        self._undoable = list(undoable)
        self._on_problem = on_problem
        self._unsynced = False
        self._buffer = bytearray()
        if problem is not None:
            self._disable(problem)

    @property
    def disabled(self) -> bool:
        return self._file is None

    @property
    def size(self) -> int:
        """Bytes in the file, as far as this writer knows (its appends included)."""
        return self._size

    @property
    def undoable(self) -> list[str]:
        """Compactions that undo_compaction accepts, latest last (only the last one may be undone next)."""
        return list(self._undoable)

    def next_message_id(self) -> str:
        return f"m{self.message_count + 1}"

    # -- the records ------------------------------------------------------------------------------------
    def message(
        self,
        content: Content | None,
        *,
        kind: str,
        turn_id: str | None = None,
        text: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Record a message; returns its id. info/error are display-only: content None and a text."""
        if kind not in MESSAGE_KINDS:
            raise ValueError(f"unknown message kind {kind!r}; expected one of {sorted(MESSAGE_KINDS)}")
        if kind in DISPLAY_KINDS and content is not None:
            raise ValueError(f"{kind} messages are display-only: pass text, not content")
        if content is None and text is None:
            raise ValueError("a message needs content or text")
        message_id = self.next_message_id()
        self.append(
            MessageRecord(
                time=now_iso(),
                id=message_id,
                kind=kind,
                content=content,
                text=text,
                turn_id=turn_id,
                meta=meta or None,
            )
        )
        return message_id

    def usage(
        self,
        prompt_token_count: int,
        source: str,
        message_id: str | None = None,
        raw: dict[str, Any] | None = None,
        paused_until: int | None = None,
        estimated: int | None = None,
    ) -> None:
        """The usageMetadata of a completed request (promptTokenCount, and where the count came from); with an undo
        pause of automatic compaction, where it ends; `estimated`: the sidecar's estimate of that request."""
        self.append(
            UsageRecord(
                time=now_iso(),
                prompt_token_count=prompt_token_count,
                source=source,
                message_id=message_id,
                raw=raw or None,
                paused_until=paused_until,
                estimated_token_count=estimated,
            )
        )

    def compaction(
        self,
        *,
        trigger: str,
        status: str,
        original_tokens: int,
        new_tokens: int,
        snapshot: str | None = None,
        summary: Content | None = None,
        ack: Content | None = None,
        env: Content | None = None,
        kept_from: str | None = None,
        replacements: dict[str, Content] | None = None,
        compaction_id: str | None = None,
        edited: bool = False,
    ) -> str:
        """Record one compaction attempt and fsync; returns its id. Cost is independent of history length.

        COMPRESSED: history becomes [env], summary, ack, then the history from `kept_from` (None: nothing
        kept), with `replacements` (id -> content) applied. CONTENT_TRUNCATED: replacements only. Other
        statuses change nothing and only show in the transcript.
        """
        cid = compaction_id or f"c{os.urandom(5).hex()}"
        changes = status in HISTORY_CHANGING
        if status == Status.COMPRESSED and (summary is None or ack is None):
            raise ValueError("a COMPRESSED compaction needs its summary and ack contents")
        if cid in self._undoable:
            raise ValueError(f"compaction id {cid!r} is already used")
        compressed = status == Status.COMPRESSED
        self.append(
            CompactionRecord(
                time=now_iso(),
                id=cid,
                trigger=trigger,
                status=status,
                original_token_count=original_tokens,
                new_token_count=new_tokens,
                snapshot=snapshot,
                summary=summary if compressed else None,
                ack=ack if compressed else None,
                env=env if compressed else None,
                kept_from=kept_from if compressed else None,
                replacements=(replacements or None) if changes else None,
                edited=edited and compressed,
            )
        )
        self.sync()
        return cid

    def undo_compaction(self, compaction_id: str) -> None:
        """Record that the history went back to what it was right before `compaction_id` (the latest one)."""
        if not self._undoable or self._undoable[-1] != compaction_id:
            latest = self._undoable[-1] if self._undoable else None
            raise ValueError(f"only the latest compaction can be undone (latest: {latest}, got {compaction_id})")
        self.append(UndoCompactionRecord(time=now_iso(), compaction_id=compaction_id))
        self.sync()

    def rate_compaction(self, compaction_id: str, rating: str, note: str | None) -> None:
        """Record the user's rating of a compaction, and fsync."""
        self.append(CompactionRatingRecord(time=now_iso(), compaction_id=compaction_id, rating=rating, note=note))
        self.sync()

    def rewind(self, message_id: str, undoable: Iterable[str] | None = None) -> None:
        """Drop `message_id` and all after it from the model-facing history, and fsync. `undoable`: the compactions
        still undoable after it (the replay's; a rewind undoes the compactions recorded after the message)."""
        self.append(RewindRecord(time=now_iso(), to_id=message_id))
        if undoable is not None:
            self._undoable = list(undoable)
        self.sync()

    def mask(self, replacements: dict[str, Content], masked_count: int, tokens_saved: int) -> None:
        """Record masked tool outputs (message id -> the masked content), and fsync."""
        self.append(
            MaskRecord(time=now_iso(), replacements=replacements, masked_count=masked_count, tokens_saved=tokens_saved)
        )
        self.sync()

    def pin(self, pin_id: str, text: str) -> None:
        self.append(PinRecord(time=now_iso(), id=pin_id, text=text))
        self.sync()

    def unpin(self, pin_id: str) -> None:
        self.append(UnpinRecord(time=now_iso(), pin_id=pin_id))
        self.sync()

    def todos(self, items: list[TodoItem]) -> None:
        self.append(TodosRecord(time=now_iso(), items=items))
        self.sync()

    def rename(self, title: str) -> None:
        self.append(RenameRecord(time=now_iso(), title=title))
        self.sync()

    def append(self, record: Record) -> None:
        """Append any record as one line (import uses this directly). Counters follow even when disabled."""
        if isinstance(record, MessageRecord):
            self.message_count += 1
            if record.kind == "env":
                content = None if record.content is None else encode_content(record.content)
                self.context_count += is_context_message(record.kind, content, record.text)
            self.last_message_id = record.id
            if self.title is None and record.kind == "user":
                text = record.text if record.text is not None else display_text(record.content or Content())
                self.title = title_of(text)
        elif isinstance(record, CompactionRecord):
            if record.status in HISTORY_CHANGING:
                self._undoable.append(record.id)
            if record.status == Status.COMPRESSED:
                self.compaction_count += 1
        elif isinstance(record, UndoCompactionRecord) and self._undoable:
            self._undoable.pop()
        elif isinstance(record, RenameRecord):
            self.title = record.title
        if not isinstance(record, StatsRecord):
            self._unsynced = True
        if self._file is None:
            return
        buffer = self._buffer
        _ENCODER.encode_into(record, buffer)
        buffer.extend(b"\n")
        self._write(buffer)
        if len(buffer) > _BIG_BUFFER:
            self._buffer = bytearray()

    def append_all(self, records: list[Record]) -> None:
        """Append several records with one write (all of them or, if killed, none whole)."""
        if self._file is None:
            for record in records:
                self.append(record)
            return
        data = bytearray()
        for record in records:
            data.extend(_ENCODER.encode(record))
            data.extend(b"\n")
        file, self._file = self._file, None  # count each record without writing it...
        for record in records:
            self.append(record)
        self._file = file
        self._write(data)  # ...then write them together

    # -- durability -----------------------------------------------------------------------------------------
    def sync(self) -> None:
        """Turn boundary: append the counters for listing, then fsync. Cheap when nothing changed."""
        if self._file is None or not self._unsynced:
            return
        self.append(
            StatsRecord(
                time=now_iso(),
                message_count=self.message_count,
                compaction_count=self.compaction_count,
                context_count=self.context_count,
                title=self.title,
            )
        )
        self._unsynced = False
        if self._file is None:
            return
        try:
            os.fsync(self._file.fileno())
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        self.sync()
        if self._file is not None:
            try:
                self._file.close()  # also releases the lock
            except OSError as exc:
                self._fail(exc)
            self._file = None

    def _write(self, data: bytearray) -> None:
        assert self._file is not None
        try:
            written = self._file.write(data)
            if written is not None and written < len(data):  # rare: retry the rest
                with memoryview(data) as view:
                    while written < len(data):
                        more = self._file.write(view[written:])
                        if not more:
                            raise OSError(errno.EIO, "short write")
                        written += more
            self._file.flush()
        except OSError as exc:
            self._fail(exc)
            return
        self._size += len(data)

    def _fail(self, exc: OSError) -> None:
        file, self._file = self._file, None
        if file is not None:
            # Take back a partly written record, so the file still ends on a whole line.
            with contextlib.suppress(OSError, ValueError):
                os.ftruncate(file.fileno(), self._size)
            with contextlib.suppress(OSError):
                file.close()
        self._disable(problem_text(exc, self.path))

    def _disable(self, problem: str) -> None:
        self._file = None
        if self.problem is None:
            self.problem = problem
            log.warning("%s", problem)
            if self._on_problem is not None:
                self._on_problem(problem)
