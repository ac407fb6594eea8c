"""Reading session files: replay with torn-line and corruption handling, and cheap listing from the tail."""

from __future__ import annotations

import gc
import logging
import mmap
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, Protocol

import msgspec

from sidecar.core.content_json import check_content, decode_content, decode_contents
from sidecar.core.history import Content
from sidecar.core.outcome import Status
from sidecar.core.pins import Pin
from sidecar.core.recording import (
    FORMAT_VERSION,
    FileChangeRecord,
    FileRecord,
    FilesRestoredRecord,
    ForkRecord,
    Header,
    LastUsage,
    MessageRecord,
    RawMessageRecord,
    SessionRecord,
    is_context_message,
)
from sidecar.core.replay import ParentLoader, Replay, ReplayError
from sidecar.core.todos import TodoItem
from sidecar.protocol.sessions import TranscriptEntry

log = logging.getLogger(__name__)

_DECODER = msgspec.json.Decoder(FileRecord)
_HEADER = msgspec.json.Decoder(Header)
_SESSION = msgspec.json.Decoder(SessionRecord)
_TAIL = 64 * 1024
_HEADER_MAX = 1 << 20
_FORK = msgspec.json.Decoder(ForkRecord)
#: How many parents deep a branch may read through (a guard against a hand-made cycle, not a real limit).
_MAX_FORK_DEPTH = 64
#: `<session-id>/parents/` beside a session file: copies of the parts of deleted sessions that this branch reads.
PARENTS = "parents"


def parents_folder(session_file: Path) -> Path:
    """The folder holding the copies a branch reads instead of deleted parents (see docs/recording.md)."""
    return session_file.parent / session_file.stem / PARENTS


def find_parent(directory: Path, parent_id: str, copies: Sequence[Path]) -> tuple[Path, tuple[Path, ...]]:
    """Where a branch reads its parent `parent_id` from: a copy kept in one of the `copies` folders (its own, then
    those of the ancestors it read), else the project's session file in `directory`. Also returns the folders the
    parent's own parent is looked up in."""
    name = f"{parent_id}.jsonl"
    for folder in copies:
        if (folder / name).is_file():
            return folder / name, tuple(copies)
    path = directory / name
    return path, (*copies, parents_folder(path))


class BinaryFile(Protocol):
    """What a SessionWriter writes to (a raw, unbuffered file; tests inject failing ones)."""

    def write(self, data: bytearray | memoryview, /) -> int | None: ...
    def flush(self) -> None: ...
    def fileno(self) -> int: ...
    def close(self) -> None: ...


class RecordingError(Exception):
    """A session file that cannot be used as asked; the message names the file and what to do."""


class SessionNotFound(RecordingError):
    pass


class CorruptSession(RecordingError):
    def __init__(self, path: Path, line: int, reason: str) -> None:
        self.path, self.line, self.reason = path, line, reason
        super().__init__(
            f"Session file {path} is damaged at line {line}: {reason}. The file was not changed; "
            "`sidecar sessions show` displays its readable part."
        )


class UnsupportedVersion(RecordingError):
    def __init__(self, path: Path, version: int) -> None:
        self.path, self.version = path, version
        super().__init__(
            f"Session file {path} uses recording format {version}, but this sidecar reads format "
            f"{FORMAT_VERSION} at most. Update the sidecar to open it; the file was not changed."
        )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(slots=True)
