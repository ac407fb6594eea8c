"""Folders and files only the user can read: 0700 and 0600 whatever the umask."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["create_private", "make_private_dirs", "write_private"]


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
