"""glob: the files whose path matches a glob pattern, in one directory or every workspace folder."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.tools import files, safe_io
from sidecar.tools.declarations import DIRECTORY, IGNORED, declare, string
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.paths import ToolError
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult


@dataclass(frozen=True)
class Search:
    """Where a search looks (glob, search_text): its roots and how the plan names them."""

    roots: list[Path]
    where: str


def search_roots(context: ToolContext, directory: str | None) -> Search:
    """`directory` (confined to the workspace), else every workspace folder; refused in words when there is none."""
    workspace = context.workspace
    if directory is not None:
        root = workspace.resolve(directory, what="directory")
        if not root.is_dir():
            raise ToolError(f"{workspace.display(root)} is not a directory.")
        return Search([root], workspace.display(root))
    roots = workspace.roots()
    if not roots:
        raise ToolError("No workspace folder is open, so there is nothing to search.")
    return Search(roots, ", ".join(workspace.display(r) for r in roots))


class Glob(Tool[Search]):
    declaration = declare(
        "glob",
        "Find files whose path matches a glob pattern, e.g. '**/*.py', 'src/**/test_*.{ts,tsx}'. '*' and '?' "
        "stay within one path segment, '**' spans directories, '{a,b}' gives alternatives; a pattern without "
        "'/' matches file names at any depth. Returns at most 1,000 paths, sorted.",
        {
            "pattern": string("The glob pattern, relative to the directory searched."),
            "directory": DIRECTORY,
            "include_ignored": IGNORED,
        },
        ["pattern"],
    )
    kind = "read"
    acp_kind = "search"

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[Search]:
        files.compile_glob(args["pattern"])  # refuse a bad pattern now
        search = search_roots(context, args.get("directory"))
        description = f"Find files matching {args['pattern']} in {search.where}"
        return ToolPlan(self.name, args, "read", description, payload=search)

    async def run(self, plan: ToolPlan[Search], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        stop, workspace = threading.Event(), context.workspace
        roots, ignored = plan.payload.roots, bool(plan.args.get("include_ignored", False))
        outcome = await safe_io.off_loop(
            lambda: files.glob_files(workspace, roots, plan.args["pattern"], ignored, stop),
            seconds=safe_io.RUN_SECONDS,
            what=plan.description,
            stop=stop,
        )
        return ToolResult(True, {"output": outcome.output}, outcome.summary)
