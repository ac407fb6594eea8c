"""The read-only tools: read_file, list_directory, glob and search_text — gitignore-aware, each with bounded output."""

from __future__ import annotations

import io
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, NamedTuple

from sidecar.core.visible_text import visible_name
from sidecar.core.words import counted, plural
from sidecar.tools.gitignore import Ignorer, expand_braces, glob_regex
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.safe_io import open_regular, read_regular

__all__ = [
    "MAX_GLOB_RESULTS",
    "MAX_READ_BYTES",
    "MAX_READ_LINES",
    "MAX_SEARCH_MATCHES",
    "Outcome",
    "compile_glob",
    "glob_files",
    "list_directory",
    "read_file",
    "search_text",
]

MAX_READ_LINES = 2_000
MAX_READ_BYTES = 256 * 1024
#: A line longer than this many characters is cut and marked with TRUNCATED_MARK (as the reference does).
MAX_LINE_CHARS = 2_000
TRUNCATED_MARK = "... [truncated]"
LINE_KEEP_BYTES = MAX_LINE_CHARS * 4 + 4  # enough bytes for MAX_LINE_CHARS + 1 characters of UTF-8
CHUNK_BYTES = 1024 * 1024
#: How long read_file may spend counting the lines after the part it shows (the total is then "at least").
COUNT_SECONDS = 10.0
#: How long read_file may spend reading the lines it shows, skipping the rest of over-long lines included; past
#: it, the read answers with what it has (a 3 GB one-line file took a minute).
READ_SECONDS = 20.0
MAX_LIST_ENTRIES = 1_000
MAX_GLOB_RESULTS = 1_000
MAX_GLOB_ALTERNATIVES = 256
MAX_SEARCH_MATCHES = 200
MAX_MATCH_LINE_CHARS = 400
MAX_SEARCH_FILE_BYTES = 4 * 1024 * 1024
MAX_WALK_ENTRIES = 200_000
SNIFF_BYTES = 8_192
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules"})


class Outcome(NamedTuple):
    """A tool's text for the model and its one-line summary for the UI."""

    output: str
    summary: str


def _is_binary(head: bytes) -> bool:
    return b"\0" in head


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _sorted_entries(directory: str | Path) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as entries:
        return sorted(entries, key=lambda e: e.name)


def _skipped_dir(path: str, name: str) -> bool:
    """Folders no tool descends into by default: version control, node_modules, virtualenvs."""
    return name in SKIP_DIRS or os.path.exists(os.path.join(path, "pyvenv.cfg"))


# ---------------------------------------------------------------- read_file


def _open_text(path: Path, shown: str, text: str | None) -> BinaryIO:
    if text is not None:
        return io.BytesIO(text.encode("utf-8", "surrogatepass"))
    try:
        fd = open_regular(path, shown)
    except FileNotFoundError:
        raise ToolError(f"File not found: {shown}") from None
    except ToolError as exc:
        if str(exc).endswith("is a directory."):
            raise ToolError(f"{shown} is a directory; use list_directory to see its entries.") from None
        raise
    return os.fdopen(fd, "rb")


class _Deadline:
    """The monotonic time a read must answer by, and whether it was reached."""

    def __init__(self, seconds: float) -> None:
        self.until = time.monotonic() + seconds
        self.reached = False

    def passed(self) -> bool:
        self.reached = self.reached or time.monotonic() > self.until
        return self.reached


def _lines(f: BinaryIO, deadline: _Deadline) -> Iterator[tuple[bytes, bool]]:
    """(line, cut) for each line of `f`, never holding more than LINE_KEEP_BYTES of one line in memory: a longer
    line gives its first LINE_KEEP_BYTES bytes (with its newline) and cut=True, and the rest is skipped. Skipping
    stops at the deadline: that line is the last one given (deadline.reached tells)."""
    while line := f.readline(LINE_KEEP_BYTES):
        if len(line) < LINE_KEEP_BYTES or line.endswith(b"\n"):
            yield line, False
            continue
        while (rest := f.readline(CHUNK_BYTES)) and not rest.endswith(b"\n"):
            if deadline.passed():
                yield line + b"\n", True
                return
        yield line + b"\n", True


