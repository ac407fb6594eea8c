"""`@path` imports in context files: inlined once, inside the project root (and the workspace folders), depth 5,
within one budget per load; cycles, failures and credential files marked."""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

MAX_DEPTH = 5
#: A context file or import larger than this is cut (with a note): memory rides along with every request.
MAX_FILE_BYTES = 256 * 1024
#: What all the imports of one load may inline together: files, and bytes (an import bomb stops here).
MAX_IMPORT_FILES = 64
MAX_IMPORT_BYTES = 1024 * 1024
#: File names never imported, from any source (compared case-insensitively): keys and tokens.
CREDENTIAL_NAMES = ("oauth_creds.json", "*.pem", "id_*", ".env*", "credentials*.json")

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


def is_credential_file(path: str | Path) -> bool:
    """Whether the file's name is one of CREDENTIAL_NAMES (a key or token file, never read as memory)."""
    name = os.path.basename(os.fspath(path)).lower()
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in CREDENTIAL_NAMES)


@dataclass
class ImportBudget:
    """What one load of the memory may still import, and what it imported (each file is inlined once)."""

    files_left: int = MAX_IMPORT_FILES
    bytes_left: int = MAX_IMPORT_BYTES
    #: Real paths of every file inlined so far, in order: the import graph (protected, watched).
    files: list[str] = field(default_factory=list)
    #: The notice of the import that hit the budget (None while it holds).
    exhausted: str | None = None


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


def process_imports(
    text: str,
    file: Path,
    root: Path,
    *,
    depth: int = 0,
    chain: frozenset[str] = frozenset(),
    budget: ImportBudget | None = None,
    folders: Sequence[str | Path] | None = None,
) -> str:
    """`text` (the content of `file`) with each `@path` outside code replaced by that file's processed content
    between `<!-- Imported from: … -->` / `<!-- End of import from: … -->`. Paths are relative to `file`'s folder and
    must resolve (symlinks followed) inside `root`, and, with `folders` (workspace memory), inside one of them; a
    credential file is never imported. Failures become `<!-- Import failed: <path> - <reason> -->`, a file already
    in this import chain `<!-- File already processed: <path> -->`, a file inlined earlier in this load `<!-- File
    already imported above: <path> -->`, an import past the `budget` `<!-- Import skipped: <path> - … -->`.
    Past MAX_DEPTH levels the text is left as it is."""
    if depth >= MAX_DEPTH:
        return text
    budget = budget if budget is not None else ImportBudget()
    chain = chain | {os.path.realpath(file)}
    code = _code_ranges(text)
    real_root = os.path.realpath(root)
    real_folders = None if folders is None else [os.path.realpath(f) for f in folders]
    out: list[str] = []
    last = 0
    for match in _IMPORT.finditer(text):
        if any(a <= match.start() < b for a, b in code):
            continue
        written = match.group(1)
        out.append(text[last : match.start()])
        last = match.end()
        out.append(_one_import(written, file, real_root, root, depth, chain, budget, real_folders))
    out.append(text[last:])
    return "".join(out)


def _one_import(
    written: str,
    file: Path,
    real_root: str,
    root: Path,
    depth: int,
    chain: frozenset[str],
    budget: ImportBudget,
    folders: list[str] | None,
) -> str:
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", written):
        return f"<!-- Import failed: {written} - URLs are not imported -->"
    target = Path(written) if os.path.isabs(written) else file.parent / written
    real = os.path.realpath(target)
    if not _inside(real, real_root):
        return f"<!-- Import failed: {written} - Path traversal attempt (outside {root}) -->"
    if folders is not None and not any(_inside(real, folder) for folder in folders):
        return f"<!-- Import failed: {written} - outside the workspace folders (workspace memory stays inside them) -->"
    if is_credential_file(target) or is_credential_file(real):
        return f"<!-- Import failed: {written} - a credential file (keys, tokens) is never imported -->"
    if real in chain:
        return f"<!-- File already processed: {written} -->"
    if real in budget.files:
        return f"<!-- File already imported above: {written} -->"
    if budget.exhausted is not None:
        return f"<!-- Import skipped: {written} - the imports' budget is used up (see {budget.exhausted}) -->"
    try:
        content = read_text(Path(real))
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return f"<!-- Import failed: {written} - {reason} -->"
    size = len(content.encode("utf-8", "replace"))
    if budget.files_left <= 0 or size > budget.bytes_left:
        budget.exhausted = written
        log.warning(
            "memory imports: %s (imported from %s) passes the budget of %d files / %d KB for all imports of the "
            "memory; it and the imports after it are left out",
            real,
            file,
            MAX_IMPORT_FILES,
            MAX_IMPORT_BYTES // 1024,
        )
        return (
            f"<!-- Import skipped: {written} - the imports' budget ({MAX_IMPORT_FILES} files, "
            f"{MAX_IMPORT_BYTES // 1024} KB in all) is used up at this file; it and the imports after it are left "
            "out -->"
        )
    budget.files_left -= 1
    budget.bytes_left -= size
    budget.files.append(real)
    inner = process_imports(
        content,
        Path(real),
        root,
        depth=depth + 1,
        chain=chain,
        budget=budget,
        folders=folders,
    )
    return f"<!-- Imported from: {written} -->\n{inner}\n<!-- End of import from: {written} -->"
