"""The session's context-file memory: load, refresh, add, subfolder files just in time, changes on disk."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sidecar.config.settings import Settings
from sidecar.core.memory_text import (
    LoadedFile,
    append_fact,
    changed_turn_text,
    jit_block,
    join_files,
    project_section,
    safe_text,
    sanitize_fact,
    system_section,
    wrap_file,
)
from sidecar.core.tokens import text_quarters
from sidecar.core.words import counted, plural
from sidecar.memory import discovery
from sidecar.memory.discovery import Found
from sidecar.memory.imports import ImportBudget, process_imports, project_root, read_text
from sidecar.protocol import errors
from sidecar.protocol.memory import AddMemoryScope, MemoryFile, MemoryInfo
from sidecar.session import Session
from sidecar.tools import protected

log = logging.getLogger(__name__)

UNTRUSTED_REASON = (
    "the workspace is not trusted: its context files are instructions written by whoever wrote the repository"
)
_TRUST_MOVED = "the workspace trust changed while context files were read; that read is discarded"
#: The file addMemory writes to (when it is one of the configured names).
ADD_FILE_NAME = "GEMINI.md"

#: A file's state on disk: (mtime_ns, size, inode), None when absent.
Stamp = tuple[int, int, int] | None


def _stamp(path: Path) -> Stamp:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size, info.st_ino


def _tokens(file: LoadedFile) -> int:
    return text_quarters(wrap_file(file.path, file.text)) // 4 if file.text.strip() else 0


def _load(found: Found, budget: ImportBudget, folders: Sequence[str] | None) -> LoadedFile | None:
    """A context file with its imports inlined (within `budget`; with `folders` (workspace memory), only from inside
    them and the context file's own folder: a file above the workspace reaches no further than its folder)."""
    try:
        text = read_text(found.path)
    except OSError as exc:
        log.warning("could not read context file %s: %s", found.path, exc)
        return None
    allowed = None if folders is None else [*folders, str(found.path.parent)]
    inlined = process_imports(text, found.path, found.root, budget=budget, folders=allowed)
    return LoadedFile(str(found.path), found.scope, inlined)


@dataclass
class Snapshot:
    """What one load found: the files read, the files skipped, and the stamps of every place looked at."""

    global_files: list[LoadedFile] = field(default_factory=list)
    project_files: list[LoadedFile] = field(default_factory=list)
    skipped: int = 0
    stamps: dict[str, Stamp] = field(default_factory=dict)
    #: Real paths of every file the loaded files import (the import graph): protected, and watched for changes.
    imported: list[str] = field(default_factory=list)


class MemoryService:
    """Loads the context files of one Session and keeps the model's view of them current.

    Global files go into the system instruction (`system_section`), project files into the session context
    (`project_section`), subfolder files into tool results (`just_in_time`); `check` finds files changed on disk
    and `take_changes` gives the context turn that tells the model. `on_change` receives every new MemoryInfo
    (sidecar/memoryChanged), `warn` the untrusted-workspace notice in words.
    """

    def __init__(
        self,
        session: Session,
        on_change: Callable[[MemoryInfo], None] | None = None,
        warn: Callable[[str], None] | None = None,
        *,
        home: Path | None = None,
    ) -> None:
        self._session = session
        self._on_change = on_change
        self._warn = warn
        self._home = home
        self._lock = threading.Lock()
        self._snap = Snapshot()
        self._jit: list[LoadedFile] = []
        self._jit_stamps: dict[str, Stamp] = {}
        #: The import graph of the subfolder files delivered since the last load.
        self._jit_imported: list[str] = []
        self._delivered: set[tuple[int, int]] = set()
        self._pending: dict[str, LoadedFile | None] = {}
        self._pending_global: set[str] = set()
        self._warned_skip = 0
        self._checking = asyncio.Lock()
        self.loaded = False
        #: Counts the changes told (memoryChanged): what was built from the memory is stale when it moved on.
        self.version = 0

    # -- settings ---------------------------------------------------------------------------------------
    def _settings(self) -> Settings:
        return self._session.settings

    def names(self) -> list[str]:
        """The configured context file names (contextFileNames), cleaned."""
        return discovery.usable_names(self._settings().context_file_names)

    def _markers(self) -> tuple[str, ...]:
        return tuple(self._settings().memory_boundary_markers)

    def _trusted(self) -> bool:
        return self._session.trusted

    # -- loading ----------------------------------------------------------------------------------------
    def _scan(self, trusted: bool) -> Snapshot:
        """Discover and read every global file, and the project files when `trusted` (blocking file work: run off
        the loop; the caller checks that the trust still holds when it is done)."""
        names = self.names()
        protected.set_context_file_names(names)
        folders = list(self._session.workspace_folders)
        snap = Snapshot()
        gdir = discovery.global_dir(self._home)
        for name in names:
            snap.stamps[str(gdir / name)] = _stamp(gdir / name)
        budget = ImportBudget()  # one for all the files of this load
        global_found = discovery.global_files(names, self._home)
        snap.global_files = [f for f in (_load(g, budget, None) for g in global_found) if f is not None]
        found = discovery.project_files(folders, names, self._markers(), self._home)
        for candidate in self._project_candidates(folders, names):
            snap.stamps[candidate] = _stamp(Path(candidate))
        if trusted:
            snap.project_files = [f for f in (_load(p, budget, folders) for p in found) if f is not None]
        else:
            snap.skipped = len(found)
        snap.imported = list(budget.files)
        for path in snap.imported:
            snap.stamps[path] = _stamp(Path(path))
        self._protect(snap.imported)
        return snap

    def _protect(self, more: Sequence[str] = ()) -> None:
        """Every file of the memory's import graph is a protected path (an edit asks every time)."""
        with self._lock:
            graph = [*self._jit_imported, *more]
        protected.set_memory_files(graph)

    def _project_candidates(self, folders: Sequence[str], names: Sequence[str]) -> list[str]:
        """Every path where a project context file could appear (so that a new one is noticed too)."""
        out: list[str] = []
        for raw in folders:
            folder = Path(raw).resolve()
            ceiling = project_root(folder, self._markers()) or folder
            current = folder
            while True:
                out += [str(current / n) for n in names]
                if current == ceiling or current.parent == current:
                    break
                current = current.parent
        return out

    def _install(self, snap: Snapshot) -> None:
        with self._lock:
            self._snap = snap
            self._jit = []
            self._jit_stamps = {}
            self._jit_imported = []
            self._delivered = {
                ident
                for f in (*snap.global_files, *snap.project_files)
                if (ident := discovery.file_id(Path(f.path))) is not None
            }
            self.loaded = True

    async def load(self) -> MemoryInfo:
        """(Re)read every context file and tell the editor; subfolder files will be delivered again. Files that
        changed since the model saw them are told to it at its next turn (refresh and addMemory included)."""
        if not self.loaded:
            while True:
                trusted = self._trusted()
                snap = await asyncio.to_thread(self._scan, trusted)
                if self._trusted() == trusted:
                    break
                log.info(_TRUST_MOVED)  # read again under the trust that holds now
            self._install(snap)
            return self._changed()
        async with self._checking:
            await self._rescan_while_trust_holds()
            with self._lock:
                self._jit = []
                self._jit_stamps = {}
                self._jit_imported = []
                self._delivered = {
                    ident
                    for f in (*self._snap.global_files, *self._snap.project_files)
                    if (ident := discovery.file_id(Path(f.path))) is not None
                }
        return self._changed()

    async def refresh(self) -> MemoryInfo:
        """sidecar/refreshMemory: read everything again."""
        return await self.load()

    async def ensure_loaded(self) -> None:
        """Load once, before the first request needs the memory."""
        if not self.loaded:
            await self.load()

    def _changed(self) -> MemoryInfo:
        self.version += 1
        info = self.info()
        if info.skipped_project_files and info.skipped_project_files != self._warned_skip and self._warn is not None:
            self._warn(
                f"{counted(info.skipped_project_files, 'project context file')} "
                f"{plural(info.skipped_project_files, 'was', 'were')} not loaded: {UNTRUSTED_REASON}. "
                "Trust the workspace to load them."
            )
        self._warned_skip = info.skipped_project_files
        if self._on_change is not None:
            self._on_change(info)
        return info

    # -- what the model and the editor see --------------------------------------------------------------
    def files(self) -> list[LoadedFile]:
        """Every loaded file in the order the model sees them: global, project, subfolders (as delivered)."""
        with self._lock:
            return [*self._snap.global_files, *self._snap.project_files, *self._jit]

    def info(self) -> MemoryInfo:
        """sidecar/getMemory's answer."""
        files = self.files()
        listed = [
            MemoryFile(path=safe_text(f.path), scope=f.scope, tokens=_tokens(f))  # type: ignore[arg-type]
            for f in files
        ]
        skipped = self._snap.skipped
        return MemoryInfo(
            files=listed,
            text=join_files(files),
            tokens=sum(f.tokens for f in listed),
            skipped_project_files=skipped,
            skipped_reason=UNTRUSTED_REASON if skipped else None,
        )

    def system_section(self) -> str | None:
        """The global memory for the system instruction (None when there is none)."""
        return system_section(self._snap.global_files, self.names())

    def project_section(self) -> str:
        """The project memory for the session context ("" when there is none)."""
        return project_section(self._snap.project_files)

    # -- just in time -----------------------------------------------------------------------------------
    def _jit_scan(self, path: Path) -> list[LoadedFile]:
        if not self._trusted():
            return []
        names = self.names()
        found = discovery.subfolder_files(path, self._session.workspace_folders, names, self._markers(), self._home)
        fresh: list[LoadedFile] = []
        for item in found:
            ident = discovery.file_id(item.path)
            with self._lock:
                if ident is None or ident in self._delivered:
                    continue
                self._delivered.add(ident)
            budget = ImportBudget()
            loaded = _load(item, budget, self._session.workspace_folders)
            if loaded is not None:
                fresh.append(loaded)
                with self._lock:
                    self._jit.append(loaded)
                    self._jit_stamps[loaded.path] = _stamp(item.path)
                    for imported in budget.files:
                        self._jit_stamps[imported] = _stamp(Path(imported))
                        self._jit_imported.append(imported)
        if fresh:
            self._protect(self._snap.imported)
        return fresh

    async def just_in_time(self, paths: Sequence[str]) -> str:
        """Context files between each of `paths` (what a tool touched) and its project root not delivered yet,
        as the block appended to the tool's result ("" when there are none). Each file is delivered once per load."""
        if not paths or not self._session.workspace_folders:
            return ""
        try:
            fresh: list[LoadedFile] = []
            for raw in paths:
                fresh += await asyncio.to_thread(self._jit_scan, Path(raw))
        except Exception:  # a failure here must never fail the tool call itself
            log.exception("just-in-time context files for %s", paths)
            return ""
        if fresh and not self._trusted():  # the trust was withdrawn while they were read: they are not delivered
            with self._lock:
                self._jit = [f for f in self._jit if all(f is not g for g in fresh)]
                self._delivered -= {ident for f in fresh if (ident := discovery.file_id(Path(f.path))) is not None}
            log.info(_TRUST_MOVED)
            return ""
        if fresh:
            self._changed()
        return jit_block(fresh)

    # -- changes on disk --------------------------------------------------------------------------------
    def concerns(self, paths: set[str]) -> bool:
        """Whether a change to any of `paths` (the workspace watcher's batch) may be a context file's or that of a
        file the memory imports."""
        names = {os.path.basename(n) for n in self.names()}
        with self._lock:
            graph = {*self._snap.imported, *self._jit_imported}
        return any(os.path.basename(p) in names or p in graph or os.path.realpath(p) in graph for p in paths)

    def _stale(self) -> bool:
        with self._lock:
            stamps = dict(self._snap.stamps)
            jit = dict(self._jit_stamps)
        return any(_stamp(Path(p)) != s for p, s in (*stamps.items(), *jit.items()))

    async def _rescan_while_trust_holds(self) -> None:
        """_rescan off the loop, again whenever the trust changed while it read (that read is discarded)."""
        while not await asyncio.to_thread(self._rescan, self._trusted()):
            log.info(_TRUST_MOVED)

    def _rescan(self, trusted: bool) -> bool:
        """Read everything again and remember which files changed, for the next turn's context turn; False (and
        nothing changed) when the workspace trust is no longer `trusted` once the files are read."""
        old = {f.path: f for f in self.files()}
        old_global = {f.path for f in self._snap.global_files}
        snap = self._scan(trusted)
        with self._lock:
            previous = list(self._jit)
        jit: list[LoadedFile] = []
        jit_imported: list[str] = []
        for f in previous:
            where = Path(f.path)
            root = project_root(where.parent, self._markers()) or where.parent
            budget = ImportBudget()
            found = Found(where, "subdirectory", root)
            loaded = _load(found, budget, self._session.workspace_folders) if os.path.exists(where) else None
            if loaded is not None:
                jit.append(loaded)
                jit_imported += budget.files
        if self._trusted() != trusted:
            return False
        with self._lock:
            for f in previous:
                self._jit_stamps[f.path] = _stamp(Path(f.path))
            for imported in jit_imported:
                self._jit_stamps[imported] = _stamp(Path(imported))
            self._jit_imported = jit_imported
            self._jit = jit
            self._snap = snap
            new = {f.path: f for f in (*snap.global_files, *snap.project_files, *jit)}
            for path in sorted(set(old) | set(new)):
                before, after = old.get(path), new.get(path)
                if before is not None and after is not None and before.text == after.text:
                    continue
                if path in old_global or any(f.path == path for f in snap.global_files):
                    self._pending_global.add(path)
                else:
                    self._pending[path] = after
            self._delivered |= {ident for f in new.values() if (ident := discovery.file_id(Path(f.path))) is not None}
        return True

    async def check(self, *, force: bool = False) -> bool:
        """Look for context files changed, created or deleted on disk since the last look (`force`: read them all
        again, e.g. after the trust or the settings changed); True when any changed (the editor is told at once,
        the model at its next turn)."""
        if not self.loaded:
            return False
        async with self._checking:
            if not force and not await asyncio.to_thread(self._stale):
                return False
            before = self.info()
            await self._rescan_while_trust_holds()
            after = self.info()
        if force and after == before:
            return False
        self._changed()
        return True

    def take_changes(self) -> str | None:
        """The context turn for the files that changed since the model last saw them (None when none did)."""
        with self._lock:
            pending, in_system = dict(self._pending), sorted(self._pending_global)
            self._pending.clear()
            self._pending_global.clear()
        if not pending and not in_system:
            return None
        changed = [f for f in pending.values() if f is not None and f.text.strip()]
        removed = [p for p, f in pending.items() if f is None or not f.text.strip()]
        return changed_turn_text(changed, removed, in_system)

    def forget_changes(self) -> None:
        """A fresh session context carries the current files: pending change turns are moot."""
        with self._lock:
            self._pending.clear()
            self._pending_global.clear()

    # -- addMemory --------------------------------------------------------------------------------------
    def add_target(self, scope: AddMemoryScope) -> Path:
        """The file addMemory writes: ~/.gemini/GEMINI.md, or GEMINI.md at the first workspace folder's project root."""
        names = self.names()
        name = names[0] if names and ADD_FILE_NAME not in names else ADD_FILE_NAME
        if scope == "global":
            return discovery.global_dir(self._home) / name
        folders = self._session.workspace_folders
        if not folders:
            raise errors.SidecarError(errors.INVALID_PARAMS, "No workspace folder is open: project memory needs one.")
        if not self._trusted():
            raise errors.SidecarError(errors.INVALID_PARAMS, f"Project memory is not written: {UNTRUSTED_REASON}.")
        folder = Path(folders[0]).resolve()
        return (project_root(folder, self._markers()) or folder) / name

    async def add(self, text: str, scope: AddMemoryScope) -> MemoryInfo:
        """sidecar/addMemory: `- <text>` under `## Gemini Added Memories` in the scope's file, then a refresh."""
        fact = sanitize_fact(text)
        if not fact:
            raise errors.SidecarError(errors.INVALID_PARAMS, "Nothing to remember: the text is empty.")
        target = self.add_target(scope)
        await asyncio.to_thread(_append_to, target, fact)
        return await self.load()


def _append_to(target: Path, fact: str) -> None:
    """Append the fact to `target` through the safe writer (no FIFO, no symlink swapped in); folders created."""
    from sidecar.tools.paths import ToolError
    from sidecar.tools.safe_io import read_regular, write_regular

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        before = read_regular(target, str(target), 4 * 1024 * 1024, "add to")
        document = before.decode("utf-8", "replace") if before is not None else ""
        write_regular(target, append_fact(document, fact).encode("utf-8"), str(target))
    except ToolError as exc:
        raise errors.SidecarError(errors.INVALID_PARAMS, f"Memory was not saved: {exc}") from None
    except OSError as exc:
        raise errors.SidecarError(
            errors.INVALID_PARAMS, f"Memory was not saved to {target}: {exc.strerror or exc}"
        ) from None
