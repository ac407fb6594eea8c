"""write_file and replace: the new text, an LSP WorkspaceEdit of whole-line ranges, a unified diff, applying it."""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sidecar.core.words import counted
from sidecar.tools.paths import ToolError
from sidecar.tools.safe_io import PLAN_SECONDS, off_loop, read_regular, write_regular

__all__ = [
    "MAX_EDIT_BYTES",
    "ApplyEdit",
    "EditPlan",
    "EditorBuffers",
    "apply_edit_plan",
    "line_edits",
    "plan_replace",
    "plan_write",
    "split_lines",
    "unified_diff",
]

MAX_EDIT_BYTES = 8 * 1024 * 1024
BOM = "\ufeff"
ApplyEdit = Callable[[dict[str, Any]], Awaitable[tuple[bool, str | None]]]
EditorText = Callable[[Path], str | None]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_DIFF_BUDGET = 250_000  # line pairs compared to split one changed region into several edits


def split_lines(text: str) -> list[str]:
    """Lines as LSP counts them (terminated by \\r\\n, \\r or \\n), each keeping its terminator."""
    return _LINE.findall(text)


def _disk_bytes(path: Path, shown: str | None = None) -> bytes | None:
    """The file's bytes (None: no such file). Regular files only, opened without blocking; a file fstat says is
    over MAX_EDIT_BYTES is refused before it is read."""
    return read_regular(path, shown or str(path), MAX_EDIT_BYTES, "edit")


@dataclass
class _Unsaved:
    stale: frozenset[bytes | None]  # disk contents meaning "not saved yet"
    after: str


class EditorBuffers:
    """What the editor's buffers hold after our edits, so later reads and edits start from the edited text.

    workspace/applyEdit changes the editor's buffer without saving it. An entry holds the edited text for
    as long as the disk still has what it had before the edit (for a created file: nothing or an empty
    file); once the disk holds anything else (the user saved, or something else wrote it) the disk wins.
    `editor_text`, if given, reports an open buffer's current text and takes precedence over the entries.
    """

    def __init__(self, editor_text: EditorText | None = None) -> None:
        self._editor_text = editor_text
        self._entries: dict[str, _Unsaved] = {}

    def text(self, path: Path) -> str | None:
        """The buffer's text when it may differ from the disk; None means "read the disk"."""
        if self._editor_text is not None:
            text = self._editor_text(path)
            if text is not None:
                return text
        entry = self._entries.get(str(path))
        if entry is None:
            return None
        try:
            if _disk_bytes(path) in entry.stale:
                return entry.after
        except ToolError:
            pass
        del self._entries[str(path)]
        return None

    def record(self, path: Path, disk_before: bytes | None, after: str, created: bool) -> None:
        stale = {disk_before, None, b""} if created else {disk_before}
        self._entries[str(path)] = _Unsaved(frozenset(stale), after)

    def forget(self, path: Path) -> None:
        self._entries.pop(str(path), None)

    def unsaved(self) -> dict[str, str]:
        """Edited texts not yet on disk, by real path."""
        return {key: text for key in list(self._entries) if (text := self.text(Path(key))) is not None}


def current_text(path: Path, shown: str, buffers: EditorBuffers) -> str | None:
    """The text an edit starts from (the editor's, else the disk's); None if the file does not exist."""
    text = buffers.text(path)
    if text is not None:
        return text
    data = _disk_bytes(path, shown)
    if data is None:
        return None
    if b"\0" in data[:8192]:
        raise ToolError(f"{shown} looks like a binary file; only text files can be edited.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not valid UTF-8; it cannot be edited safely.") from None


# ---------------------------------------------------------------- WorkspaceEdit and diff


def _position(lines: list[str], line: int) -> dict[str, int]:
    """The start of `line`; past the last line, the end of the document."""
    if line < len(lines) or not lines or lines[-1].endswith(("\n", "\r")):
        return {"line": line, "character": 0}
    last = lines[-1]
    if last.isascii():  # every position encoding counts ASCII alike
        return {"line": len(lines) - 1, "character": len(last)}
    return {"line": len(lines), "character": 0}  # one line past the end: clients clamp it to the end


