"""Folders and files only the user can read: 0700 and 0600 whatever the umask; a project's approvals kept in one."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

__all__ = ["create_private", "make_private_dirs", "read_approvals", "write_approvals", "write_private"]

log = logging.getLogger(__name__)


def make_private_dirs(path: Path) -> Path:
    """Create `path` and its missing parents, each 0700 whatever the umask (existing folders are left alone)."""
    missing: list[Path] = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another process
            continue
        os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask (and a umask like 0o200 takes bits away)
    return path


def create_private(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """Open `path` for writing, creating it; the file is 0600 whatever the umask (also one that existed)."""
    fd = os.open(path, flags | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: bytes) -> None:
    """Replace the file `path` with `data` atomically; the file is 0600 whatever the umask."""
    make_private_dirs(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)


def read_approvals(path: Path, what: str) -> dict[str, Any]:
    """The approvals kept in `path` (`{"project": …, "approved": {key: record}}`); none when it is missing or
    unreadable (`what` names them in the warning: the user is asked again, never trusted by default)."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("cannot read the %s %s (%s); asking again", what, path, exc)
        return {}
    approved = data.get("approved") if isinstance(data, dict) else None
    return approved if isinstance(approved, dict) else {}


def write_approvals(path: Path, project: str, approved: dict[str, Any], what: str) -> None:
    """Keep `approved` for `project` in `path` (0600); a failure is logged: the approval holds for this session."""
    try:
        write_private(path, json.dumps({"project": project, "approved": approved}, indent=2).encode())
    except OSError as exc:
        log.warning("cannot keep the %s in %s: %s (it holds for this session)", what, path, exc)
