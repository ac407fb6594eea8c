"""Taking checkpoints: before the agent changes a file, its content is saved; after, the change is recorded.

The tool registry calls these around every edit and shell command (sidecar.tools.registry.FileWatch), whatever
the approval mode and whichever front-end runs the tool. An edit's content before and after are known from its plan;
a shell command is checked cheaply: only the files its words name (`rm a.txt`, `sed -i … b.py`, `> c.log`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sidecar.checkpoints.store import BlobStore, digest_of
from sidecar.core.recording import FileChangeRecord
from sidecar.recording.reader import now_iso
from sidecar.recording.recorder import Recorder
from sidecar.session import Session
from sidecar.tools.edits import EditPlan
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.safe_io import PLAN_SECONDS, off_loop, open_regular, read_regular

log = logging.getLogger(__name__)

#: Edits whose texts (before and after) are at most this long are saved on the loop: ~0.2 ms per 100 KB.
INLINE_CHARS = 1024 * 1024
#: How many of a shell command's words are looked at as file names.
SHELL_WORDS = 64
#: A file a command leaves that is larger than this is not read to tell what it holds: it is known by its size and
#: time (a rewind then sees it as changed and removes or restores it only with force).
HASH_MAX_BYTES = 64 * 1024 * 1024
#: How long the look at the files after a shell command may take (it runs off the event loop).
AFTER_SECONDS = 30.0
_REDIRECT = "<>|&;0123456789"


def too_large(size: int, limit: int) -> str:
    """The skip reason of a file over checkpointMaxFileBytes."""
    return f"too large to save ({size:,} bytes; checkpointMaxFileBytes is {limit:,})"


def skip_reason(data: bytes, limit: int) -> str | None:
    """Why content is not saved (None: it is): larger than the setting, or binary."""
    if len(data) > limit:
        return too_large(len(data), limit)
    if b"\0" in data[:8192]:
        return "a binary file (not saved)"
    return None


@dataclass
class Saved:
    """A change about to happen: the file's state before it (saved), for the record written once it happened."""

    path: str
    message_id: str
    tool: str
    existed: bool
    before: str | None
    skipped: str | None
    after: str | None = None
    #: (size, mtime_ns) before a shell command, to tell whether a file that was not saved changed.
    signature: tuple[int, int] | None = None


@dataclass
class ShellWatch:
    """Files a shell command names, as they were before it ran."""

    tool: str
    message_id: str
    files: dict[str, Saved] = field(default_factory=dict)