class LoadedSession:
    """A replayed session: what resume, transcript and undo need."""

    session_id: str
    path: Path
    metadata: SessionRecord
    history_wire: list[bytes]  # each model-facing content's JSON, as recorded
    history_ids: list[str]
    last_usage: LastUsage | None
    compaction_count: int
    message_count: int
    title: str | None
    last_updated: str
    undoable: list[str]
    context_count: int = 0  # of message_count, the hidden <session_context> turns
    pins: list[Pin] = field(default_factory=list)
    #: The model's todo list as of the end of the file (or of the rewind/fork point).
    todos: list[TodoItem] = field(default_factory=list)
    fork: ForkRecord | None = None  # set when the session is a branch of another one
    last_message_id: str | None = None
    warnings: list[str] = field(default_factory=list)
    valid_size: int = 0  # bytes up to the end of the last good record
    needs_newline: bool = False  # the last record is whole but its newline is missing
    #: The replay the session was loaded with: its transcript, file records and positions (None: nothing yet).
    replay: Replay | None = None

    @property
    def history(self) -> list[Content]:
        """The model history decoded from `history_wire` (O(n), a new list each time)."""
        return decode_contents(self.history_wire)

    @property
    def transcript(self) -> list[TranscriptEntry]:
        """Every message ever recorded and every compaction attempt, in order (built on first use)."""
        return [] if self.replay is None else self.replay.transcript

    @property
    def file_records(self) -> list[tuple[int, FileChangeRecord | FilesRestoredRecord]]:
        """The checkpoint records (a branch's include its parent's up to the fork), each with its place in the
        transcript log; `position(message_id)` is the same scale (docs/checkpoints.md)."""
        return [] if self.replay is None else self.replay.file_records

    def position(self, message_id: str) -> int | None:
        """Where a message is in the transcript log (None: not in this session)."""
        return None if self.replay is None else self.replay.position(message_id)

    def shown(self) -> Iterator[tuple[TranscriptEntry, Content | None]]:
        """Each transcript entry with its message's whole content (None: display-only, or not a message), for a
        replay of everything said (ACP's session/load); compacted messages included, rewound ones marked."""
        replay = self.replay
        if replay is None:
            return
        for entry, item in zip(replay.transcript, replay.log, strict=True):
            content: Content | None = None
            if isinstance(item, RawMessageRecord) and item.content:
                content = decode_content(item.content)
            elif isinstance(item, MessageRecord):
                content = item.content
            yield entry, content


class SessionInfo(msgspec.Struct, rename="camel", kw_only=True):
    session_id: str
    title: str | None
    start_time: str
    last_updated: str
    message_count: int
    compaction_count: int
    model: str
    project_root: str
    path: str
    parent_session_id: str | None = None


def _reason(exc: Exception) -> str:
    return str(exc).rstrip(".")


def _check_header(path: Path, first: bytes) -> None:
    try:
        header = _HEADER.decode(first)
    except msgspec.DecodeError as exc:
        raise CorruptSession(path, 1, f"not a session record ({_reason(exc)})") from None
    if header.type != "session":
        raise CorruptSession(path, 1, f"the first record is {header.type or 'not a session record'!r}")
    if header.version > FORMAT_VERSION:
        raise UnsupportedVersion(path, header.version)
    if header.version < 1:
        raise CorruptSession(path, 1, f"invalid format version {header.version}")


def read_session(path: Path, *, salvage: bool = False) -> LoadedSession:
    """Replay a session file (see SessionStore.load). The file is mapped, not copied, and decoded in one pass;
    message contents are checked and copied out as their JSON, not kept decoded. A branch (fork record) reads
    through to its parent's file, up to the fork point."""
    replay, warnings, valid_size, whole_tail = _replay_file(
        path, salvage, None, 0, path.parent, (parents_folder(path),)
    )
    return loaded_session(path, replay, warnings, valid_size, whole_tail)


def _replay_file(
    path: Path, salvage: bool, limit: int | None, depth: int, directory: Path, copies: tuple[Path, ...]
) -> tuple[Replay, list[str], int, bool]:
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise CorruptSession(path, 1, "the file is empty")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                loader = _parent_loader(directory, copies, salvage, depth)
                return _replay_mapped(path, data, salvage, loader, limit)
    except FileNotFoundError:
        raise SessionNotFound(f"No session file {path}.") from None
    except OSError as exc:
        raise RecordingError(f"Cannot read session file {path}: {exc.strerror or exc}.") from None


