"""read_file: a text file's lines (a window of them), an open editor buffer's unsaved text first."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.tools import files, safe_io
from sidecar.tools.declarations import PATH_NOTE, declare, integer, string
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.paths import ToolError
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult


@dataclass(frozen=True)
class ReadWindow:
    """The file and the lines asked for (None: from the start / to the end)."""

    path: Path
    shown: str
    start: int | None
    end: int | None


class ReadFile(Tool[ReadWindow]):
    declaration = declare(
        "read_file",
        "Read a text file. Shows at most 2,000 lines / 256 KB per call; a note at the top says when the output "
        "is cut and which lines are shown, so you can read on with start_line/end_line.",
        {
            "path": string(f"The file to read. {PATH_NOTE}"),
            "start_line": integer("First line to show, 1-based (default 1).", 1),
            "end_line": integer("Last line to show, 1-based, inclusive (default: the end of the file).", 1),
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
        return ToolPlan(self.name, args, "read", f"Read {shown}{lines}", payload=ReadWindow(path, shown, start, end))

    async def run(self, plan: ToolPlan[ReadWindow], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        window, buffers = plan.payload, context.buffers
        outcome = await safe_io.off_loop(
            lambda: files.read_file(window.path, window.shown, window.start, window.end, buffers.text(window.path)),
            seconds=safe_io.RUN_SECONDS,
            what=plan.description,
            stop=threading.Event(),
        )
        return ToolResult(True, {"output": outcome.output}, outcome.summary)