class Checkpointer:
    """Implements sidecar.tools.registry.FileWatch for the live session (docs/checkpoints.md)."""

    def __init__(
        self,
        session: Session,
        recorder: Recorder,
        turn: Callable[[], str | None],
        store: Callable[[], BlobStore],
        on_write: Callable[[int], None] | None = None,
        admit: Callable[[int], str | None] | None = None,
    ) -> None:
        self._session = session
        self._recorder = recorder
        #: The user message of the running turn, asked of the live conversation (sidecar.chat.live).
        self._turn_message = turn
        self._store = store
        self._on_write = on_write or (lambda _size: None)
        #: Whether a new blob of that size fits under the store's cap (None) or why it is not saved.
        self._admit = admit or (lambda _size: None)
        #: (session id, user message id, path): the file's content before this turn is saved already.
        self._seen: set[tuple[str, str, str]] = set()

    # -- when --------------------------------------------------------------------------------------
    def _turn(self) -> str | None:
        """The user message of the running turn, when checkpoints are to be taken (the setting is on and the
        session is being recorded: a checkpoint that no record names could never be restored)."""
        if not self._session.settings.checkpointing or not self._recorder.recording:
            return None
        return self._turn_message()

    @property
    def _limit(self) -> int:
        return self._session.settings.checkpoint_max_file_bytes

    def _first(self, message_id: str, path: str) -> bool:
        return (self._recorder.session_id or "", message_id, path) not in self._seen

    def _keep(self, data: bytes, first: bool, store: BlobStore | None = None) -> tuple[str | None, str | None]:
        """(digest, skipped): the content saved when it is the turn's first look at the file, else only hashed."""
        skipped = skip_reason(data, self._limit)
        if skipped is not None:
            return None, skipped
        if not first:
            return digest_of(data), None
        return self._put(data, store or self._store())

    def _put(self, data: bytes, store: BlobStore) -> tuple[str | None, str | None]:
        """(digest, None) once stored, (None, why) when the store's cap leaves no room (checked before writing)."""
        digest = digest_of(data)
        if not store.has(digest):
            refused = self._admit(len(data))
            if refused is not None:
                return None, refused
        store.put(data, digest)
        self._on_write(len(data))  # the pruner counts what was written (sidecar/checkpoints/prune.py)
        return digest, None

    # -- edits --------------------------------------------------------------------------------------
    async def before_edit(self, plan: EditPlan, tool: str) -> Saved | None:
        """Save the content the edit starts from (and the one it leaves, for conflict summaries) before it runs.
        Small files are saved right here (a thread hop would cost more than the write); large ones off the loop."""
        message_id = self._turn()
        if message_id is None:
            return None
        path = str(plan.path)
        first = self._first(message_id, path)
        store = self._store()

        def save() -> Saved:
            before, skipped = (
                (None, None) if plan.before is None else self._keep(plan.before.encode("utf-8"), first, store)
            )
            after = plan.after.encode("utf-8")
            after_digest = self._keep(after, True, store)[0] or digest_of(after)
            return Saved(path, message_id, tool, plan.before is not None, before, skipped, after_digest)

        try:
            if len(plan.after) + len(plan.before or "") <= INLINE_CHARS:
                return save()
            return await off_loop(save, seconds=PLAN_SECONDS, what=f"Saving a checkpoint of {plan.shown}")
        except (OSError, ToolError) as exc:
            log.warning("checkpoint of %s not saved: %s", path, exc)
            return Saved(path, message_id, tool, plan.before is not None, None, f"could not be saved: {exc}")

    def edited(self, saved: Saved) -> None:
        """The edit happened: record the change (the first of this file in this turn carries its content before)."""
        self._record(saved)

    def _record(self, saved: Saved) -> None:
        key = (self._recorder.session_id or "", saved.message_id, saved.path)
        self._recorder.file_record(
            FileChangeRecord(
                time=now_iso(),
                message_id=saved.message_id,
                path=saved.path,
                before=saved.before,
                after=saved.after,
                existed=saved.existed,
                tool=saved.tool,
                skipped=saved.skipped,
            )
        )
        self._seen.add(key)

    # -- shell commands -----------------------------------------------------------------------------
    async def before_shell(self, command: str, cwd: Path, workspace: Workspace, tool: str) -> ShellWatch | None:
        """Save the files the command's words name (inside the workspace) before it runs."""
        message_id = self._turn()
        if message_id is None:
            return None
        watch = ShellWatch(tool, message_id)

        def save() -> ShellWatch:
            for path in named_files(command, cwd, workspace):
                watch.files[path] = self._look(path, message_id, tool)
            return watch

        try:
            return await off_loop(save, seconds=PLAN_SECONDS, what="Saving checkpoints before a shell command")
        except (OSError, ToolError) as exc:
            log.warning("checkpoints before a shell command not saved: %s", exc)
            return None

    def _look(self, path: str, message_id: str, tool: str) -> Saved:
        """A named file before the command: absent, saved, or only its size and time (too large, binary, odd)."""
        try:
            info = os.stat(path, follow_symlinks=False)
        except FileNotFoundError:
            return Saved(path, message_id, tool, False, None, None)
        signature = (info.st_size, info.st_mtime_ns)
        if info.st_size > self._limit:
            return Saved(path, message_id, tool, True, None, too_large(info.st_size, self._limit), signature=signature)
        try:
            data = read_regular(Path(path), path, self._limit, "save") or b""
            before, skipped = self._keep(data, self._first(message_id, path))
        except (ToolError, OSError) as exc:
            before, skipped = None, str(exc)
        return Saved(path, message_id, tool, True, before, skipped, signature=signature)

    async def after_shell(self, watch: ShellWatch) -> None:
        """Record the named files the command created, changed or deleted (a few stats and reads, off the event
        loop and within AFTER_SECONDS; runs also when the command was cancelled, since it may have changed files
        before it stopped)."""
        if not watch.files:
            return
        stop = threading.Event()
        try:
            found = await off_loop(
                lambda: self._changes(watch, stop),
                seconds=AFTER_SECONDS,
                what="Checking the files after a shell command",
                stop=stop,
            )
        except (OSError, ToolError) as exc:
            log.warning("checkpoints after a shell command not taken: %s", exc)
            return
        for saved in found:
            self._record(saved)

    def _changes(self, watch: ShellWatch, stop: threading.Event) -> list[Saved]:
        """The named files that changed, with what they hold now (blocking file work; stops when `stop` is set)."""
        changed: list[Saved] = []
        for path, saved in watch.files.items():
            if stop.is_set():
                break
            try:
                info = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                info = None
            except OSError:
                continue
            if info is None:
                if not saved.existed:
                    continue  # absent before and after
                now = None
            else:
                if saved.existed and saved.signature == (info.st_size, info.st_mtime_ns) and saved.skipped:
                    continue  # not saved before, and not touched
                try:
                    now = self._digest_now(Path(path), info, stop)
                except (ToolError, OSError) as exc:
                    log.debug("not checking %s after the command: %s", path, exc)
                    continue
                if saved.existed and saved.skipped is None and now == saved.before:
                    continue  # unchanged
            saved.after = now
            changed.append(saved)
        return changed

    def _digest_now(self, path: Path, info: os.stat_result, stop: threading.Event) -> str:
        """The digest of a file a command left (saved too, when small enough, for conflict summaries); a file over
        HASH_MAX_BYTES is known by its size and time, never read."""
        size = info.st_size
        if size > HASH_MAX_BYTES:
            return digest_of(f"not read: {size} bytes, modified {info.st_mtime_ns}".encode())
        if size > self._limit:
            return bounded_digest(path, stop)
        data = read_regular(path, str(path), self._limit, "save") or b""
        if skip_reason(data, self._limit) is not None:
            return digest_of(data)
        return self._put(data, self._store())[0] or digest_of(data)


