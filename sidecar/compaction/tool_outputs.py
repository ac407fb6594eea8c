"""Saving truncated tool outputs to `<dir>/tool-outputs/<tool>_<n>.txt`, named as the reference names them."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Protocol

from sidecar.private_files import create_private, make_private_dirs

__all__ = [
    "TOOL_OUTPUTS_DIR",
    "SessionToolOutputs",
    "ToolOutputSaver",
    "sanitize_filename_part",
    "tool_output_file_name",
]

TOOL_OUTPUTS_DIR = "tool-outputs"

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def sanitize_filename_part(part: str) -> str:
    """Every UTF-16 code unit outside [a-zA-Z0-9_-] becomes "_" (so an emoji becomes "__")."""
    return _UNSAFE.sub("_", _ASTRAL.sub("__", part))


def tool_output_file_name(tool_name: str, output_id: int | str) -> str:
    """`<tool>_<id>.txt`, sanitized, lower-cased; `<id>.txt` if the id starts with the tool."""
    safe_tool = sanitize_filename_part(tool_name).lower()
    safe_id = sanitize_filename_part(str(output_id)).lower()
    return f"{safe_id}.txt" if safe_id.startswith(safe_tool) else f"{safe_tool}_{safe_id}.txt"


def _utf8_like_node(text: str) -> bytes:
    """UTF-8 as Node writes a string: a surrogate pair joins, a lone surrogate becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        utf16 = text.encode("utf-16-le", "surrogatepass")
        return utf16.decode("utf-16-le", "replace").encode("utf-8")


_NUMBERED = re.compile(r"_(\d+)\.txt\Z")


def _highest_number(directory: Path) -> int:
    """The highest `<tool>_<n>.txt` number in `directory` (0 when it holds none or does not exist)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    return max((int(m.group(1)) for m in map(_NUMBERED.search, names) if m is not None), default=0)


class ToolOutputSaver:
    """The `save` callable for truncate_history_to_budget: numbers outputs 1, 2, ... and writes them.

    Like the reference's per-config counter, a number is used up even when writing fails.
    """

    def __init__(self, project_temp_dir: str | Path, first_id: int = 1) -> None:
        self.directory = Path(project_temp_dir) / TOOL_OUTPUTS_DIR
        self._ids = itertools.count(first_id)

    def __call__(self, content: str, tool_name: str) -> Path:
        path = self.directory / tool_output_file_name(tool_name, next(self._ids))
        make_private_dirs(self.directory)
        fd = create_private(path, os.O_WRONLY | os.O_TRUNC)  # it holds tool output: as private as the session
        with os.fdopen(fd, "wb") as handle:
            handle.write(_utf8_like_node(content))
        return path


class SessionFolder(Protocol):
    """Where the current session keeps its data (sidecar.recording.recorder.Recorder)."""

    def session_dir(self) -> Path: ...


class SessionToolOutputs:
    """A ToolOutputSaver for the current session's folder; numbering starts again when the session changes."""

    def __init__(self, folder: SessionFolder) -> None:
        self._folder = folder
        self._saver: ToolOutputSaver | None = None

    def __call__(self, content: str, tool_name: str) -> Path:
        directory = self._folder.session_dir()
        if self._saver is None or self._saver.directory.parent != directory:
            # a resumed session goes on after its highest number: a masked preview recorded before the restart
            # names its file, which must not be overwritten by a later output
            self._saver = ToolOutputSaver(directory, _highest_number(directory / TOOL_OUTPUTS_DIR) + 1)
        return self._saver(content, tool_name)

    def root(self) -> Path | None:
        """The project's folder of sessions (`<root>/<session>/tool-outputs/…`), where read_file may read saved
        outputs; None before a session exists."""
        try:
            return self._folder.session_dir().parent
        except Exception:
            return None
