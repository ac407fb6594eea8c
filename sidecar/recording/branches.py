"""Branches of recorded sessions: where a fork is cut (whose file, which byte), which sessions branch from one, and
the copies that keep a branch whole when its parent is deleted."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from sidecar.core.recording import ForkRecord
from sidecar.protocol.sessions import TranscriptEntry, TranscriptMessage
from sidecar.recording.reader import RecordingError, find_parent, parents_folder

_MAX_DEPTH = 64


class _Line(msgspec.Struct, rename="camel"):
    """The fields a scan for a message reads from each line (the rest is skipped unparsed)."""

    type: str = ""
    id: str | None = None


_LINE = msgspec.json.Decoder(_Line)
_FORK = msgspec.json.Decoder(ForkRecord)


@dataclass(frozen=True, slots=True)
class Cut:
    """A fork point: the session whose file holds it, how many bytes of that file the branch reads, and the
    last message among them."""

    session_id: str
    size: int
    last_message_id: str | None
    #: Set when the cut lies in a copy of a deleted parent: the folder of copies a new branch must keep too.
    copy_folder: Path | None = None


def turn_start(entries: Sequence[TranscriptEntry], message_id: str) -> tuple[str, TranscriptMessage]:
    """For a user message of the transcript: the first message of its turn that the cut must drop too (the editor
    context sent just before it, if any), and the message itself. ValueError in words when it is not one."""
    index = next((i for i, e in enumerate(entries) if isinstance(e, TranscriptMessage) and e.id == message_id), None)
    if index is None:
        raise ValueError(f"there is no message {message_id!r} in this session (ids are those getTranscript gives)")
    entry = entries[index]
    assert isinstance(entry, TranscriptMessage)
    if entry.kind != "user":
        raise ValueError(f"message {message_id} is a {entry.kind} message; pick one of your own messages")
    first = entry.id
    for earlier in reversed(entries[:index]):
        if not (isinstance(earlier, TranscriptMessage) and earlier.kind == "ideContext"):
            break
        if entry.turn_id is None or earlier.turn_id != entry.turn_id:
            break
        first = earlier.id
    return first, entry


def locate(directory: Path, session_id: str, message_id: str) -> Cut:
    """The fork point right before message `message_id` of `session_id`, following branches to the file that
    recorded it (a parent's file, or the copy a branch keeps of a deleted one). RecordingError when no file has it."""
    limit: int | None = None
    path = directory / f"{session_id}.jsonl"
    copies: tuple[Path, ...] = (parents_folder(path),)
    for _ in range(_MAX_DEPTH):
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise RecordingError(f"Cannot read session file {path}: {exc.strerror or exc}.") from None
        if limit is not None:
            data = data[:limit]
        offset = 0
        last: str | None = None
        fork: ForkRecord | None = None
        for number, line in enumerate(data.split(b"\n")):
            try:
                peek = _LINE.decode(line) if line.strip() else _Line()
            except msgspec.DecodeError:
                peek = _Line()
            if peek.type == "message" and peek.id == message_id:
                copy_folder = path.parent if path.parent != directory else None
                return Cut(session_id, offset, last, copy_folder)
            if peek.type == "message":
                last = peek.id
            elif peek.type == "fork" and number == 1:
                fork = _FORK.decode(line)
            offset += len(line) + 1
        if fork is None:
            break
        session_id, limit = fork.parent_session_id, fork.parent_size
        path, copies = find_parent(directory, session_id, copies)
    raise RecordingError(f"No message {message_id!r} in session {session_id}.")


def branches_of(directory: Path, session_id: str) -> list[str]:
    """Sessions of this project whose fork record names `session_id` as their parent."""
    found: list[str] = []
    for path in sorted(directory.glob("*.jsonl")):
        try:
            with open(path, "rb") as f:
                f.readline(1 << 20)
                second = f.readline(1 << 20)
        except OSError:
            continue
        if b'"type":"fork"' not in second:
            continue
        try:
            if _FORK.decode(second).parent_session_id == session_id:
                found.append(path.stem)
        except msgspec.DecodeError:
            continue
    return found


def _fork_of(path: Path) -> ForkRecord | None:
    """The fork record on a session file's second line, if it is a branch (None when unreadable)."""
    try:
        with open(path, "rb") as f:
            f.readline(1 << 20)
            second = f.readline(1 << 20)
    except OSError:
        return None
    if b'"type":"fork"' not in second:
        return None
    try:
        return _FORK.decode(second)
    except msgspec.DecodeError:
        return None


def readers_of(directory: Path, folders: Sequence[Path], session_id: str) -> Iterator[tuple[Path, int]]:
    """Session files in `folders` (the project's, its trash) that read `session_id`'s own file in `directory`,
    directly or through their parents, with how many bytes of it each reads."""
    for folder in folders:
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            if path.parent == directory and path.stem == session_id:
                continue
            current = path
            copies: tuple[Path, ...] = (parents_folder(path),)
            for _ in range(_MAX_DEPTH):
                fork = _fork_of(current)
                if fork is None:
                    break
                parent, further = find_parent(directory, fork.parent_session_id, copies)
                if parent == directory / f"{session_id}.jsonl":
                    yield path, fork.parent_size
                    break
                current, copies = parent, further


def keep_for_branches(directory: Path, folders: Sequence[Path], session_id: str) -> list[str]:
    """Before `session_id` leaves the project (deleted): copy the part of it each session that reads it needs into
    that session's `parents/` folder, with the copies it read its own parents from, so no branch loses its
    beginning. Returns the ids of those sessions. OSError (nothing moved yet) when a copy cannot be written."""
    source = directory / f"{session_id}.jsonl"
    kept: list[str] = []
    for reader, size in list(readers_of(directory, folders, session_id)):
        folder = parents_folder(reader)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        target = folder / source.name
        if not target.exists():
            partial = folder / f".{source.name}.part"
            with open(source, "rb") as src:
                data = src.read(size)
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(partial, target)
        inherit_copies(parents_folder(source), reader)
        kept.append(reader.stem)
    return kept


def inherit_copies(folder: Path | None, session_file: Path) -> None:
    """Give a session the copies of deleted parents kept in `folder` (hard links: copies never change)."""
    if folder is None or not folder.is_dir():
        return
    own = parents_folder(session_file)
    if own == folder:
        return
    own.mkdir(mode=0o700, parents=True, exist_ok=True)
    for copy in folder.glob("*.jsonl"):
        target = own / copy.name
        if target.exists():
            continue
        try:
            os.link(copy, target)
        except OSError:
            with contextlib.suppress(FileExistsError):
                shutil.copyfile(copy, target)