def _cut_line(line: bytes, cut: bool) -> tuple[str, bool]:
    """A line's text, shortened to MAX_LINE_CHARS characters + TRUNCATED_MARK when longer."""
    text = line.decode("utf-8", "replace")
    end = text[-2:] if text.endswith("\r\n") else text[-1:] if text.endswith(("\n", "\r")) else ""
    body = text[: len(text) - len(end)]
    if cut or len(body) > MAX_LINE_CHARS:
        return body[:MAX_LINE_CHARS] + TRUNCATED_MARK + (end or "\n"), True
    return text, False


def _count_rest(f: BinaryIO, until: float) -> tuple[int, bool]:
    """Lines left in `f` from its current position, counted in chunks; (count, complete) — counting stops at
    the monotonic time `until`."""
    count, last = 0, b"\n"
    while chunk := f.read(CHUNK_BYTES):
        count += chunk.count(b"\n")
        last = chunk[-1:]
        if time.monotonic() > until:
            return count, False
    return count + (last != b"\n"), True


def read_file(path: Path, shown: str, start: int | None, end: int | None, text: str | None = None) -> Outcome:
    """Lines start..end (1-based, inclusive) of a text file, at most MAX_READ_LINES lines / MAX_READ_BYTES bytes;
    a line over MAX_LINE_CHARS characters is cut. Memory stays bounded whatever the file's size or line length.

    `text` is the editor's unsaved text of the file, used instead of the disk when given.
    """
    first = start or 1
    lines: list[str] = []
    size = number = 0
    valid = True
    cut = long_lines = False
    deadline = _Deadline(READ_SECONDS)
    with _open_text(path, shown, text) as f:
        if _is_binary(f.read(SNIFF_BYTES)):
            raise ToolError(f"{shown} looks like a binary file; read_file shows text files only.")
        f.seek(0)
        for number, (line, too_long) in enumerate(_lines(f, deadline), 1):
            if number < first:
                continue
            if end is not None and number > end:
                break
            shown_line, shortened = _cut_line(line, too_long)
            line_size = len(shown_line.encode("utf-8", "replace"))
            if len(lines) >= MAX_READ_LINES or size + line_size > MAX_READ_BYTES:
                cut = True
                break
            valid = valid and (too_long or _is_utf8(line))
            long_lines = long_lines or shortened
            lines.append(shown_line)
            size += line_size
        if deadline.reached:  # the rest of a long line was not read: nothing after it is known
            rest, complete = 0, False
        else:
            rest, complete = _count_rest(f, time.monotonic() + COUNT_SECONDS)
        total = number + rest
    if total == 0:
        if start not in (None, 1):
            raise ToolError(f"start_line {start} is past the end of {shown}, which is empty.")
        return Outcome("[empty file]", f"Read {shown} (empty)")
    of_total = f"{total}" if complete else f"at least {total}"
    if first > total and complete:
        raise ToolError(f"start_line {first} is past the end of {shown}, which has {counted(total, 'line')}.")
    body = "".join(lines)
    last = first + len(lines) - 1
    notes: list[str] = []
    if cut:
        notes.append(f"[truncated: showing lines {first}–{last} of {of_total}; use start_line/end_line]")
    elif start is not None or end is not None or not complete:
        notes.append(f"[showing lines {first}–{last} of {of_total}]")
    if long_lines:
        notes.append(f"[lines longer than {MAX_LINE_CHARS:,} characters are cut, marked '{TRUNCATED_MARK}']")
    if not valid:
        notes.append("[not valid UTF-8: undecodable bytes are shown as U+FFFD]")
    if deadline.reached:
        notes.append(
            f"[stopped after {READ_SECONDS:g} s in line {number:,}, a line too long to skip in time: the file was not "
            "read past it]"
        )
    header = "\n".join(notes) + "\n" if notes else ""
    summary = (
        f"Read {shown} (lines {first}–{last} of {of_total})" if notes else f"Read {shown} ({counted(total, 'line')})"
    )
    return Outcome(header + body, summary)


# ---------------------------------------------------------------- walking


