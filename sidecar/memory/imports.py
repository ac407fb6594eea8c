"""`@path` imports in context files: inlined in place, inside the project root, depth 5, cycles and failures marked."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

MAX_DEPTH = 5
#: A context file or import larger than this is cut (with a note): memory rides along with every request.
MAX_FILE_BYTES = 256 * 1024

#: `@` at the start or after whitespace, then a path to the next whitespace starting with `.`, `/` or a letter.
_IMPORT = re.compile(r"(?:(?<=\s)|^)@([./A-Za-z][^\s]*)")
#: Code where `@` is never an import: fenced blocks (``` or ~~~, to the closing fence or the end) and inline spans.
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}\1[`~]*[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)


def read_text(path: Path) -> str:
    """A regular file's text (UTF-8, bad bytes replaced), at most MAX_FILE_BYTES of it; OSError when it cannot be
    read or is not a regular file (never blocks on a FIFO)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(f"{path} is a folder")
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        data = os.read(fd, MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    text = data[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if len(data) > MAX_FILE_BYTES:
        text += f"\n[... cut: the file is larger than {MAX_FILE_BYTES // 1024} KB]"
    return text


def project_root(folder: Path, markers: tuple[str, ...]) -> Path | None:
    """The first folder from `folder` up holding one of the boundary `markers` (a file or folder), else None.
    Markers that are absolute or contain `..` are ignored."""
    usable = [m for m in markers if m and not os.path.isabs(m) and ".." not in Path(m).parts]
    if not usable:
        return None
    for candidate in (folder, *folder.parents):
        if any(os.path.lexists(candidate / m) for m in usable):
            return candidate
    return None


def _code_ranges(text: str) -> list[tuple[int, int]]:
    ranges = [m.span() for m in _FENCE.finditer(text)]

    def in_fence(pos: int) -> bool:
        return any(a <= pos < b for a, b in ranges)

    ranges += [m.span() for m in _SPAN.finditer(text) if not in_fence(m.start())]
    return ranges


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def process_imports(text: str, file: Path, root: Path, *, depth: int = 0, chain: frozenset[str] = frozenset()) -> str:
    """`text` (the content of `file`) with each `@path` outside code replaced by that file's processed content
    between `<!-- Imported from: … -->` / `<!-- End of import from: … -->`. Paths are relative to `file`'s folder and
    must resolve (symlinks followed) inside `root`; failures become `<!-- Import failed: <path> - <reason> -->`,
    a file already in this import chain `<!-- File already processed: <path> -->`. Past MAX_DEPTH levels the
    text is left as it is."""
    if depth >= MAX_DEPTH:
        return text
    chain = chain | {os.path.realpath(file)}
    code = _code_ranges(text)
    real_root = os.path.realpath(root)
    out: list[str] = []
    last = 0
    for match in _IMPORT.finditer(text):
        if any(a <= match.start() < b for a, b in code):
            continue
        written = match.group(1)
        out.append(text[last : match.start()])
        last = match.end()
        out.append(_one_import(written, file, real_root, root, depth, chain))
    out.append(text[last:])
    return "".join(out)


def _one_import(written: str, file: Path, real_root: str, root: Path, depth: int, chain: frozenset[str]) -> str:
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", written):
        return f"<!-- Import failed: {written} - URLs are not imported -->"
    target = Path(written) if os.path.isabs(written) else file.parent / written
    real = os.path.realpath(target)
    if not _inside(real, real_root):
        return f"<!-- Import failed: {written} - Path traversal attempt (outside {root}) -->"
    if real in chain:
        return f"<!-- File already processed: {written} -->"
    try:
        content = read_text(Path(real))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return f"<!-- Import failed: {written} - {reason} -->"
    inner = process_imports(content, Path(real), root, depth=depth + 1, chain=chain)
    return f"<!-- Imported from: {written} -->\n{inner}\n<!-- End of import from: {written} -->"
