"""search_text: the lines matching a regular expression, unsaved editor buffers included."""

from __future__ import annotations

import re
import threading
from typing import Any

from sidecar.tools import files, safe_io
from sidecar.tools.builtin.glob import Search, search_roots
from sidecar.tools.declarations import DIRECTORY, declare, flag, string
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.paths import ToolError
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult


class SearchText(Tool[Search]):
    declaration = declare(
        "search_text",
        "Search file contents for a regular expression (Python syntax), line by line. Returns 'path:line: text' "
        "for at most 200 matching lines; binary files and files ignored by .gitignore are skipped.",
        {
            "pattern": string("The regular expression to look for in each line."),
            "directory": DIRECTORY,
            "include": string("Only search files matching this glob, e.g. '*.py' or 'src/**/*.{ts,tsx}'."),
            "ignore_case": flag("Match case-insensitively (default false)."),
        },
        ["pattern"],
    )
    kind = "read"
    acp_kind = "search"

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[Search]:
        try:
            re.compile(args["pattern"], re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {args['pattern']!r}: {exc}.") from None
        if args.get("include") is not None:
            files.compile_glob(args["include"])
        search = search_roots(context, args.get("directory"))
        return ToolPlan(self.name, args, "read", f"Search /{args['pattern']}/ in {search.where}", payload=search)

    async def run(self, plan: ToolPlan[Search], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        stop, workspace = threading.Event(), context.workspace
        regex = re.compile(plan.args["pattern"], re.IGNORECASE if plan.args.get("ignore_case") else 0)
        include = files.compile_glob(plan.args["include"]) if plan.args.get("include") is not None else None
        roots, unsaved = plan.payload.roots, context.buffers.unsaved()
        outcome = await safe_io.off_loop(
            lambda: files.search_text(workspace, roots, regex, include, stop, unsaved),
            seconds=safe_io.RUN_SECONDS,
            what=plan.description,
            stop=stop,
        )
        return ToolResult(True, {"output": outcome.output}, outcome.summary)
