"""replace: exact text replaced in an existing file (the count of occurrences checked), through the editor."""

from __future__ import annotations

from typing import Any

from sidecar.tools.declarations import PATH_NOTE, declare, integer, string
from sidecar.tools.edits import EditPlan, plan_replace
from sidecar.tools.tool import EditTool, ToolContext, ToolPlan


class Replace(EditTool):
    declaration = declare(
        "replace",
        "Replace exact text in an existing file. old_string must match the file exactly (whitespace and "
        "indentation included; read the file first) and occur exactly expected_replacements times (default 1): "
        "include enough surrounding lines to make it unique.",
        {
            "path": string(f"The file to edit. {PATH_NOTE}"),
            "old_string": string("The exact text to replace (not empty)."),
            "new_string": string("The text to put in its place."),
            "expected_replacements": integer(
                "How many occurrences to replace (default 1); the edit is refused if the count differs.", 1
            ),
        },
        ["path", "old_string", "new_string"],
    )

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[EditPlan]:
        path = context.workspace.resolve(args["path"])
        expected = args.get("expected_replacements", 1)
        shown = context.workspace.display(path)
        edit = plan_replace(path, shown, args["old_string"], args["new_string"], expected, context.buffers)
        return self.edit_plan(args, context, edit)
