"""Workspace confinement: every path a tool touches is resolved (realpath) and must lie inside a workspace folder."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["ToolError", "Workspace"]


class ToolError(Exception):
    """A failure the model should read: the message says what went wrong and, where possible, what to do."""


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Workspace:
    """The workspace folders, and the rules for turning a model-supplied path into a real path inside them.

    Relative paths are taken from the first folder; absolute paths may name any folder. A path is refused
    when, written out (`..` applied), it lies outside every folder, or when its real path (symlinks
    followed, as far as the path exists) does. The folders are read on every call, so a callable may
    supply them as the editor changes them.
    """

    def __init__(
        self,
        folders: Sequence[str] | Callable[[], Sequence[str]],
        saved_outputs: Callable[[], Path | None] | None = None,
    ) -> None:
        self._folders = folders
        #: The project's folder of saved tool outputs (`<folder>/<session>/tool-outputs/<file>`): read_file, and
        #: only read_file, may read there, so the model can follow "For full output see: <file>".
        self._saved_outputs = saved_outputs

    def resolve_readable(self, raw: str) -> Path:
        """`resolve`, and also a saved tool output of this project (read-only access: read_file only)."""
        root = self._saved_outputs() if self._saved_outputs is not None else None
        if root is not None and os.path.isabs(raw) and "\0" not in raw:
            real_root = os.path.realpath(root)
            real = os.path.realpath(raw)
            relative = os.path.relpath(real, real_root).split(os.sep)
            if len(relative) == 3 and relative[1] == "tool-outputs" and ".." not in relative and os.path.isfile(real):
                return Path(real)
        return self.resolve(raw)

    def _given(self) -> list[str]:
        folders = self._folders() if callable(self._folders) else self._folders
        return [os.path.abspath(f) for f in folders if f]

    def roots(self) -> list[Path]:
        """The folders' real paths, in order, without duplicates."""
        seen: dict[str, None] = {}
        for folder in self._given():
            seen.setdefault(os.path.realpath(folder), None)
        return [Path(p) for p in seen]

    def _require_roots(self) -> tuple[list[str], list[str]]:
        given = self._given()
        if not given:
            raise ToolError("No workspace folder is open, so no file can be accessed.")
        return given, [os.path.realpath(f) for f in given]

    def resolve(self, raw: str, *, what: str = "path") -> Path:
        """The real path for `raw`, or ToolError saying why it is refused."""
        given, real_roots = self._require_roots()
        if not raw.strip():
            raise ToolError(f"The {what} is empty.")
        if "\0" in raw:
            raise ToolError(f"The {what} contains a NUL character.")
        if raw.startswith("~"):
            raise ToolError(f"The {what} {raw!r} starts with '~'; home-relative paths are not supported. {self.hint()}")
        candidate = os.path.normpath(os.path.join(given[0], raw))  # join keeps an absolute raw as is
        if not any(_inside(candidate, root) for root in (*given, *real_roots)):
            raise ToolError(f"The {what} {raw!r} is outside the workspace. {self.hint()}")
        real = os.path.realpath(candidate)
        if not any(_inside(real, root) for root in real_roots):
            raise ToolError(
                f"The {what} {raw!r} resolves through a symbolic link to {real}, which is outside the workspace. "
                f"{self.hint()}"
            )
        return Path(real)

    def written(self, raw: str) -> str:
        """`raw` as an absolute path with `..` applied but symlinks not followed (call after `resolve`)."""
        given = self._given()
        return os.path.normpath(os.path.join(given[0], raw)) if given else os.path.normpath(raw)

    def contains(self, real_path: str | Path) -> bool:
        """Whether an already real path lies inside a workspace folder."""
        real = os.fspath(real_path)
        return any(_inside(real, str(root)) for root in self.roots())

    def display(self, real_path: str | Path) -> str:
        """How paths are shown to the model: relative to the first folder when inside it, else absolute."""
        return self.displayer()(real_path)

    def displayer(self) -> Callable[[str | Path], str]:
        """`display` with the folders read once, for showing many paths."""
        roots = self.roots()
        first = str(roots[0]) if roots else None
        prefix = (first or "").rstrip(os.sep) + os.sep

        def show(real_path: str | Path) -> str:
            text = os.fspath(real_path)
            if first is None or text == first:
                return "." if text == first else text
            return text[len(prefix) :].replace(os.sep, "/") if text.startswith(prefix) else text

        return show

    def hint(self) -> str:
        roots = self.roots()
        if not roots:
            return "No workspace folder is open."
        if len(roots) == 1:
            return f"Use a path inside the workspace folder {roots[0]} (relative paths start there)."
        listed = ", ".join(str(r) for r in roots)
        return f"Use a path inside a workspace folder ({listed}); relative paths start at {roots[0]}."
