"""Where sessions live and how they are opened: SessionStore (paths, modes, locking, torn-tail repair)."""

from __future__ import annotations

import fcntl
import glob
import logging
import os
import re
from pathlib import Path
from typing import Any

from sidecar import __version__
from sidecar.core.recording import FORMAT_VERSION, ForkRecord, SessionRecord
from sidecar.private_files import create_private, make_private_dirs
from sidecar.recording.layout import data_home, project_id
from sidecar.recording.reader import (
    CorruptSession,
    LoadedSession,
    RecordingError,
    SessionInfo,
    SessionNotFound,
    UnsupportedVersion,
    list_sessions,
    now_iso,
    read_session,
)
from sidecar.recording.writer import ProblemCallback, SessionWriter, problem_text

__all__ = [
    "CorruptSession",
    "LoadedSession",
    "RecordingError",
    "SessionInfo",
    "SessionLocked",
    "SessionNotFound",
    "SessionStore",
    "SessionWriter",
    "UnsupportedVersion",
    "all_sessions",
    "project_id",
]

log = logging.getLogger(__name__)

_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class SessionLocked(RecordingError):
    """Another live process records this session (it holds the file's lock)."""


class SessionStore:
    """One project's sessions: `<home>/sessions/<project-id>/<session-id>.jsonl` (dirs 0700, files 0600)."""

    def __init__(self, project_root: str, *, home: Path | None = None) -> None:
        self.home = home if home is not None else data_home()
        self.project_root = os.path.realpath(os.path.expanduser(project_root))
        self.project_id = project_id(self.project_root)
        self.directory = self.home / "sessions" / self.project_id

    def path(self, session_id: str) -> Path:
        if not _SESSION_ID.fullmatch(session_id):
            raise ValueError(f"invalid session id {session_id!r}")
        return self.directory / f"{session_id}.jsonl"

    def session_dir(self, session_id: str) -> Path:
        """`<home>/sessions/<project-id>/<session-id>/`: the session's other data (saved tool outputs), made 0700."""
        if not _SESSION_ID.fullmatch(session_id):
            raise ValueError(f"invalid session id {session_id!r}")
        path = self.directory / session_id
        make_private_dirs(path)
        return path

    # -- writing ---------------------------------------------------------------------------------------
    def create(
        self,
        session_id: str,
        *,
        model: str,
        project_root: str | None = None,
        title: str | None = None,
        imported_from: dict[str, Any] | None = None,
        start_time: str | None = None,
        on_problem: ProblemCallback | None = None,
        fork: ForkRecord | None = None,
    ) -> SessionWriter:
        """A new session file with its session record, fsynced. Unwritable: a disabled writer, no error.

        A branch (`fork`) gets its fork record in the same single write as the session record: a kill leaves
        either no record or both, never a branch that forgot where it came from."""
        path = self.path(session_id)
        header = SessionRecord(
            time=start_time or now_iso(),
            version=FORMAT_VERSION,
            session_id=session_id,
            project_root=project_root or self.project_root,
            project_id=self.project_id,
            model=model,
            title=title,
            sidecar_version=__version__,
            imported_from=imported_from,
        )
        try:
            self._ensure_directory()
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            raise RecordingError(f"Session {session_id} already exists ({path}).") from None
        except OSError as exc:
            return SessionWriter(session_id, path, None, problem=problem_text(exc, path), on_problem=on_problem)
        file = open(fd, "ab", buffering=0)  # noqa: SIM115 - the writer owns and closes it
        os.fchmod(fd, 0o600)
        _try_lock(fd)
        writer = SessionWriter(session_id, path, file, title=title, on_problem=on_problem)
        if fork is None:
            writer.append(header)
        else:
            writer.append_all([header, fork])
        writer.sync()
        _fsync_directory(self.directory)
        return writer

    def open_for_append(
        self,
        session_id: str,
        loaded: LoadedSession | None = None,
        *,
        on_problem: ProblemCallback | None = None,
    ) -> SessionWriter:
        """Continue a session. Pass the LoadedSession from load() to avoid reading the file twice.

        A torn last record is moved to `<file>.torn` and cut off, so new records start on a fresh line.
        Raises RecordingError if the file is unreadable, damaged or from a newer format, and SessionLocked (one) if
        another live process records it — a second editor window; the caller continues in a branch instead (nothing
        is changed either way).
        """
        path = self.path(session_id)
        if loaded is None:
            loaded = read_session(path)

        def writer(file: Any, *, size: int = 0, problem: str | None = None) -> SessionWriter:
            """A writer carrying on from `loaded`; with no file it is disabled and says why."""
            return SessionWriter(
                session_id,
                path,
                file,
                message_count=loaded.message_count,
                context_count=loaded.context_count,
                compaction_count=loaded.compaction_count,
                title=loaded.title,
                undoable=loaded.undoable,
                last_message_id=loaded.last_message_id,
                size=size,
                problem=problem,
                on_problem=on_problem,
            )

        def off(problem: str) -> SessionWriter:
            return writer(None, problem=problem)

        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except OSError as exc:
            return off(problem_text(exc, path))
        try:
            if not _try_lock(fd):
                os.close(fd)
                raise SessionLocked(f"Session {session_id} is open in another window (another sidecar records it).")
            size = _repair_tail(fd, path, loaded)
            os.fchmod(fd, 0o600)
        except _Changed as exc:
            os.close(fd)
            return off(f"Session recording is off: {path} changed since it was loaded ({exc}).")
        except OSError as exc:
            os.close(fd)
            return off(problem_text(exc, path))
        file = open(fd, "ab", buffering=0)  # noqa: SIM115 - the writer owns and closes it
        return writer(file, size=size)

    # -- reading ---------------------------------------------------------------------------------------
    def load(self, session_id: str, *, salvage: bool = False) -> LoadedSession:
        """Replay a session. A torn last line is skipped with a warning; any other bad line raises
        CorruptSession naming the line, unless `salvage` (then it is skipped with a warning)."""
        return read_session(self.path(session_id), salvage=salvage)

    def list(self) -> list[SessionInfo]:
        """This project's sessions, newest first, from each file's first line and tail."""
        return list_sessions(self.directory)

    def resolve(self, id_or_prefix: str) -> str:
        """The session id that is `id_or_prefix` or uniquely starts with it."""
        if _SESSION_ID.fullmatch(id_or_prefix) and self.path(id_or_prefix).exists():
            return id_or_prefix
        matches = sorted(p.stem for p in self.directory.glob(f"{glob.escape(id_or_prefix)}*.jsonl"))
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise RecordingError(f"No session {id_or_prefix!r} in {self.directory}.")
        raise RecordingError(f"Session id {id_or_prefix!r} is ambiguous: {', '.join(matches[:5])}.")

    def _ensure_directory(self) -> None:
        make_private_dirs(self.home)
        for directory in (self.home / "sessions", self.directory):
            directory.mkdir(mode=0o700, exist_ok=True)
            if directory.stat().st_mode & 0o777 != 0o700:
                try:
                    os.chmod(directory, 0o700)
                except PermissionError:  # not ours (a shared home): the project folder below is ours, and 0700
                    log.warning("cannot make %s private (not its owner); session files stay 0600", directory)