class _Walk:
    """Files under a root, depth first in name order: skipped folders and ignored paths left out unless asked,
    directory symlinks not followed, file symlinks only when their target is inside the workspace."""

    def __init__(self, workspace: Workspace, root: Path, include_ignored: bool, stop: threading.Event) -> None:
        self.workspace, self.root, self.include_ignored, self.stop = workspace, root, include_ignored, stop
        self.limited = False

    def __iter__(self) -> Iterator[tuple[str, str, str]]:
        """(path to read, path as found, path relative to the root in POSIX form)."""
        ignorer = None if self.include_ignored else Ignorer.for_directory(self.root)
        stack: list[tuple[str, str, Ignorer | None]] = [(str(self.root), "", ignorer)]
        visited = 0
        while stack and not self.stop.is_set():
            directory, rel, ignorer = stack.pop()
            try:
                entries = _sorted_entries(directory)
            except OSError:
                continue
            subdirs: list[tuple[str, str, Ignorer | None]] = []
            for entry in entries:
                visited += 1
                if visited > MAX_WALK_ENTRIES or self.stop.is_set():
                    self.limited = visited > MAX_WALK_ENTRIES
                    return
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    is_link = entry.is_symlink()
                except OSError:
                    continue
                if is_dir:
                    if ignorer is not None and (
                        _skipped_dir(entry.path, entry.name) or ignorer.ignored(entry.path, True)
                    ):
                        continue
                    child = ignorer.child(Path(entry.path)) if ignorer is not None else None
                    subdirs.append((entry.path, f"{rel}{entry.name}/", child))
                    continue
                if ignorer is not None and ignorer.ignored(entry.path, False):
                    continue
                if is_link:
                    real = os.path.realpath(entry.path)
                    if os.path.isfile(real) and self.workspace.contains(real):
                        yield real, entry.path, rel + entry.name
                elif entry.is_file(follow_symlinks=False):
                    yield entry.path, entry.path, rel + entry.name
            stack.extend(reversed(subdirs))


_WALK_LIMIT_NOTE = f"[stopped after visiting {MAX_WALK_ENTRIES:,} entries; search a smaller directory]"
#: Said under a listing where a name was shown escaped (visible_name): how to name that file in a later call.
ESCAPED_NAMES_NOTE = (
    "[{count} shown escaped: a control character as \\n, \\e, \\xNN or U+XXXX in angle brackets, angle "
    "brackets as &lt; and &gt;; give the real characters in a later call's path]"
)


def _shown_names(names: list[str]) -> tuple[list[str], int]:
    """Names as lines the model reads (visible_name: a newline cannot forge a line, `<`/`>` cannot open a tag), and
    how many were changed (names without such characters stay exact for a later call)."""
    shown = [visible_name(name) for name in names]
    return shown, sum(a != b for a, b in zip(shown, names, strict=True))


