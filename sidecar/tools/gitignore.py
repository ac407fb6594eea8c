"""A .gitignore matcher over a directory tree (nested files, .git/info/exclude); patterns: core.gitignore_rules."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from sidecar.core.gitignore_rules import IgnoreRules, expand_braces, glob_regex, parse_gitignore
from sidecar.tools.paths import ToolError
from sidecar.tools.safe_io import open_regular

__all__ = ["IgnoreRules", "Ignorer", "expand_braces", "glob_regex", "parse_gitignore"]


MAX_IGNORE_FILE_BYTES = 1024 * 1024


def _read_rules(path: Path, base: Path) -> IgnoreRules | None:
    """The rules of one ignore file: a FIFO, device or unreadable file has none; at most 1 MB of it is read."""
    try:
        fd = open_regular(path, str(path), follow=True)
    except (OSError, ToolError):
        return None
    with os.fdopen(fd, "rb") as handle:
        text = handle.read(MAX_IGNORE_FILE_BYTES).decode("utf-8", errors="replace")
    rules = parse_gitignore(text)
    return IgnoreRules(str(base), tuple(rules)) if rules else None


def _git_root(directory: Path) -> Path | None:
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class Ignorer:
    """The ignore rules in force in one directory: its .gitignore, its ancestors' up to the repository root,
    and the repository's .git/info/exclude. Deeper files win; within a file the last matching rule wins."""

    def __init__(self, stack: tuple[IgnoreRules, ...] = ()) -> None:
        self._stack = stack  # shallowest first

    @classmethod
    def for_directory(cls, directory: Path) -> Ignorer:
        """Rules for `directory`, with those of the enclosing git repository's directories above it."""
        git_root = _git_root(directory)
        stack: list[IgnoreRules] = []
        if git_root is not None:
            exclude = _read_rules(git_root / ".git" / "info" / "exclude", git_root)
            if exclude is not None:
                stack.append(exclude)
            chain = [directory, *directory.parents]
            dirs = reversed(chain[: chain.index(git_root) + 1])
        else:
            dirs = iter([directory])
        for d in dirs:
            rules = _read_rules(d / ".gitignore", d)
            if rules is not None:
                stack.append(rules)
        return cls(tuple(stack))

    def child(self, directory: Path) -> Ignorer:
        """The rules for a subdirectory: these plus its own .gitignore, if any."""
        rules = _read_rules(directory / ".gitignore", directory)
        return self if rules is None else Ignorer((*self._stack, rules))

    def ignored(self, real_path: str, is_dir: bool) -> bool:
        for rules in reversed(self._stack):
            verdict = rules.verdict(real_path, is_dir)
            if verdict is not None:
                return verdict
        return False

    def __iter__(self) -> Iterator[IgnoreRules]:
        return iter(self._stack)
