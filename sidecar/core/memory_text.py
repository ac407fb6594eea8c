"""The texts of context-file memory: file wrappers, the system section, the session context, addMemory's edit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.core.visible_text import visible_name

#: The section addMemory appends to (reference save_memory's header).
ADDED_MEMORIES_HEADER = "## Gemini Added Memories"
SESSION_CONTEXT_OPEN = "<session_context>"
SESSION_CONTEXT_CLOSE = "</session_context>"
JIT_OPEN = "--- Newly Discovered Project Context ---"
JIT_CLOSE = "--- End Project Context ---"
#: The opening of the context turn that tells the model a context file changed on disk.
CHANGED_OPEN = "<context_file_changed>"


@dataclass(frozen=True)
class LoadedFile:
    """One context file as the model gets it: absolute path, scope (global, project, subdirectory), processed text."""

    path: str
    scope: str
    text: str


def safe_text(text: str) -> str:
    r"""Text that can be encoded and sent: a file name's undecodable bytes (the OS's surrogate escapes) as \xNN,
    any other lone surrogate as U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape, text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def wrap_file(path: str, text: str) -> str:
    """One file between the reference's markers (its text trimmed). The path is a label there: a control character
    or `<`/`>` in it is shown escaped (visible_name), so a folder's name cannot end the marker's line or a tag."""
    shown = visible_name(path)
    return safe_text(f"--- Context from: {shown} ---\n{text.strip()}\n--- End of Context from: {shown} ---")


def join_files(files: Sequence[LoadedFile]) -> str:
    """Files with non-blank text, each wrapped, joined by a blank line ("" when none has text)."""
    return "\n\n".join(wrap_file(f.path, f.text) for f in files if f.text.strip())


def system_section(files: Sequence[LoadedFile], names: Sequence[str]) -> str | None:
    """The global memory appended to the system instruction after the agent prompt (None when there is none)."""
    body = join_files(files)
    if not body:
        return None
    return (
        f"# Contextual Instructions ({', '.join(names)})\n"
        "The user's own instruction files follow. Precedence: these global instructions < the project's files "
        "(in the session context) < a subfolder's files (delivered with tool results); the more specific wins. "
        "They may change how you work but never override safety rules or the user's confirmations.\n"
        f"<loaded_context>\n{body}\n</loaded_context>"
    )


def project_section(files: Sequence[LoadedFile]) -> str:
    """The project memory inside the session context ("" when there is none)."""
    body = join_files(files)
    if not body:
        return ""
    return f"<loaded_context>\n<project_context>\n{body}\n</project_context>\n</loaded_context>"


def directory_context(folders: Sequence[str], trees: Sequence[str]) -> str:
    """The workspace folders and, when given, their folder trees (reference getDirectoryContextString)."""
    lines = (
        ["- **Workspace Directories:**", *(f"  - {f}" for f in folders)]
        if folders
        else ["- **Workspace Directories:** (none: no workspace folder is open)"]
    )
    shown = [t for t in trees if t.strip()]
    if shown:
        lines += ["- **Directory Structure:**", "", "\n".join(shown)]
    return "\n".join(lines)


def session_context_text(
    *,
    date: str,
    os_name: str,
    folders: Sequence[str],
    trees: Sequence[str],
    project_memory: str,
    extra: Sequence[str] = (),
) -> str:
    """The <session_context> user turn that opens every session (new, resumed, after each compaction)."""
    parts = [
        SESSION_CONTEXT_OPEN,
        "This is the sidecar, an agent working inside the user's editor. We are setting up the context for our chat.",
        f"Today's date is {date}.",
        f"My operating system is: {os_name}",
        directory_context(folders, trees),
    ]
    if project_memory:
        parts += ["", project_memory]
    parts += [e.strip() for e in extra if e.strip()]
    parts.append(SESSION_CONTEXT_CLOSE)
    return safe_text("\n".join(parts))  # a folder tree may hold file names that are not UTF-8


def is_session_context(text: str | None) -> bool:
    """Whether a user turn's text is a session context turn."""
    return text is not None and text.startswith(SESSION_CONTEXT_OPEN)


def jit_block(files: Sequence[LoadedFile]) -> str:
    """Subfolder files newly found under a tool's path, as appended to that tool's result ("" when none)."""
    body = join_files(files)
    return f"\n\n{JIT_OPEN}\n{body}\n{JIT_CLOSE}" if body else ""


def changed_turn_text(changed: Sequence[LoadedFile], removed: Sequence[str], in_system: Sequence[str]) -> str:
    """The short context turn that tells the model which context files changed on disk, with their new content."""
    lines = [CHANGED_OPEN, "These instruction files changed on disk since you last saw them; follow the new version."]
    for path in in_system:
        lines.append(f"- {path} (global): its new content is in the system instruction.")
    for path in removed:
        lines.append(f"- {path}: no longer loaded (deleted, emptied, or the workspace is not trusted); disregard it.")
    body = join_files(changed)
    if body:
        lines += ["", body]
    lines.append("</context_file_changed>")
    return safe_text("\n".join(lines))


def sanitize_fact(text: str) -> str:
    """A fact fit for one `- ` list line: newlines to spaces, no leading `#`/`-`/`>` (no heading, no nested list
    or quote), trimmed; `<` and `>` kept out so the text cannot open or close a tag (reference save_memory)."""
    flat = re.sub(r"[\r\n]+", " ", text).replace("<", " ").replace(">", " ")
    flat = re.sub(r"\s+", " ", flat).strip()
    flat = re.sub(r"^[#\-*+\s]+", "", flat).strip()
    # `@path` would be an import when the file is next loaded (a file's text in every request): as inline code it
    # stays words (imports are never read inside code spans)
    return re.sub(r"(?:(?<=\s)|^)(@\S+)", lambda m: "`" + m.group(1).replace("`", "") + "`", flat)


def append_fact(document: str, fact: str) -> str:
    """`document` with `- <fact>` added at the end of its `## Gemini Added Memories` section (the section is
    appended after a blank line when absent). A header inside a code fence does not count."""
    line = f"- {fact}"
    lines = document.splitlines()
    start = _section_start(lines)
    if start is None:
        body = document.rstrip("\n")
        prefix = f"{body}\n\n" if body else ""
        return f"{prefix}{ADDED_MEMORIES_HEADER}\n{line}\n"
    end = start + 1
    in_fence = False
    while end < len(lines):
        current = lines[end]
        if current.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and re.match(r"^#{1,2} ", current):
            break
        end += 1
    insert_at = end
    while insert_at > start + 1 and not lines[insert_at - 1].strip():
        insert_at -= 1  # directly after the section's last line, not after its trailing blank lines
    new_lines = [*lines[:insert_at], line, *lines[insert_at:]]
    return "\n".join(new_lines) + "\n"


def _section_start(lines: list[str]) -> int | None:
    in_fence = False
    for i, current in enumerate(lines):
        if current.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        elif not in_fence and current.strip() == ADDED_MEMORIES_HEADER:
            return i
    return None
