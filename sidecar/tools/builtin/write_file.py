"""write_file: create a file or replace its whole content, through the editor when it can."""

from __future__ import annotations

from typing import Any

from sidecar.tools.declarations import PATH_NOTE, declare, string
from sidecar.tools.edits import EditPlan, plan_write
from sidecar.tools.tool import EditTool, ToolContext, ToolPlan


class WriteFile(EditTool):
    declaration = declare(
        "write_file",
        "Create a file or replace its whole content. Missing parent directories are created. For a change to "
        "part of an existing file, prefer replace.",
        {
            "path": string(f"The file to write. {PATH_NOTE}"),
            "content": string("The complete new content of the file."),
        },
        ["path", "content"],
    )

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[EditPlan]:
        path = context.workspace.resolve(args["path"])
        edit = plan_write(path, context.workspace.display(path), args["content"], context.buffers)
        return self.edit_plan(args, context, edit)