def line_edits(before: str, after: str) -> list[dict[str, Any]]:
    """LSP TextEdits turning `before` into `after`, replacing whole lines only.

    Ranges start and end at column 0, so they mean the same in every position encoding (utf-8/16/32);
    the one exception is the end of a last line without a terminator, exact when that line is ASCII.
    """
    a, b = split_lines(before), split_lines(after)
    prefix = 0
    while prefix < min(len(a), len(b)) and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(a), len(b)) - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    old, new = a[prefix : len(a) - suffix], b[prefix : len(b) - suffix]
    if not old and not new:
        return []
    if len(old) * len(new) <= _DIFF_BUDGET:
        ops = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
    else:
        ops = [("replace", 0, len(old), 0, len(new))]
    strip_bom = before.startswith(BOM)
    edits = []
    for _tag, i1, i2, j1, j2 in ops:
        text = "".join(new[j1:j2])
        if strip_bom and prefix + i1 == 0:  # editors keep the BOM outside the buffer's text
            text = text.removeprefix(BOM)
        start, end = _position(a, prefix + i1), _position(a, prefix + i2)
        edits.append({"range": {"start": start, "end": end}, "newText": text})
    return edits


def workspace_edit(path: Path, before: str | None, after: str) -> dict[str, Any]:
    """An LSP WorkspaceEdit (documentChanges): a CreateFile plus an insert for a new file, else line edits."""
    uri = path.as_uri()
    document = {"uri": uri, "version": None}
    if before is None:
        changes: list[dict[str, Any]] = [
            {"kind": "create", "uri": uri, "options": {"overwrite": False, "ignoreIfExists": True}}
        ]
        if after:
            zero = {"line": 0, "character": 0}
            changes.append(
                {"textDocument": document, "edits": [{"range": {"start": zero, "end": zero}, "newText": after}]}
            )
        return {"documentChanges": changes}
    return {"documentChanges": [{"textDocument": document, "edits": line_edits(before, after)}]}


def unified_diff(before: str | None, after: str, shown: str) -> tuple[str, int, int]:
    """(unified diff for the confirmation UI, lines added, lines removed); line terminators shown as newlines."""
    out: list[str] = []
    added = removed = 0
    diff = difflib.unified_diff(
        split_lines(before or ""), split_lines(after), "/dev/null" if before is None else f"a/{shown}", f"b/{shown}"
    )
    for index, line in enumerate(diff):
        if index < 2 or line.startswith("@@"):
            out.append(line)
            continue
        added += line[0] == "+"
        removed += line[0] == "-"
        body = line.rstrip("\r\n")
        out.append(body + "\n" if body != line else f"{line}\n\\ No newline at end of file\n")
    return "".join(out), added, removed


# ---------------------------------------------------------------- planning and applying


@dataclass(frozen=True)
class EditPlan:
    """A planned write: the text before (None: new file) and after, the WorkspaceEdit, and the diff."""

    path: Path
    shown: str
    before: str | None
    after: str
    edit: dict[str, Any] = field(repr=False)
    diff: str = field(repr=False)
    added: int
    removed: int
    description: str


def _plan(path: Path, shown: str, before: str | None, after: str, what: str) -> EditPlan:
    diff, added, removed = unified_diff(before, after, shown)
    counts = f"+{added} −{removed}"
    description = (
        f"Create {shown} ({counted(len(split_lines(after)), 'line')})" if before is None else f"{what} ({counts})"
    )
    return EditPlan(path, shown, before, after, workspace_edit(path, before, after), diff, added, removed, description)


def plan_write(path: Path, shown: str, content: str, buffers: EditorBuffers) -> EditPlan:
    """write_file: the file's whole new content; an existing file keeps its CRLF line endings and BOM."""
    before = current_text(path, shown, buffers)
    after = content
    if before is not None:
        if "\r\n" in before and before.count("\r\n") == before.count("\n") and "\r" not in after:
            after = after.replace("\n", "\r\n")
        if before.startswith(BOM) and not after.startswith(BOM):
            after = BOM + after
        if after == before:
            raise ToolError(f"{shown} already has exactly this content; nothing to write.")
    return _plan(path, shown, before, after, f"Overwrite {shown}")


