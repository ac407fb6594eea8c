"""Branches of recorded sessions: where a fork is cut (whose file, which byte), and which sessions branch from one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec

from sidecar.core.recording import ForkRecord
from sidecar.protocol.sessions import TranscriptEntry, TranscriptMessage
from sidecar.recording.reader import RecordingError

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
    recorded it. RecordingError when no file has it."""
    limit: int | None = None
    for _ in range(_MAX_DEPTH):
        path = directory / f"{session_id}.jsonl"
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
                return Cut(session_id, offset, last)
            if peek.type == "message":
                last = peek.id
            elif peek.type == "fork" and number == 1:
                fork = _FORK.decode(line)
            offset += len(line) + 1
        if fork is None:
            break
        session_id, limit = fork.parent_session_id, fork.parent_size
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
