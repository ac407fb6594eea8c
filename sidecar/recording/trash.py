"""Deleting a session moves it to the trash (kept 30 days); restoring moves it back. Nothing is destroyed at once."""

from __future__ import annotations

import contextlib
import fcntl
import glob
import logging
import os
import shutil
import time
from pathlib import Path

from sidecar.private_files import create_private, make_private_dirs
from sidecar.recording.branches import keep_for_branches
from sidecar.recording.reader import session_info
from sidecar.recording.store import RecordingError, SessionInfo, SessionStore

log = logging.getLogger(__name__)

KEEP_DAYS = 30
_DELETED = ".deleted"  # a marker beside the trashed file: when it was deleted (its mtime)


def trash_directory(store: SessionStore) -> Path:
    """`<home>/trash/<project-id>/`: deleted sessions of this project, with their data folders."""
    return store.home / "trash" / store.project_id


def delete(store: SessionStore, session_id: str) -> Path:
    """Move a session (and its data folder) to the trash. RecordingError in words when it cannot be: unknown, or
    open in another window. Its branches first get a copy of the part of it they read (branches.keep_for_branches)."""
    path = store.path(session_id)
    if not path.exists():
        raise RecordingError(f"No session {session_id} in this project.")
    trash = trash_directory(store)
    make_private_dirs(trash)
    purge(store)
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held while it moves: no one starts appending meanwhile
        except BlockingIOError:
            raise RecordingError(
                f"Session {session_id} is open in another window; close it there (or start a new session there) first."
            ) from None
        keep_for_branches(store.directory, [store.directory, trash], session_id)
        target = trash / path.name
        if target.exists():  # an older deletion of the same id: keep both
            target.rename(trash / f"{session_id}.{int(time.time())}.jsonl")
        os.rename(path, target)
    finally:
        os.close(fd)
    data = store.directory / session_id
    if data.is_dir():
        shutil.rmtree(trash / session_id, ignore_errors=True)
        os.rename(data, trash / session_id)
    marker = trash / f"{session_id}{_DELETED}"
    os.close(create_private(marker))
    os.utime(marker)
    return target


def restore(store: SessionStore, session_id: str) -> Path:
    """Bring a deleted session back into the project's sessions. RecordingError in words when it cannot be."""
    trash = trash_directory(store)
    source = trash / f"{session_id}.jsonl"
    if not source.exists():
        matches = sorted(p.stem for p in trash.glob(f"{glob.escape(session_id)}*.jsonl")) if trash.is_dir() else []
        if len(matches) == 1:
            session_id, source = matches[0], trash / f"{matches[0]}.jsonl"
        else:
            hint = f" (several match: {', '.join(matches[:5])})" if matches else ""
            raise RecordingError(f"No deleted session {session_id} in the trash of {store.project_root}{hint}.")
    target = store.path(session_id)
    if target.exists():
        raise RecordingError(f"Session {session_id} already exists in the project; nothing was restored.")
    make_private_dirs(store.directory)
    os.rename(source, target)
    data = trash / session_id
    if data.is_dir() and not (store.directory / session_id).exists():
        os.rename(data, store.directory / session_id)
    with contextlib.suppress(FileNotFoundError):
        (trash / f"{session_id}{_DELETED}").unlink()
    return target


def deleted(store: SessionStore) -> list[tuple[SessionInfo, float]]:
    """The sessions in this project's trash that restore() can bring back, with their deletion times (epoch
    seconds), most recently deleted first. Unreadable files are left out (logged)."""
    trash = trash_directory(store)
    found: list[tuple[SessionInfo, float]] = []
    for marker in trash.glob(f"*{_DELETED}") if trash.is_dir() else []:
        path = trash / f"{marker.name[: -len(_DELETED)]}.jsonl"
        try:
            found.append((session_info(path), marker.stat().st_mtime))
        except (RecordingError, OSError, ValueError) as exc:
            log.warning("skipping deleted session file %s: %s", path, exc)
    found.sort(key=lambda pair: pair[1], reverse=True)
    return found


def purge(store: SessionStore, *, now: float | None = None) -> list[str]:
    """Remove trashed sessions deleted more than KEEP_DAYS ago; returns their ids."""
    trash = trash_directory(store)
    if not trash.is_dir():
        return []
    cutoff = (time.time() if now is None else now) - KEEP_DAYS * 86400
    removed: list[str] = []
    for marker in trash.glob(f"*{_DELETED}"):
        try:
            if marker.stat().st_mtime >= cutoff:
                continue
        except FileNotFoundError:
            continue
        session_id = marker.name[: -len(_DELETED)]
        with contextlib.suppress(FileNotFoundError):
            (trash / f"{session_id}.jsonl").unlink()
        shutil.rmtree(trash / session_id, ignore_errors=True)
        marker.unlink(missing_ok=True)
        removed.append(session_id)
        log.info("purged session %s from the trash (deleted over %d days ago)", session_id, KEEP_DAYS)
    return removed


def is_trashed(store: SessionStore, session_id: str) -> bool:
    try:
        name = store.path(session_id).name  # a valid session id, or ValueError
        return (trash_directory(store) / name).exists()
    except (ValueError, OSError):
        return False