def plan_replace(path: Path, shown: str, old: str, new: str, expected: int, buffers: EditorBuffers) -> EditPlan:
    """replace: every occurrence of `old`, which must occur exactly `expected` times."""
    if not old:
        raise ToolError("old_string is empty. To create a file or replace all of it, use write_file.")
    if old == new:
        raise ToolError("old_string and new_string are identical; the edit would change nothing.")
    before = current_text(path, shown, buffers)
    if before is None:
        raise ToolError(f"File not found: {shown}. replace edits existing files; use write_file to create one.")
    count = before.count(old)
    if count == 0 and "\r\n" in before and "\n" in old and "\r" not in old:  # the model wrote \n, the file has \r\n
        crlf = old.replace("\n", "\r\n")
        if crlf_count := before.count(crlf):
            old, new, count = crlf, new.replace("\r\n", "\n").replace("\n", "\r\n"), crlf_count
    if count == 0:
        raise ToolError(
            f"old_string was not found in {shown}. It must match the file exactly, including whitespace, "
            "indentation and line breaks; read the file again and copy the text from it."
        )
    if count != expected:
        hint = (
            f"Include more surrounding lines so it matches exactly one place, or set expected_replacements to "
            f"{count} to replace every occurrence."
            if expected == 1
            else f"Check the text, or set expected_replacements to {count}."
        )
        raise ToolError(f"old_string occurs {count} times in {shown}, but expected_replacements is {expected}. {hint}")
    noun = "occurrence" if count == 1 else "occurrences"
    return _plan(path, shown, before, before.replace(old, new), f"Edit {shown}: replace {count} {noun}")


def write_to_disk(path: Path, text: str, shown: str) -> None:
    try:
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror or exc}") from None
    write_regular(path, data, shown)  # in place: keeps the file's permissions, owner and hard links


def _check_unchanged(plan: EditPlan, buffers: EditorBuffers) -> None:
    if current_text(plan.path, plan.shown, buffers) != plan.before:
        raise ToolError(
            f"{plan.shown} changed after this edit was prepared, so it was not applied. Read the file again and "
            "redo the edit."
        )


def _write_plan(plan: EditPlan, buffers: EditorBuffers) -> None:
    _check_unchanged(plan, buffers)
    write_to_disk(plan.path, plan.after, plan.shown)
    buffers.forget(plan.path)


def _prepare_editor_edit(plan: EditPlan, buffers: EditorBuffers) -> bytes | None:
    _check_unchanged(plan, buffers)
    disk_before = _disk_bytes(plan.path, plan.shown)
    if plan.before is None:
        try:
            plan.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ToolError(f"Cannot create the folder for {plan.shown}: {exc.strerror or exc}") from None
    return disk_before


async def apply_edit_plan(plan: EditPlan, buffers: EditorBuffers, apply_edit: ApplyEdit | None) -> str:
    """Carry out a planned edit through the editor, or on disk when `apply_edit` is None; returns a summary.

    Refuses (ToolError) when the file no longer holds the text the edit was planned from.
    """
    counts = f"+{plan.added} −{plan.removed}"
    done = f"Created {plan.shown} ({counts})" if plan.before is None else f"Edited {plan.shown} ({counts})"
    if apply_edit is None:
        await off_loop(lambda: _write_plan(plan, buffers), seconds=PLAN_SECONDS, what=f"Writing {plan.shown}")
        return done
    disk_before = await off_loop(
        lambda: _prepare_editor_edit(plan, buffers), seconds=PLAN_SECONDS, what=f"Reading {plan.shown}"
    )

    def record(request: asyncio.Future[tuple[bool, str | None]]) -> None:
        if not request.cancelled() and request.exception() is None and request.result()[0]:
            buffers.record(plan.path, disk_before, plan.after, created=plan.before is None)

    request = asyncio.ensure_future(apply_edit(plan.edit))
    request.add_done_callback(record)  # also when the turn is cancelled while the editor answers
    try:
        ok, reason = await asyncio.shield(request)
    except Exception as exc:
        raise ToolError(f"The editor could not apply the edit to {plan.shown}: {exc}") from None
    if not ok:
        why = reason or "no reason given"
        raise ToolError(
            f"The editor did not apply the edit to {plan.shown}: {why}. Read the file again before editing it: "
            "the editor's text may differ from what you read."
        )
    if _disk_bytes(plan.path) == plan.after.encode("utf-8"):  # the editor saved it (ACP's fs/write_text_file does)
        return done
    return done + " in the editor (unsaved)"
