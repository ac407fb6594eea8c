"""Where context files are: ~/.gemini, each workspace folder up to its project root, subfolders of a tool's path."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sidecar.config.context_names import name_problem
from sidecar.memory.imports import project_root

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Found:
    """A context file found on disk: its absolute path, its scope and the project root its imports stay in."""

    path: Path
    scope: str
    root: Path


def usable_names(names: Iterable[str]) -> list[str]:
    """The configured names, trimmed, without a folder part, `..` or a credential file's name (whichever source
    set them: the settings check refuses them first, this is the last line), duplicates dropped."""
    kept: list[str] = []
    for raw in names:
        name = raw.strip()
        problem = name_problem(name)
        if problem is not None:
            log.warning("context file name refused: %s", problem)
            continue
        if name not in kept:
            kept.append(name)
    return kept


def file_id(path: Path) -> tuple[int, int] | None:
    """The file's identity (device, inode; symlinks followed), or None when it cannot be read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _readable(path: Path) -> bool:
    return os.path.isfile(path) and os.access(path, os.R_OK)


def global_dir(home: Path | None = None) -> Path:
    """~/.gemini (HOME read at call time, so tests and users with another HOME get theirs)."""
    return (home if home is not None else Path(os.path.expanduser("~"))) / ".gemini"


def global_files(names: Sequence[str], home: Path | None = None) -> list[Found]:
    """`~/.gemini/<name>` for each name that is a readable file, in the names' order."""
    folder = global_dir(home)
    return [Found(folder / n, "global", folder) for n in names if _readable(folder / n)]


def _ceiling(folder: Path, markers: tuple[str, ...]) -> Path:
    """The project root of a workspace folder: the first ancestor with a boundary marker, else the folder itself."""
    return project_root(folder, markers) or folder


def _upward(start: Path, ceiling: Path, names: Sequence[str], skip: Path) -> list[Path]:
    """Context files from `ceiling` down to `start` (ancestor first), never inside `skip` (~/.gemini)."""
    folders: list[Path] = []
    current = start
    while True:
        folders.append(current)
        if current == ceiling or current.parent == current:
            break
        current = current.parent
    found: list[Path] = []
    for folder in reversed(folders):
        if folder == skip or skip in folder.parents:
            continue
        found += [folder / n for n in names if _readable(folder / n)]
    return found


def project_files(
    folders: Sequence[str], names: Sequence[str], markers: tuple[str, ...], home: Path | None = None
) -> list[Found]:
    """For each workspace folder, the context files from its project root down to it, ancestors first;
    the same file (by identity) once, where it was first found."""
    skip = global_dir(home).resolve()
    seen: set[tuple[int, int]] = set()
    found: list[Found] = []
    for raw in folders:
        folder = Path(raw).resolve()
        if not folder.is_dir():
            continue
        ceiling = _ceiling(folder, markers)
        for path in _upward(folder, ceiling, names, skip):
            ident = file_id(path)
            if ident is None or ident in seen:
                continue
            seen.add(ident)
            found.append(Found(path, "project", ceiling))
    return found


def containing_folder(path: Path, folders: Sequence[str]) -> Path | None:
    """The deepest workspace folder holding `path`, or None."""
    best: Path | None = None
    for raw in folders:
        folder = Path(raw).resolve()
        inside = path == folder or folder in path.parents
        if inside and (best is None or len(folder.parts) > len(best.parts)):
            best = folder
    return best


def subfolder_files(
    path: Path, folders: Sequence[str], names: Sequence[str], markers: tuple[str, ...], home: Path | None = None
) -> list[Found]:
    """The context files between a tool's `path` (its folder when it is a file or does not exist) and its
    project root, ancestors first; [] when the path is in no workspace folder."""
    resolved = Path(os.path.realpath(path))
    folder = containing_folder(resolved, folders)
    if folder is None:
        return []
    start = resolved if resolved.is_dir() else resolved.parent
    if not (start == folder or folder in start.parents):
        return []
    ceiling = _ceiling(folder, markers)
    skip = global_dir(home).resolve()
    return [Found(p, "subdirectory", ceiling) for p in _upward(start, ceiling, names, skip)]