def bounded_digest(path: Path, stop: threading.Event) -> str:
    """The sha256 of a regular file, read in chunks, at most HASH_MAX_BYTES; OSError when `stop` is set first."""
    hasher = hashlib.sha256()
    fd = open_regular(path, str(path))
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 20):
            if stop.is_set():
                raise OSError(f"stopped while reading {path}")
            hasher.update(chunk)
            if handle.tell() > HASH_MAX_BYTES:
                raise OSError(f"{path} grew past {HASH_MAX_BYTES:,} bytes while it was read")
    return hasher.hexdigest()


def named_files(command: str, cwd: Path, workspace: Workspace) -> list[str]:
    """The real paths inside the workspace that the command's words name: existing regular files and names that
    do not exist yet (it may create them); never directories, never outside the workspace."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    found: list[str] = []
    for word in words[:SHELL_WORDS]:
        word = word.lstrip(_REDIRECT) if word[:1] in _REDIRECT else word
        if not word or word.startswith("-") or "=" in word.split("/")[0] or any(c in word for c in "*?[$`"):
            continue
        try:
            path = workspace.resolve(os.path.join(cwd, word))
        except ToolError:
            continue
        if path.is_dir() or not path.parent.is_dir():
            continue
        text = str(path)
        if text not in found:
            found.append(text)
    return found
