"""Checkpoints as data: from a session's fileChange / filesRestored records, what each turn changed and what a rewind
must put back (pure logic; the I/O is sidecar/checkpoints/; docs/checkpoints.md)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sidecar.core.recording import FileChangeRecord, FilesRestoredRecord

Change = Literal["modified", "created", "deleted"]
#: One checkpoint record and its place in the transcript log (a message at position p: records after it have > p).
Placed = tuple[int, FileChangeRecord | FilesRestoredRecord]


def change_of(existed: bool, exists: bool) -> Change | None:
    """How a file changed between two moments (None: it was absent at both, e.g. created and removed again)."""
    if existed and exists:
        return "modified"
    if exists:
        return "created"
    if existed:
        return "deleted"
    return None


@dataclass(frozen=True, slots=True)
class TurnFile:
    """A file one turn changed: how (against its content before the turn), and why its content was not saved."""

    path: str
    change: Change
    skipped: str | None = None


def turn_files(records: Iterable[Placed]) -> dict[str, list[TurnFile]]:
    """The files each turn changed, by user message id, each file once (in the order first changed)."""
    first: dict[tuple[str, str], FileChangeRecord] = {}
    last: dict[tuple[str, str], FileChangeRecord] = {}
    for _position, record in records:
        if isinstance(record, FileChangeRecord):
            key = (record.message_id, record.path)
            first.setdefault(key, record)
            last[key] = record
    turns: dict[str, list[TurnFile]] = {}
    for key, opened in first.items():
        change = change_of(opened.existed, last[key].after is not None)
        if change is not None:
            turns.setdefault(key[0], []).append(TurnFile(key[1], change, opened.skipped))
    return turns


@dataclass(frozen=True, slots=True)
class Target:
    """What a rewind does to one file: back to `before` (a sha256; None with `existed` false: remove it) unless its
    content now is neither `before` nor `left` (what the sidecar last left there: a conflict)."""

    path: str
    existed: bool
    before: str | None
    #: The content before was not saved (too large, binary): it cannot be put back.
    skipped: str | None
    #: The sha256 of what the agent's last change (or the last restore) left there; None: the file was gone.
    left: str | None
    change: Change


def rewind_targets(records: Iterable[Placed], after_position: int) -> list[Target]:
    """Every file changed by a fileChange record placed after `after_position` (the rewound message's place), with
    its content before the first such change and what was last left there; in the order first changed."""
    left: dict[str, str | None] = {}
    first: dict[str, FileChangeRecord] = {}
    for position, record in records:
        if isinstance(record, FilesRestoredRecord):
            left.update(record.files)
            continue
        left[record.path] = record.after
        if position > after_position and record.path not in first:
            first[record.path] = record
    targets = []
    for path, record in first.items():
        now = left.get(path)
        change = change_of(record.existed, now is not None) or "created"
        targets.append(Target(path, record.existed, record.before, record.skipped, now, change))
    return targets


def referenced(records: Iterable[FileChangeRecord | FilesRestoredRecord]) -> set[str]:
    """The blob digests a session's records name (what pruning must keep for it)."""
    found: set[str] = set()
    for record in records:
        if isinstance(record, FileChangeRecord):
            found.update(d for d in (record.before, record.after) if d)
        else:
            found.update(d for d in record.files.values() if d)
    return found
