"""The working set after a compaction: which files the summarised part read or edited, within what budget they come
back, and the text that brings them back (marked, so the model does not read them again)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sidecar.core.history import Content
from sidecar.core.tokens import text_quarters

#: Tools whose `path` argument names a file the agent worked on (read it, or changed it).
FILE_TOOLS = ("read_file", "write_file", "replace")
#: At most this many files come back ...
MAX_FILES = 5
#: ... each at most this many tokens (estimated) ...
MAX_FILE_TOKENS = 5_000
#: ... together at most this many ...
MAX_TOTAL_TOKENS = 25_000
#: ... and never more than this share of the context window (a compaction must leave room to work).
MAX_WINDOW_SHARE = 0.10
#: How many of the most recent files are considered (the others are not named in the list either).
CONSIDERED = 10
OPENING = "<reattached_files>"
#: How read_file's note names the re-attached files when the model reads one of them again, unchanged.
REATTACHED_WHERE = "it was re-attached after the conversation summary"
CLOSING = "</reattached_files>"


@dataclass(frozen=True)
class FileBack:
    """One file of the working set: how it is shown, and its current text (None: not re-attached, `reason` says why)."""

    shown: str
    text: str | None
    reason: str = ""


def worked_on(compressed: Sequence[Content], kept: Sequence[Content]) -> list[str]:
    """The `path` arguments of the file tools called in the summarised part, most recent first, once each — less the
    files the kept part already shows whole (a read_file without a range there)."""
    seen: dict[str, None] = {}
    for content in reversed(compressed):
        for part in reversed(content.parts):
            call = part.function_call
            path = (call.args or {}).get("path") if call is not None and call.name in FILE_TOOLS else None
            if isinstance(path, str) and path.strip():
                seen.setdefault(path.strip(), None)
    shown_whole = {
        path.strip()
        for content in kept
        for part in content.parts
        if (call := part.function_call) is not None
        and call.name == "read_file"
        and isinstance(path := (call.args or {}).get("path"), str)
        and not (call.args or {}).get("start_line")
        and not (call.args or {}).get("end_line")
    }
    return [p for p in seen if p not in shown_whole][:CONSIDERED]


def tokens(text: str) -> int:
    return text_quarters(text) // 4


#: ... and never more than this share of what the compaction frees (the summarised part less its snapshot): the files
#: must not eat the saving, or make a small history's compaction larger than what it replaced.
MAX_SAVING_SHARE = 0.5


def budget(token_limit: int, freed: int | None = None) -> int:
    """The tokens the re-attached files may take together, for a context window of `token_limit` and a compaction
    that frees `freed` tokens (None: not bounded by it)."""
    cap = min(MAX_TOTAL_TOKENS, int(MAX_WINDOW_SHARE * token_limit))
    return cap if freed is None else max(0, min(cap, int(MAX_SAVING_SHARE * freed)))


def choose(files: Sequence[FileBack], token_limit: int, freed: int | None = None) -> list[FileBack]:
    """The files in order (most recent first), each kept with its text while it fits: at most MAX_FILES, each within
    MAX_FILE_TOKENS, all within `budget`; the others without text and with the reason."""
    total = budget(token_limit, freed)
    left, count, chosen = total, 0, []
    for file in files:
        if file.text is None:
            chosen.append(file)
            continue
        size = tokens(file.text)
        if count >= MAX_FILES:
            reason = f"only the {MAX_FILES} most recent files come back"
        elif size > MAX_FILE_TOKENS:
            reason = f"~{size:,} tokens, over the {MAX_FILE_TOKENS:,} a re-attached file may have"
        elif size > left:
            reason = f"~{size:,} tokens, over what is left of the {total:,} for re-attached files"
        else:
            left -= size
            count += 1
            chosen.append(file)
            continue
        chosen.append(FileBack(file.shown, None, reason))
    return chosen


def reattached_text(files: Sequence[FileBack]) -> str | None:
    """The part that follows the snapshot: which files were re-attached and which not, then their current text.
    None when no file was worked on."""
    if not files:
        return None
    back = [f for f in files if f.text is not None]
    left_out = [f for f in files if f.text is None]
    lines = [OPENING]
    if back:
        lines.append(
            "The files below were read or edited before the summary above. Their current content (the editor's "
            "buffer or the disk, as of this compaction) is re-attached: do not read them again unless they change."
        )
        lines += [f"- re-attached: {f.shown}" for f in back]
    if left_out:
        lines.append("Also worked on before the summary, not re-attached (read them again if you need them):")
        lines += [f"- not re-attached: {f.shown} ({f.reason})" for f in left_out]
    for f in back:
        lines += [f'<file path="{f.shown}">', f.text or "", "</file>"]
    lines.append(CLOSING)
    return "\n".join(lines)


def reattached_contents(text: str) -> list[tuple[str, str]]:
    """(shown path, text) of each file a re-attached part carries, as reattached_text wrote them."""
    names = reattached_files(text)
    found = []
    for index, shown in enumerate(names):
        opening = f'<file path="{shown}">\n'
        start = text.find(opening)
        following = (
            f'\n</file>\n<file path="{names[index + 1]}">' if index + 1 < len(names) else f"\n</file>\n{CLOSING}"
        )
        end = text.find(following, start + len(opening) - 1) if start >= 0 else -1
        if start >= 0 and end >= 0:
            found.append((shown, text[start + len(opening) : end]))
    return found


def reattached_files(text: str) -> list[str]:
    """The files a re-attached part brought back (for tests, resume checks and the transcript)."""
    return [line.removeprefix("- re-attached: ") for line in text.splitlines() if line.startswith("- re-attached: ")]
