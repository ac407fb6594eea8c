"""The folder tree of the session context: breadth first, capped, .gitignore respected, in the reference's format."""

from __future__ import annotations

import os
import stat
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from sidecar.core.gitignore_rules import IgnoreRules, parse_gitignore
from sidecar.core.visible_text import visible_name

__all__ = ["ALWAYS_COLLAPSED", "MAX_ENTRIES", "folder_tree"]

MAX_ENTRIES = 200
#: Folders named but never entered (shown as `name/...`), wherever they are.
ALWAYS_COLLAPSED = frozenset({"node_modules", ".git", "dist", "__pycache__"})
MORE = "..."
MAX_IGNORE_FILE_BYTES = 256 * 1024


@dataclass
class _Folder:
    name: str
    path: str  # the folder's path below the real root (no symbolic link on the way)
    rules: tuple[IgnoreRules, ...] = ()
    files: list[str] = field(default_factory=list)
    folders: list[_Folder] = field(default_factory=list)
    collapsed: bool = False  # named, not entered: ignored, a link, or the cap was reached before its turn
    more_files: bool = False
    more_folders: bool = False


def folder_tree(root: Path, *, max_entries: int = MAX_ENTRIES) -> str:
    """The folder tree of `root` as the reference shows it: a header line, then `<root>/` and the tree.

    Breadth first; in each folder its files (sorted) come before its subfolders (sorted). At most `max_entries`
    files and folders are listed (a collapsed folder counts one); the walk stops reading folders once the cap is
    reached. Collapsed (`name/...`): node_modules, .git, dist, __pycache__, folders a .gitignore ignores, symbolic
    links to folders (never followed), and folders not reached before the cap. Files a .gitignore ignores are left
    out. Unreadable folders are listed without content. Names are data (a cloned repository chooses them): control
    characters are shown visibly and `<`/`>` escaped (sidecar.core.visible_text.visible_name), so that no name can
    forge a line or a tag of the session context, or send a terminal escape.
    """
    real = os.path.realpath(root)
    try:
        listing = _read_folder(real)
    except OSError:
        return f'Error: Could not read directory "{root}". Check path and permissions.'
    top = _Folder(os.path.basename(real), real, _rules_above(real))
    count = _fill(top, listing, max_entries, 0, queue := deque[_Folder]())
    seen = {_identity(real)}
    while queue:
        folder = queue.popleft()
        identity = _identity(folder.path)
        if count >= max_entries or identity is None or identity in seen:
            folder.collapsed = identity is not None
            continue
        seen.add(identity)
        try:
            listing = _read_folder(folder.path)
        except OSError:
            continue
        folder.rules = _with_own_rules(folder.rules, folder.path)
        count = _fill(folder, listing, max_entries, count, queue)
    lines: list[str] = []
    _format(top, "", True, True, lines)
    header = f"Showing up to {max_entries} items (files + folders)."
    if _truncated(top):
        header += (
            f" Folders or files indicated with {MORE} contain more items not shown, were ignored, or the display "
            f"limit ({max_entries} items) was reached."
        )
    return f"{header}\n\n{visible_name(real.rstrip(os.sep))}{os.sep}\n" + "\n".join(lines)


@dataclass
class _Listing:
    """A folder's entries: files and folders sorted as the reference sorts them (case-insensitively)."""

    files: list[str]
    folders: list[str]
    links: set[str]  # the folders that are symbolic links


def _read_folder(path: str) -> _Listing:
    files: list[str] = []
    folders: list[str] = []
    links: set[str] = set()
    with os.scandir(path) as listing:
        for entry in listing:
            try:
                link = entry.is_symlink()
                folder = entry.is_dir(follow_symlinks=link)
            except OSError:
                link, folder = False, False
            (folders if folder else files).append(entry.name)
            if link and folder:
                links.add(entry.name)
    files.sort(key=str.casefold)  # a key of plain strings: 100,000 names sort in tens of milliseconds
    folders.sort(key=str.casefold)
    return _Listing(files, folders, links)


