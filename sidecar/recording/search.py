"""Listing sessions for people: search by title and message text, newest first, in pages with a cursor."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from pathlib import Path

import msgspec

from sidecar.core.recording import MessageRecord, transcript_message
from sidecar.recording.reader import SessionInfo

DEFAULT_PAGE = 50
MAX_PAGE = 1000
_SEARCHED_KINDS = frozenset({"user", "model", "toolCall"})
_MESSAGE = msgspec.json.Decoder(MessageRecord)


def matches(info: SessionInfo, query: str) -> bool:
    """True when the title or the text of a message the session recorded itself contains `query` (any case)."""
    needle = query.casefold()
    if info.title and needle in info.title.casefold():
        return True
    return _file_mentions(Path(info.path), query, needle)


def _file_mentions(path: Path, query: str, needle: str) -> bool:
    try:
        data = path.read_bytes()
    except OSError:
        return False
    if query.isascii():  # a cheap first look: the text as it appears inside a JSON string
        quoted = msgspec.json.encode(query)[1:-1].lower()
        if quoted not in data.lower():
            return False
    for line in data.split(b"\n"):
        if not line.startswith(b'{"type":"message"'):
            continue
        try:
            record = _MESSAGE.decode(line)
        except msgspec.DecodeError:
            continue
        if record.kind in _SEARCHED_KINDS and needle in transcript_message(record).text.casefold():
            return True
    return False


def encode_cursor(info: SessionInfo) -> str:
    return base64.urlsafe_b64encode(f"{info.last_updated}|{info.session_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    """(lastUpdated, sessionId) of the last session of the previous page; ValueError in words when not a cursor."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        last_updated, session_id = text.split("|", 1)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise ValueError(
            f"cursor {cursor[:40]!r} is not one that listSessions returned (pass nextCursor as is)"
        ) from None
    return last_updated, session_id


def page(
    infos: Sequence[SessionInfo], *, query: str | None, limit: int | None, cursor: str | None
) -> tuple[list[SessionInfo], str | None]:
    """One page of `infos` (newest first), after `cursor`, matching `query`; and the cursor of the next page."""
    size = DEFAULT_PAGE if limit is None else limit
    if not 1 <= size <= MAX_PAGE:
        raise ValueError(f"limit must be between 1 and {MAX_PAGE}, got {size}")
    ordered = sorted(infos, key=lambda i: (i.last_updated, i.session_id), reverse=True)
    if cursor is not None:
        after = decode_cursor(cursor)
        ordered = [i for i in ordered if (i.last_updated, i.session_id) < after]
    found: list[SessionInfo] = []
    for info in ordered:
        if query and not matches(info, query):
            continue
        if len(found) == size:
            return found, encode_cursor(found[-1])
        found.append(info)
    return found, None
