"""list_directory: a directory's entries, what .gitignore excludes left out and counted unless asked for."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.tools import files, safe_io
from sidecar.tools.declarations import IGNORED, PATH_NOTE, declare, string
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult


@dataclass(frozen=True)
class Listing:
    """The directory and whether ignored entries are listed too."""

    path: Path
    include_ignored: bool


class ListDirectory(Tool[Listing]):
    declaration = declare(
        "list_directory",
        "List a directory's entries (directories end with '/'). Entries excluded by .gitignore and .git, "
        "node_modules and virtualenv folders are left out and counted unless include_ignored is true.",
        {
            "path": string(f"The directory to list (default: the first workspace folder). {PATH_NOTE}"),
            "include_ignored": IGNORED,
        },
        [],
    )
    kind = "read"
    acp_kind = "read"
    brings_context_files = True

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[Listing]:
        path = context.workspace.resolve(args.get("path", "."))
        listing = Listing(path, bool(args.get("include_ignored", False)))
        return ToolPlan(self.name, args, "read", f"List {context.workspace.display(path)}", payload=listing)

    async def run(self, plan: ToolPlan[Listing], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        listing, workspace = plan.payload, context.workspace
        outcome = await safe_io.off_loop(
            lambda: files.list_directory(workspace, listing.path, listing.include_ignored),
            seconds=safe_io.RUN_SECONDS,
            what=plan.description,
            stop=threading.Event(),
        )
        return ToolResult(True, {"output": outcome.output}, outcome.summary)
