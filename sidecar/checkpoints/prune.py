"""Keeping the checkpoint store bounded: blobs no session names go with the sessions (trash purge), and past the
project's cap the blobs used longest ago go first, except those a session open in a sidecar names."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from sidecar.checkpoints.store import BlobStore
from sidecar.core.checkpoints import referenced
from sidecar.core.recording import FileChangeRecord, FilesRestoredRecord
from sidecar.core.words import counted
from sidecar.recording.recorder import Recorder
from sidecar.recording.trash import trash_directory
from sidecar.session import Session

log = logging.getLogger(__name__)

#: A blob written this recently may belong to an edit whose record is not written yet: never pruned.
GRACE_SECONDS = 3600.0
#: Without /proc/locks, a session file written this recently counts as open.
RECENT_SECONDS = 86400.0
_DECODER = msgspec.json.Decoder(FileChangeRecord | FilesRestoredRecord)
_MARKERS = (b'"type":"fileChange"', b'"type":"filesRestored"')


def session_files(project_directory: Path, trash_directory: Path) -> list[Path]:
    """Every session file that may name blobs: the project's, the trash's, and the copies branches keep."""
    found: list[Path] = []
    for folder in (project_directory, trash_directory):
        found += folder.glob("*.jsonl")
        found += folder.glob("*/parents/*.jsonl")
    return found


def digests_in(path: Path) -> set[str]:
    """The blobs a session file's checkpoint records name (lines that are not such records are not decoded)."""
    try:
        data = path.read_bytes()
    except OSError:
        return set()
    if not any(marker in data for marker in _MARKERS):
        return set()  # most sessions: no line to look at
    records: list[FileChangeRecord | FilesRestoredRecord] = []
    for line in data.splitlines():
        if any(marker in line for marker in _MARKERS):
            with contextlib.suppress(msgspec.DecodeError, msgspec.ValidationError):
                records.append(_DECODER.decode(line))
    return referenced(records)


def open_sessions(files: Iterable[Path]) -> set[Path]:
    """The session files some process holds open for recording (its flock, read from /proc/locks, which takes no
    lock itself); where /proc/locks cannot be read, those written within the last day."""
    files = list(files)
    try:
        table = Path("/proc/locks").read_text()
    except OSError:
        table = None
    if table is None:
        cutoff = time.time() - RECENT_SECONDS
        recent = set()
        for path in files:
            with contextlib.suppress(OSError):
                if path.stat().st_mtime >= cutoff:
                    recent.add(path)
        return recent
    inodes = set()
    for line in table.splitlines():
        fields = line.split()
        if "FLOCK" in fields and len(fields) >= 6:
            with contextlib.suppress(ValueError, IndexError):
                inodes.add(int(fields[fields.index("FLOCK") + 4].rsplit(":", 1)[1]))
    held = set()
    for path in files:
        with contextlib.suppress(OSError):
            if path.stat().st_ino in inodes:
                held.add(path)
    return held


def prune(blobs: BlobStore, files: list[Path], *, cap_bytes: int | None, now: float | None = None) -> list[str]:
    """Remove the blobs no session file names, then, past `cap_bytes`, the ones used longest ago that no open
    session names. Blobs younger than GRACE_SECONDS stay. Returns the removed digests."""
    now = time.time() if now is None else now
    stored = blobs.blobs()
    if not stored:
        return []
    named: set[str] = set()
    by_file = {path: digests_in(path) for path in files}
    for digests in by_file.values():
        named |= digests
    needed: set[str] = set()
    for path in open_sessions(by_file):
        needed |= by_file[path]
    removed: list[str] = []
    total = sum(blob.size for blob in stored)
    for blob in stored:  # oldest use first
        if now - blob.used < GRACE_SECONDS:
            continue
        unnamed = blob.digest not in named
        over = cap_bytes is not None and total > cap_bytes and blob.digest not in needed
        if unnamed or over:
            blobs.remove(blob.digest)
            removed.append(blob.digest)
            total -= blob.size
    if removed:
        log.info("checkpoint store %s: removed %s; %d bytes kept", blobs.root, counted(len(removed), "blob"), total)
    return removed


class Pruner:
    """Keeps the store under its cap when writing (`admit`: a blob that would pass the cap is not written) and
    runs `prune` in a background thread once this process has written enough new blobs (a twentieth of the cap,
    once at the first write, and whenever a blob did not fit), so older blobs make room."""

    def __init__(self, session: Session, recorder: Recorder, blobs: Callable[[], BlobStore]) -> None:
        self._session = session
        self._recorder = recorder
        self._blobs = blobs
        self._since = 0
        self._checked = False
        self._running: threading.Thread | None = None
        self._lock = threading.Lock()
        #: The store's size as last counted plus what this process wrote since (None: count it at the next write).
        self._total: int | None = None

    def admit(self, size: int) -> str | None:
        """Before a new blob of `size` bytes is written: None when the store stays within checkpointStoreMb with
        it (it is counted), else why it is not saved (a prune is started to make room for the next ones)."""
        cap = self.cap_bytes
        with self._lock:
            if self._total is None:
                self._total = sum(blob.size for blob in self._blobs().blobs())
            if self._total + size <= cap:
                self._total += size
                return None
            total = self._total
        self._prune_soon(force=True)
        return (
            f"not saved: the checkpoint store is full ({total:,} of {cap:,} bytes; setting checkpointStoreMb), "
            "and what it holds is still needed or too recent to remove"
        )

    @property
    def cap_bytes(self) -> int:
        """checkpointStoreMb in bytes."""
        return self._session.settings.checkpoint_store_mb * 1024 * 1024

    def wrote(self, size: int) -> None:
        """This process stored `size` more bytes: prune in the background once enough have been."""
        self._since += size
        self._prune_soon(force=False)

    def _prune_soon(self, *, force: bool) -> None:
        if not force and self._checked and self._since < self.cap_bytes // 20:
            return
        if self._running is not None and self._running.is_alive():
            return
        self._since, self._checked = 0, True
        self._running = threading.Thread(target=self.run, name="sidecar-checkpoint-prune", daemon=True)
        self._running.start()

    def run(self) -> list[str]:
        """One pruning pass over the current project (also called directly by tests and `sidecar` commands)."""
        store = self._recorder.store
        try:
            files = session_files(store.directory, trash_directory(store))
            blobs = self._blobs()
            removed = prune(blobs, files, cap_bytes=self.cap_bytes)
            with self._lock:
                self._total = sum(blob.size for blob in blobs.blobs())
            return removed
        except OSError as exc:
            log.warning("pruning the checkpoint store failed: %s", exc)
            return []