def _parent_loader(directory: Path, copies: tuple[Path, ...], salvage: bool, depth: int) -> ParentLoader:
    def load(fork: ForkRecord) -> Replay:
        if depth >= _MAX_FORK_DEPTH:
            raise ReplayError(f"branches of branches more than {_MAX_FORK_DEPTH} deep")
        parent, further = find_parent(directory, fork.parent_session_id, copies)
        try:
            replay, _warnings, valid_size, _whole = _replay_file(
                parent, salvage, fork.parent_size, depth + 1, directory, further
            )
        except SessionNotFound:
            raise ReplayError(f"the session it branches from, {fork.parent_session_id}, is missing") from None
        except RecordingError as exc:
            raise ReplayError(f"the session it branches from cannot be read ({_reason(exc)})") from None
        if valid_size != fork.parent_size:
            raise ReplayError(
                f"it branches from {fork.parent_session_id} at byte {fork.parent_size}, which is not the end of a "
                "record there"
            )
        return replay

    return load


def loaded_session(path: Path, replay: Replay, warnings: list[str], valid_size: int, whole_tail: bool) -> LoadedSession:
    """The LoadedSession of a replay (also used after applying a record to a loaded one, e.g. a rewind)."""
    metadata = replay.metadata
    if metadata is None:
        raise CorruptSession(path, 1, "no session record")
    return LoadedSession(
        session_id=metadata.session_id,
        path=path,
        metadata=metadata,
        history_wire=replay.wire,
        history_ids=replay.history_ids,
        last_usage=replay.last_usage,
        compaction_count=replay.compaction_count,
        message_count=replay.message_count,
        context_count=replay.context_count,
        title=replay.title,
        last_updated=replay.last_time or metadata.time,
        undoable=replay.undoable,
        pins=replay.pinned,
        todos=replay.todos,
        fork=replay.fork,
        last_message_id=replay.last_message_id,
        warnings=warnings,
        valid_size=valid_size,
        needs_newline=whole_tail,
        replay=replay,
    )


def _replay_mapped(
    path: Path, data: mmap.mmap, salvage: bool, loader: ParentLoader, limit: int | None = None
) -> tuple[Replay, list[str], int, bool]:
    """Replay the file's records (only its first `limit` bytes when given: a parent read up to a fork point)."""
    size = len(data) if limit is None else min(limit, len(data))
    first_end = data.find(b"\n", 0, size)
    _check_header(path, data[:first_end] if first_end >= 0 else data[:size])
    end = data.rfind(b"\n", 0, size) + 1
    warnings: list[str] = []
    last: FileRecord | None = None
    valid_size = end
    if end < size:
        try:
            record = _DECODER.decode(data[end:size])
            if isinstance(record, RawMessageRecord) and record.content:
                check_content(bytes(record.content))  # a content that is not a Content: skipped as torn, too
            last, valid_size = record, size
        except msgspec.DecodeError:
            warnings.append(
                f"The last record of {path.name} was incomplete ({size - end} bytes, probably written "
                "when the sidecar was stopped abruptly); it was skipped."
            )
    collecting = gc.isenabled()
    gc.disable()  # tens of thousands of new objects, none of them cyclic garbage: skip the collector passes
    try:
        with memoryview(data) as view, view[:end] as body:
            replay = _replay_all(body, loader)
            if replay is None:
                replay = _replay_by_line(path, bytes(body), salvage, warnings, loader)
        if last is not None:
            try:
                replay.apply(last)
            except ReplayError as exc:
                number = data[:size].count(b"\n") + 1
                if not salvage:
                    raise CorruptSession(path, number, _reason(exc)) from None
                warnings.append(f"{path.name} line {number} was skipped: {_reason(exc)}.")
    finally:
        if collecting:
            gc.enable()
    return replay, warnings, valid_size, last is not None


def _replay_all(body: memoryview, loader: ParentLoader) -> Replay | None:
    """The fast path: all lines decoded in one call. None if a line is bad. Replay.apply copies each message's
    content out of `body` (and drops the Raw viewing it) first, so no view outlives this call and the file's
    mapping can be closed."""
    replay = Replay(loader)
    try:
        for record in _DECODER.decode_lines(body):
            replay.apply(record)
    except (msgspec.DecodeError, ReplayError):
        return None
    return replay