def compile_glob(pattern: str) -> list[re.Pattern[str]]:
    """The regexes of a glob pattern (braces expanded); a pattern without '/' matches names at any depth."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if not pattern:
        raise ToolError("The glob pattern is empty.")
    if pattern.startswith("/"):
        raise ToolError("The glob pattern must be relative; pass the folder to search as 'directory'.")
    alternatives = expand_braces(pattern)
    if len(alternatives) > MAX_GLOB_ALTERNATIVES:
        raise ToolError(f"The glob pattern expands to {len(alternatives)} alternatives; the limit is 256.")
    compiled = []
    for alternative in alternatives:
        if "/" not in alternative:
            alternative = "**/" + alternative
        compiled.append(re.compile(glob_regex(alternative), re.DOTALL))
    return compiled


def glob_files(
    workspace: Workspace, roots: list[Path], pattern: str, include_ignored: bool, stop: threading.Event
) -> Outcome:
    regexes = compile_glob(pattern)
    found: set[str] = set()
    limited = False
    show = workspace.displayer()
    for root in roots:
        walk = _Walk(workspace, root, include_ignored, stop)
        for _read, path, rel in walk:
            if any(r.fullmatch(rel) for r in regexes):
                found.add(show(path))
        limited = limited or walk.limited
    where = ", ".join(workspace.display(r) for r in roots)
    if not found:
        text = f"No files match {pattern!r} in {where}" + (f"\n{_WALK_LIMIT_NOTE}" if limited else "")
        return Outcome(text, f"No files match {pattern}")
    paths = sorted(found)
    shown, escaped = _shown_names(paths[:MAX_GLOB_RESULTS])
    notes = []
    if len(paths) > MAX_GLOB_RESULTS:
        notes.append(f"[truncated: showing {MAX_GLOB_RESULTS:,} of {len(paths):,} paths; use a narrower pattern]")
    if limited:
        notes.append(_WALK_LIMIT_NOTE)
    if escaped:
        notes.append(ESCAPED_NAMES_NOTE.format(count=counted(escaped, "name")))
    text = "\n".join([*shown, *notes])
    return Outcome(text, f"Found {counted(len(paths), 'file')} matching {pattern}")


# ---------------------------------------------------------------- list_directory


def list_directory(workspace: Workspace, path: Path, include_ignored: bool) -> Outcome:
    shown = workspace.display(path)
    if not path.exists():
        raise ToolError(f"Directory not found: {shown}")
    if not path.is_dir():
        raise ToolError(f"{shown} is a file, not a directory; use read_file to read it.")
    try:
        entries = _sorted_entries(path)
    except OSError as exc:
        raise ToolError(f"Cannot list {shown}: {exc.strerror or exc}") from None
    ignorer = None if include_ignored else Ignorer.for_directory(path)
    dirs: list[str] = []
    files: list[str] = []
    hidden = 0
    for entry in entries:
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        real_dir = is_dir and not entry.is_symlink()
        if ignorer is not None and (
            (real_dir and _skipped_dir(entry.path, entry.name)) or ignorer.ignored(entry.path, is_dir)
        ):
            hidden += 1
            continue
        (dirs if is_dir else files).append(entry.name + ("/" if is_dir else ""))
    listed = dirs + files
    lines, escaped = _shown_names(listed[:MAX_LIST_ENTRIES])
    lines = lines or ["[empty directory]"]
    if len(listed) > MAX_LIST_ENTRIES:
        lines.append(f"[truncated: showing {MAX_LIST_ENTRIES:,} of {len(listed):,} entries; use glob to narrow]")
    if hidden:
        lines.append(
            f"[{counted(hidden, 'entry', 'entries')} hidden: ignored by .gitignore, or .git/node_modules/virtualenv "
            "folders; pass include_ignored=true to see them]"
        )
    if escaped:
        lines.append(ESCAPED_NAMES_NOTE.format(count=counted(escaped, "name")))
    return Outcome(
        f"Directory {shown}:\n" + "\n".join(lines), f"Listed {shown} ({counted(len(listed), 'entry', 'entries')})"
    )


# ---------------------------------------------------------------- search_text


def _file_text(path: str, overrides: Mapping[str, str]) -> str | None:
    """The text to search, or None for a binary, unreadable, too large or not regular file."""
    if path in overrides:
        return overrides[path]
    try:
        data = read_regular(Path(path), path, MAX_SEARCH_FILE_BYTES)
    except (OSError, ToolError):
        return None
    if data is None:
        return None
    return None if _is_binary(data[:SNIFF_BYTES]) else data.decode("utf-8", "replace")


def search_text(
    workspace: Workspace,
    roots: list[Path],
    regex: re.Pattern[str],
    include: list[re.Pattern[str]] | None,
    stop: threading.Event,
    overrides: Mapping[str, str] | None = None,
) -> Outcome:
    """Lines matching `regex` in the text files under `roots` (`include` filters paths relative to the root)."""
    results: list[str] = []
    files_matched = 0
    full = limited = False
    show = workspace.displayer()
    for root in roots:
        walk = _Walk(workspace, root, False, stop)
        for read_path, path, rel in walk:
            if include is not None and not any(r.fullmatch(rel) for r in include):
                continue
            text = _file_text(read_path, overrides or {})
            if text is None:
                continue
            shown = show(path)
            matched = False
            for number, line in enumerate(text.split("\n"), 1):
                line = line.removesuffix("\r")
                if regex.search(line) is None:
                    continue
                if len(results) == MAX_SEARCH_MATCHES:
                    full = True
                    break
                matched = True
                cut = line if len(line) <= MAX_MATCH_LINE_CHARS else line[:MAX_MATCH_LINE_CHARS] + "…"
                results.append(f"{shown}:{number}: {cut}")
            files_matched += matched
            if full:
                break
        limited = limited or walk.limited
        if full:
            break
    where = ", ".join(workspace.display(r) for r in roots)
    if not results:
        note = f"\n{_WALK_LIMIT_NOTE}" if limited else ""
        return Outcome(f"No matches for /{regex.pattern}/ in {where}{note}", f"No matches for /{regex.pattern}/")
    count = f"{MAX_SEARCH_MATCHES}+" if full else str(len(results))
    if full:
        results.append(
            f"[truncated: showing the first {MAX_SEARCH_MATCHES} matches; narrow the pattern, directory or include]"
        )
    if limited:
        results.append(_WALK_LIMIT_NOTE)
    return Outcome(
        "\n".join(results),
        f"{count} {plural(0 if full else len(results), 'match', 'matches')} in {counted(files_matched, 'file')} "
        f"for /{regex.pattern}/",
    )
