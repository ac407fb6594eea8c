"""Editor context: normalising what the editor reports, and the full / delta context turns (reference §3–§4)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import msgspec

from sidecar.protocol.ide import Cursor, OpenFile

log = logging.getLogger(__name__)

MAX_OPEN_FILES = 10
MAX_SELECTED_TEXT = 16_384
TRUNCATED_MARK = "... [TRUNCATED]"
FULL_HEADER = "Here is the user's editor context as a JSON object. This is for your information only."
DELTA_HEADER = (
    "Here is a summary of changes in the user's editor context, in JSON format. This is for your information only."
)


def decode_open_files(raw: Sequence[Any]) -> list[OpenFile]:
    """Valid entries of an openFiles list; each bad entry is logged and dropped."""
    files: list[OpenFile] = []
    for index, item in enumerate(raw):
        try:
            msgspec.json.encode(item)  # a lone surrogate ("\ud800") is not text we can pass on
            entry = msgspec.convert(item, OpenFile)
        except UnicodeEncodeError:
            log.warning("dropping openFiles[%d]: a string holds a lone UTF-16 surrogate", index)
            continue
        except (msgspec.ValidationError, TypeError, OverflowError) as exc:
            log.warning("dropping openFiles[%d]: %s", index, exc)
            continue
        if not entry.path.startswith("/") and not (len(entry.path) > 2 and entry.path[1] == ":"):
            log.warning("dropping openFiles[%d]: path %r is not absolute", index, entry.path[:200])
            continue
        if entry.cursor is not None and (entry.cursor.line < 1 or entry.cursor.character < 1):
            log.warning("dropping the cursor of openFiles[%d]: it must be 1-based", index)
            entry = msgspec.structs.replace(entry, cursor=None)
        files.append(entry)
    return files


def normalize(files: Sequence[OpenFile]) -> list[OpenFile]:
    """Newest first; only the newest file may be active and carry cursor/selection; selection cut; at most 10."""
    ordered = sorted(files, key=lambda f: f.timestamp, reverse=True)
    if not ordered:
        return []
    result: list[OpenFile] = []
    newest_active = bool(ordered[0].is_active)
    for index, entry in enumerate(ordered[:MAX_OPEN_FILES]):
        if index == 0 and newest_active:
            selected = entry.selected_text
            if selected is not None and len(selected) > MAX_SELECTED_TEXT:
                selected = selected[:MAX_SELECTED_TEXT] + TRUNCATED_MARK
            result.append(msgspec.structs.replace(entry, is_active=True, selected_text=selected))
        else:
            result.append(msgspec.structs.replace(entry, is_active=False, cursor=None, selected_text=None))
    return result


def _active(files: Sequence[OpenFile]) -> OpenFile | None:
    return next((f for f in files if f.is_active), None)


def _cursor(cursor: Cursor | None) -> dict[str, int] | None:
    return None if cursor is None else {"line": cursor.line, "character": cursor.character}


def _active_entry(active: OpenFile) -> dict[str, Any]:
    """{path, cursor?, selectedText?} of the active file (an empty selection is left out)."""
    entry: dict[str, Any] = {"path": active.path}
    if active.cursor is not None:
        entry["cursor"] = _cursor(active.cursor)
    if active.selected_text:
        entry["selectedText"] = active.selected_text
    return entry


def _fenced(header: str, payload: dict[str, Any]) -> str:
    body = json.dumps(payload, indent=2, ensure_ascii=False)
    return "\n".join([header, "```json", body, "```"])


def full_context(files: Sequence[OpenFile], changed_on_disk: Sequence[str] = ()) -> str | None:
    """The FULL context text, or None when there is nothing to say."""
    payload: dict[str, Any] = {}
    active = _active(files)
    if active is not None:
        payload["activeFile"] = _active_entry(active)
    others = [f.path for f in files if not f.is_active]
    if others:
        payload["otherOpenFiles"] = others
    if changed_on_disk:
        payload["filesChangedOnDisk"] = list(changed_on_disk)
    return _fenced(FULL_HEADER, payload) if payload else None


def delta_context(
    last: Sequence[OpenFile], current: Sequence[OpenFile], changed_on_disk: Sequence[str] = ()
) -> str | None:
    """The DELTA text between what was last sent and the current state, or None when nothing changed."""
    last_paths = {f.path for f in last}
    current_paths = {f.path for f in current}
    changes: dict[str, Any] = {}
    opened = [f.path for f in current if f.path not in last_paths]
    closed = [f.path for f in last if f.path not in current_paths]
    if opened:
        changes["filesOpened"] = opened
    if closed:
        changes["filesClosed"] = closed
    now, before = _active(current), _active(last)
    if now is not None:
        if before is None or before.path != now.path:
            changes["activeFileChanged"] = _active_entry(now)
        else:
            if now.cursor is not None and (before.cursor is None or before.cursor != now.cursor):
                changes["cursorMoved"] = {"path": now.path, "cursor": _cursor(now.cursor)}
            if (now.selected_text or "") != (before.selected_text or ""):
                changes["selectionChanged"] = {"path": now.path, "selectedText": now.selected_text or ""}
    elif before is not None:
        changes["activeFileChanged"] = {"path": None, "previousPath": before.path}
    if changed_on_disk:
        changes["filesChangedOnDisk"] = list(changed_on_disk)
    return _fenced(DELTA_HEADER, {"changes": changes}) if changes else None


def context_turn_text(
    current: Sequence[OpenFile] | None,
    last_sent: Sequence[OpenFile] | None,
    *,
    force_full: bool,
    changed_on_disk: Sequence[str] = (),
) -> str | None:
    """What to send before a user turn: full when forced or nothing was sent yet, else the delta."""
    if current is None:
        return None
    if force_full or last_sent is None:
        return full_context(current, changed_on_disk)
    return delta_context(last_sent, current, changed_on_disk)
