"""read_file: a text file's lines (a window of them), an open editor buffer's unsaved text first; a short note instead
of a whole file the model still sees, unchanged, in an earlier result."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.tools import files, safe_io
from sidecar.tools.declarations import PATH_NOTE, declare, flag, integer, string
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.paths import ToolError
from sidecar.tools.tool import EarlierResult, Tool, ToolContext, ToolPlan, ToolResult

#: How the note opens (a later read skips notes when it looks for the full result).
_NOTE_OPENING = "[{shown} is unchanged since "


@dataclass(frozen=True)
class ReadWindow:
    """The file and the lines asked for (None: from the start / to the end)."""

    path: Path
    shown: str
    start: int | None
    end: int | None
    #: Read again even when an earlier result of the unchanged file is still in the conversation.
    force: bool = False


class ReadFile(Tool[ReadWindow]):
    declaration = declare(
        "read_file",
        "Read a text file. Shows at most 2,000 lines / 256 KB per call; a note at the top says when the output "
        "is cut and which lines are shown, so you can read on with start_line/end_line.",
        {
            "path": string(f"The file to read. {PATH_NOTE}"),
            "start_line": integer("First line to show, 1-based (default 1).", 1),
            "end_line": integer("Last line to show, 1-based, inclusive (default: the end of the file).", 1),
            "force": flag(
                "Read the file again even when an earlier read_file result of it, unchanged since, is still in the "
                "conversation (default false: then a short note names that result instead)."
            ),
        },
        ["path"],
    )
    kind = "read"
    acp_kind = "read"
    tracks_path = True
    brings_context_files = True
    reads_buffer = True

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[ReadWindow]:
        path = context.workspace.resolve_readable(args["path"])  # saved tool outputs too
        start, end = args.get("start_line"), args.get("end_line")
        if start is not None and end is not None and end < start:
            raise ToolError(f"end_line ({end}) is before start_line ({start}).")
        shown = context.workspace.display(path)
        lines = f" (lines {start or 1}–{end or 'end'})" if start or end else ""
        window = ReadWindow(path, shown, start, end, bool(args.get("force")))
        return ToolPlan(self.name, args, "read", f"Read {shown}{lines}", payload=window)

    async def run(self, plan: ToolPlan[ReadWindow], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        window, buffers = plan.payload, context.buffers
        outcome = await safe_io.off_loop(
            lambda: files.read_file(window.path, window.shown, window.start, window.end, buffers.text(window.path)),
            seconds=safe_io.RUN_SECONDS,
            what=plan.description,
            stop=threading.Event(),
        )
        if not (window.force or window.start or window.end):
            earlier = _same_read(window, outcome.output, context)
            if earlier is not None:
                return ToolResult(True, {"output": unchanged_note(window.shown, earlier)}, f"{window.shown}: unchanged")
        return ToolResult(True, {"output": outcome.output}, outcome.summary)


def unchanged_note(shown: str, earlier: EarlierResult) -> str:
    """What the model gets instead of a whole file it still sees, unchanged, in an earlier result."""
    which = earlier.where or (f"read_file call {earlier.call_id}" if earlier.call_id else "an earlier read_file call")
    return (
        f"{_NOTE_OPENING.format(shown=shown)}{which}, and its full text is still above in this conversation: "
        "not repeated. To read it again anyway, call read_file with force: true, or ask for a line range.]"
    )


def _same_read(window: ReadWindow, output: str, context: ToolContext) -> EarlierResult | None:
    """The newest earlier whole-file read of this file that the model still sees verbatim and that shows exactly
    what a read shows now (the disk or the editor's buffer unchanged since)."""
    for earlier in context.results_in_view("read_file"):
        args = earlier.args
        if args.get("start_line") or args.get("end_line") or not isinstance(args.get("path"), str):
            continue
        try:
            same_file = context.workspace.resolve_readable(args["path"]) == window.path
        except ToolError:
            continue
        if same_file and not earlier.output.startswith(_NOTE_OPENING.format(shown=window.shown)):
            return earlier if earlier.output == output else None  # the newest full read of it decides
    return None
