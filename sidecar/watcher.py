"""Watching the workspace folders with watchdog: debounced, ignore-aware, handed to the event loop thread-safely."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

IGNORED_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "env", "__pycache__", ".mypy_cache", ".ruff_cache",
     ".pytest_cache", ".tox", ".nox", ".hg", ".svn", ".cache", ".idea"}
)  # fmt: skip
#: More top-level folders than this and the root is watched recursively as a whole.
MAX_TOP_LEVEL_WATCHES = 64
DEBOUNCE_S = 0.1


def _is_virtualenv(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyvenv.cfg"))


class WorkspaceWatcher:
    """Reports changed file paths (debounced batches) to `on_changes` on the event loop's thread.

    Each root gets a non-recursive watch plus a recursive watch per top-level folder that is not ignored
    (`.git`, `node_modules`, virtualenvs, `.gitignore`d folders): big ignored trees never cost inotify
    watches or memory. Events under ignored paths are dropped.
    """

    def __init__(
        self,
        roots: Iterable[str],
        loop: asyncio.AbstractEventLoop,
        on_changes: Callable[[set[str]], None],
        debounce_s: float = DEBOUNCE_S,
    ) -> None:
        self.roots = [os.path.realpath(r) for r in roots if os.path.isdir(r)]
        self._loop = loop
        self._on_changes = on_changes
        self._debounce = debounce_s
        self._pending: set[str] = set()
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._observer: Any = None
        self._ignorers: dict[str, Any] = {}
        self._handler: Any = None
        self.watched: list[tuple[str, bool]] = []

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Schedule the watches (call from a worker thread: it imports watchdog and lists top-level folders)."""
        from watchdog.observers import Observer

        from sidecar.tools.gitignore import Ignorer

        observer = Observer()
        handler = _handler(self)
        self._handler = handler
        for root in self.roots:
            self._ignorers[root] = Ignorer.for_directory(Path(root))
            for path, recursive in self._plan(root):
                try:
                    observer.schedule(handler, path, recursive=recursive)
                    self.watched.append((path, recursive))
                except OSError as exc:
                    log.warning("cannot watch %s: %s", path, exc)
        observer.daemon = True
        observer.start()
        self._observer = observer
        log.info("watching %d folders under %s", len(self.watched), ", ".join(self.roots))

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None

    def _plan(self, root: str) -> list[tuple[str, bool]]:
        try:
            children = [e for e in os.scandir(root) if e.is_dir(follow_symlinks=False)]
        except OSError as exc:
            log.warning("cannot list %s: %s", root, exc)
            return []
        kept = [e.path for e in children if not self.ignored(e.path, True)]
        if len(kept) > MAX_TOP_LEVEL_WATCHES:
            return [(root, True)]
        return [(root, False), *((path, True) for path in kept)]

    # -- filtering ------------------------------------------------------------------------------------
    def ignored(self, path: str, is_dir: bool) -> bool:
        root = next((r for r in self.roots if path == r or path.startswith(r + os.sep)), None)
        if root is None:
            return True
        parts = os.path.relpath(path, root).split(os.sep)
        if any(part in IGNORED_DIRS for part in parts):
            return True
        if is_dir and _is_virtualenv(path):
            return True
        ignorer = self._ignorers.get(root)
        return bool(ignorer is not None and ignorer.ignored(path, is_dir))

    # -- events (observer thread) ----------------------------------------------------------------------
    def _event(self, path: str, is_dir: bool) -> None:
        if is_dir:
            self._new_folder(path)
            return
        if self.ignored(path, False):
            return
        with self._lock:
            self._pending.add(path)
            if self._timer is None:
                self._timer = threading.Timer(self._debounce, self._flush)
                self._timer.daemon = True
                self._timer.start()

    def _new_folder(self, path: str) -> None:
        """A top-level folder created after start gets its own recursive watch (unless it is ignored)."""
        if os.path.dirname(path) not in self.roots or not os.path.isdir(path) or self.ignored(path, True):
            return
        if any(watched == path for watched, _ in self.watched) or self._observer is None:
            return
        try:
            self._observer.schedule(self._handler, path, recursive=True)
            self.watched.append((path, True))
        except OSError as exc:
            log.warning("cannot watch %s: %s", path, exc)
            return
        # Files may have been written into it before the watch existed: report what is there now.
        for dirpath, _dirs, files in os.walk(path):
            for name in files:
                self._event(os.path.join(dirpath, name), False)

    def _flush(self) -> None:
        with self._lock:
            batch, self._pending = self._pending, set()
            self._timer = None
        if batch and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._on_changes, batch)


def _handler(watcher: WorkspaceWatcher) -> Any:
    """A watchdog handler passing every created/modified/moved/deleted path on, as real paths."""
    from watchdog.events import FileSystemEvent, FileSystemEventHandler

    class Handler(FileSystemEventHandler):
        def dispatch(self, event: FileSystemEvent) -> None:
            if event.event_type in ("opened", "closed", "closed_no_write"):
                return
            for raw in (event.src_path, getattr(event, "dest_path", "")):
                if raw:
                    path = raw.decode() if isinstance(raw, bytes) else str(raw)
                    watcher._event(os.path.realpath(path), bool(event.is_directory))

    return Handler()
