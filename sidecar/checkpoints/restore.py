"""Putting files back: each rewind target checked against what the file holds now (the editor's buffer, else the
disk), then written through the editor (open files) or to disk; conflicts and what cannot be put back are named.

A restore never leaves the workspace folders, never follows a symbolic link out of them, and never writes a protected
path (sidecar/tools/protected.py) or a file changed since the agent left it unless the user forces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from sidecar.checkpoints.store import BlobStore, digest_of
from sidecar.core.checkpoints import Target
from sidecar.protocol.sessions import FileProblem
from sidecar.tools import protected
from sidecar.tools.edits import ApplyEdit, EditorBuffers, unified_diff, workspace_edit
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.safe_io import open_regular, read_regular, write_regular

#: Current contents up to this size are read whole (for diffs and the editor); larger ones are only hashed.
READ_LIMIT = 16 * 1024 * 1024


@dataclass(frozen=True)
class Current:
    """What a file holds now: its digest (None: absent), its text when it is small UTF-8, from a buffer or not."""

    digest: str | None
    text: str | None = None
    in_buffer: bool = False


@dataclass
class Step:
    """One file to put back: `data` (None: remove it), through the editor when `via_editor`."""

    path: str
    data: bytes | None
    digest: str | None
    current: Current
    via_editor: bool = False


@dataclass
class RestorePlan:
    """What a rewind would do: the files to put back, and those it would leave (conflicts) or cannot (skipped)."""

    steps: list[Step] = field(default_factory=list)
    conflicts: list[FileProblem] = field(default_factory=list)
    skipped: list[FileProblem] = field(default_factory=list)


@dataclass
class Restored:
    """What a restore did."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[FileProblem] = field(default_factory=list)
    #: path -> digest of what it holds now (None: removed), for the filesRestored record.
    now: dict[str, str | None] = field(default_factory=dict)
    in_editor: int = 0


def current_of(path: Path, buffers: EditorBuffers) -> Current:
    """The file's content now as the agent would see it: an open buffer's text first, else the disk's bytes."""
    text = buffers.text(path)
    if text is not None:
        return Current(digest_of(text.encode("utf-8")), text, True)
    try:
        fd = open_regular(path, str(path))
    except FileNotFoundError:
        return Current(None)
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(handle.fileno()).st_size <= READ_LIMIT:
            data = handle.read()
            try:
                decoded: str | None = data.decode("utf-8")
            except UnicodeDecodeError:
                decoded = None
            return Current(digest_of(data), decoded)
        hasher = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            hasher.update(chunk)
        return Current(hasher.hexdigest())


def _conflict(target: Target, now: Current, blobs: BlobStore) -> str:
    """Why a file is not put back without force: how it differs from what the agent left (a short summary)."""
    if now.digest is None:
        return "deleted since the agent's change"
    if target.left is None:
        return "created again since the agent deleted it"
    left = blobs.get(target.left)
    if left is not None and now.text is not None:
        try:
            _diff, added, removed = unified_diff(left.decode("utf-8"), now.text, target.path)
            return f"changed since the agent's edit (+{added} −{removed} lines)"
        except UnicodeDecodeError:
            pass
    return "changed since the agent's edit"


def plan_restore(
    targets: list[Target],
    blobs: BlobStore,
    workspace: Workspace,
    buffers: EditorBuffers,
    *,
    force: bool,
    open_files: set[str],
    editor: bool,
) -> RestorePlan:
    """What a rewind would do to each target now (reads files; run it off the event loop)."""
    plan = RestorePlan()
    roots = workspace.roots()
    for target in targets:
        path = Path(target.path)
        try:
            if workspace.resolve(target.path) != path:
                raise ToolError("it now resolves to another file through a symbolic link")
            now = current_of(path, buffers)
        except ToolError as exc:
            plan.skipped.append(FileProblem(path=target.path, reason=_words(exc)))
            continue
        wanted = target.before if target.existed else None
        if target.existed and target.skipped is not None:
            plan.skipped.append(FileProblem(path=target.path, reason=f"its content was not saved: {target.skipped}"))
            continue
        if now.digest == wanted:
            continue  # already as it was
        data = None
        if wanted is not None:
            data = blobs.get(wanted)
            if data is None:
                reason = "its saved content is missing from the checkpoint store (pruned, or damaged)"
                plan.skipped.append(FileProblem(path=target.path, reason=reason))
                continue
        if not force:
            if now.digest != target.left:
                plan.conflicts.append(FileProblem(path=target.path, reason=_conflict(target, now, blobs)))
                continue
            why = protected.why_protected([path], roots)
            if why is not None:
                plan.conflicts.append(
                    FileProblem(path=target.path, reason=f"a protected path ({why}); restored only with force")
                )
                continue
        shown = target.path in open_files or now.in_buffer  # an edit applied in the editor: its buffer holds it
        via_editor = editor and shown and (data is None or (now.text is not None and _is_text(data)))
        plan.steps.append(Step(target.path, data, wanted, now, via_editor))
    return plan


def _is_text(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _words(exc: Exception) -> str:
    text = str(exc)
    return text[:1].lower() + text[1:] if text else type(exc).__name__


def write_step(step: Step, buffers: EditorBuffers) -> str | None:
    """Put one file back on disk; the problem in words, or None. Refuses when it changed since it was planned."""
    path = Path(step.path)
    try:
        if current_of(path, buffers).digest != step.current.digest:
            return "it changed while the rewind ran; it was left as it is"
        if step.data is None:
            path.unlink(missing_ok=True)  # an unsaved file the agent created in the editor may not be on disk
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_regular(path, step.data, step.path)
        buffers.forget(path)
    except ToolError as exc:
        return _words(exc)
    except OSError as exc:
        return f"it could not be written: {exc.strerror or exc}"
    return None


async def editor_step(step: Step, buffers: EditorBuffers, apply_edit: ApplyEdit) -> bool:
    """Put an open file back through workspace/applyEdit (its buffer, undo history and dirty state stay the
    editor's), or delete a file the agent created there; False when the editor did not apply it (the caller writes
    the disk instead)."""
    path = Path(step.path)
    if step.data is None:
        delete = {"kind": "delete", "uri": path.as_uri(), "options": {"ignoreIfNotExists": True}}
        try:
            ok, _why = await apply_edit({"documentChanges": [delete]})
        except Exception:
            return False
        if ok:
            buffers.forget(path)
        return ok and not path.exists()  # else the disk path removes it (and checks it is still the agent's)
    assert step.current.text is not None
    text = step.data.decode("utf-8")
    try:
        disk_before = read_regular(path, step.path, READ_LIMIT, "restore")
    except ToolError:
        return False
    try:
        ok, _why = await apply_edit(workspace_edit(path, step.current.text, text))
    except Exception:
        return False
    if ok:
        buffers.record(path, disk_before, text, created=False)
        with contextlib.suppress(ToolError):
            if read_regular(path, step.path, READ_LIMIT, "restore") == step.data:  # the editor saved it
                buffers.forget(path)
    return ok