def _replay_by_line(path: Path, body: bytes, salvage: bool, warnings: list[str], loader: ParentLoader) -> Replay:
    """The slow path, taken only when a line is bad: find it and name it (or skip it when salvaging)."""
    replay = Replay(loader)
    for number, line in enumerate(body.split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        try:
            replay.apply(_DECODER.decode(line))
        except (msgspec.DecodeError, ReplayError) as exc:
            if not salvage or number == 1:
                raise CorruptSession(path, number, _reason(exc)) from None
            warnings.append(f"{path.name} line {number} was skipped: {_reason(exc)}.")
    return replay


# ---------------------------------------------------------------- listing


class _Peek(msgspec.Struct, rename="camel"):
    """The few fields listing reads from a tail record; the rest of the line is skipped unparsed."""

    type: str = ""
    time: str | None = None
    status: str | None = None
    message_count: int = 0
    compaction_count: int = 0
    title: str | None = None
    context_count: int | None = None
    kind: str = ""
    content: msgspec.Raw = msgspec.Raw()
    text: str | None = None


_PEEK = msgspec.json.Decoder(_Peek)


def session_info(path: Path) -> SessionInfo:
    """Listing data from the first line and the tail (back to the last stats record), not a full replay. Its
    message count leaves out the hidden <session_context> turns, as every count shown to a person does."""
    with open(path, "rb") as f:
        first = f.readline(_HEADER_MAX)
        _check_header(path, first.rstrip(b"\n"))
        header = _SESSION.decode(first)
        parent = _parent_of(f.readline(_HEADER_MAX))
        size = os.fstat(f.fileno()).st_size
        counts = _scan_tail(f, size, len(first))
    if counts is None:  # no stats record yet (killed before its first turn ended) or an older one: replay it
        loaded = read_session(path, salvage=True)
        shown = loaded.message_count - loaded.context_count
        counts = (shown, loaded.compaction_count, loaded.title, loaded.last_updated)
    messages, compactions, title, last_time = counts
    return SessionInfo(
        session_id=header.session_id,
        title=title if title is not None else header.title,
        start_time=header.time,
        last_updated=last_time or header.time,
        message_count=messages,
        compaction_count=compactions,
        model=header.model,
        project_root=header.project_root,
        path=str(path),
        parent_session_id=parent,
    )


def _parent_of(second_line: bytes) -> str | None:
    """The parent session id when a file's second line is a fork record."""
    if b'"type":"fork"' not in second_line:
        return None
    try:
        return _FORK.decode(second_line).parent_session_id
    except msgspec.DecodeError:
        return None


def _scan_tail(f: BinaryIO, size: int, start_of_body: int) -> tuple[int, int, str | None, str | None] | None:
    window = _TAIL
    while True:
        start = max(start_of_body, size - window)
        f.seek(start)
        chunk = f.read(size - start)
        lines = chunk[: chunk.rfind(b"\n") + 1].split(b"\n")[:-1]
        if start > start_of_body:
            lines = lines[1:]  # may have begun mid-line
        messages = compactions = 0
        last_time: str | None = None
        renamed: str | None = None
        for line in reversed(lines):
            try:
                peek = _PEEK.decode(line)
            except msgspec.DecodeError:
                return None
            last_time = last_time or peek.time
            if peek.type == "stats":
                if peek.context_count is None:  # written before the <session_context> turns were counted
                    return None
                return (
                    peek.message_count - peek.context_count + messages,
                    peek.compaction_count + compactions,
                    renamed if renamed is not None else peek.title,
                    last_time,
                )
            if peek.type == "rename" and renamed is None:
                renamed = peek.title
            if peek.type == "message":
                raw = bytes(peek.content)
                content = raw if raw not in (b"", b"null") else None
                messages += 0 if is_context_message(peek.kind, content, peek.text) else 1
            elif peek.type == "compaction" and peek.status == Status.COMPRESSED:
                compactions += 1
        if start <= start_of_body:
            return None
        window *= 8


def list_sessions(directory: Path) -> list[SessionInfo]:
    """The sessions in one project directory, newest first; unreadable files are logged and left out."""
    if not directory.is_dir():
        return []
    infos: list[SessionInfo] = []
    for path in directory.glob("*.jsonl"):
        try:
            infos.append(session_info(path))
        except (RecordingError, OSError, msgspec.DecodeError) as exc:
            log.warning("skipping session file %s: %s", path, exc)
    infos.sort(key=lambda info: info.last_updated, reverse=True)
    return infos