def _fill(folder: _Folder, listing: _Listing, cap: int, count: int, queue: deque[_Folder]) -> int:
    """List a folder's files, then its subfolders, up to the cap; queue the subfolders to enter. The new count."""
    prefix = folder.path.rstrip(os.sep) + os.sep  # "/" stays "/"
    for name in listing.files:
        if folder.rules and _ignored(folder.rules, prefix + name, False):
            continue
        if count >= cap:
            folder.more_files = True
            break
        folder.files.append(name)
        count += 1
    for name in listing.folders:
        if count >= cap:
            folder.more_folders = True
            break
        path = prefix + name
        child = _Folder(name, path, folder.rules)
        child.collapsed = name in listing.links or name in ALWAYS_COLLAPSED or _ignored(folder.rules, path, True)
        folder.folders.append(child)
        count += 1
        if not child.collapsed:
            queue.append(child)
    return count


def _format(folder: _Folder, indent: str, last: bool, is_root: bool, lines: list[str]) -> None:
    """The lines of a folder and what it holds; the last line of each level gets the closing connector."""
    if not is_root:
        lines.append(f"{indent}{_connector(last)}{visible_name(folder.name)}{os.sep}{MORE if folder.collapsed else ''}")
    inner = "" if is_root else indent + ("    " if last else "│   ")
    items: list[str | _Folder] = [*folder.files, *([MORE] if folder.more_files else [])]
    items += folder.folders
    if folder.more_folders and (folder.folders or not folder.more_files):  # one "..." says both
        items.append(MORE)
    for index, item in enumerate(items):
        at_end = index == len(items) - 1
        if isinstance(item, _Folder):
            _format(item, inner, at_end, False, lines)
        else:
            lines.append(f"{inner}{_connector(at_end)}{visible_name(item)}")


def _connector(last: bool) -> str:
    return "└───" if last else "├───"


def _truncated(folder: _Folder) -> bool:
    if folder.collapsed or folder.more_files or folder.more_folders:
        return True
    return any(_truncated(child) for child in folder.folders)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


# -- .gitignore -----------------------------------------------------------------------------------------------


def _ignored(stack: tuple[IgnoreRules, ...], path: str, is_dir: bool) -> bool:
    """Deeper files win; within a file the last matching rule wins (IgnoreRules.verdict)."""
    for rules in reversed(stack):
        verdict = rules.verdict(path, is_dir)
        if verdict is not None:
            return verdict
    return False


def _read_rules(path: str, base: str) -> IgnoreRules | None:
    """The rules of one ignore file; a FIFO, device, folder or unreadable file has none (opened non-blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        os.set_blocking(fd, True)
        text = os.read(fd, MAX_IGNORE_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    rules = parse_gitignore(text)
    return IgnoreRules(base, tuple(rules)) if rules else None


def _with_own_rules(stack: tuple[IgnoreRules, ...], folder: str) -> tuple[IgnoreRules, ...]:
    rules = _read_rules(os.path.join(folder, ".gitignore"), folder)
    return stack if rules is None else (*stack, rules)


def _rules_above(root: str) -> tuple[IgnoreRules, ...]:
    """The rules in force at the root: .git/info/exclude and the .gitignore files from the repository's top
    folder down to the root (only the root's own when it is in no repository)."""
    chain = [root, *(str(p) for p in Path(root).parents)]
    top = next((d for d in chain if os.path.lexists(os.path.join(d, ".git"))), None)
    if top is None:
        return _with_own_rules((), root)
    stack: tuple[IgnoreRules, ...] = ()
    exclude = _read_rules(os.path.join(top, ".git", "info", "exclude"), top)
    if exclude is not None:
        stack = (exclude,)
    for folder in reversed(chain[: chain.index(top) + 1]):
        stack = _with_own_rules(stack, folder)
    return stack