def all_sessions(home: Path | None = None) -> tuple[Path, list[SessionInfo]]:
    """The folder holding every project's sessions, and all their sessions, newest first."""
    root = (home if home is not None else data_home()) / "sessions"
    dirs = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    infos = [info for directory in dirs for info in list_sessions(directory)]
    return root, sorted(infos, key=lambda info: info.last_updated, reverse=True)


class _Changed(Exception):
    pass


def _repair_tail(fd: int, path: Path, loaded: LoadedSession) -> int:
    """Make the file end on a whole line right after the last good record; returns the resulting size."""
    size = os.fstat(fd).st_size
    if size < loaded.valid_size:
        raise _Changed("it is shorter")
    if size > loaded.valid_size:
        with open(path, "rb") as reader:
            reader.seek(loaded.valid_size)
            extra = reader.read(size - loaded.valid_size)
        if b"\n" in extra:
            raise _Changed("records were added")
        aside = path.with_name(path.name + ".torn")
        keep = create_private(aside)
        try:
            os.write(keep, extra + b"\n")
            os.fsync(keep)
        finally:
            os.close(keep)
        os.ftruncate(fd, loaded.valid_size)
        log.warning("moved a torn last record of %s (%d bytes) to %s", path, len(extra), aside)
        size = loaded.valid_size
    if loaded.needs_newline:
        os.write(fd, b"\n")
        size += 1
    return size


def _try_lock(fd: int) -> bool:
    """An exclusive advisory lock; False only if another process holds it (no locking support: True)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
