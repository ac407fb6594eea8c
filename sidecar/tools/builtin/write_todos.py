"""write_todos: the model sets its whole todo list (kept outside the history, shown to the user)."""

from __future__ import annotations

from typing import Any

from sidecar.core.todos import TodoItem, check_todos, listed
from sidecar.core.words import counted
from sidecar.tools.declarations import declare
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.paths import ToolError
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult

_DESCRIPTION = (
    "Keeps the todo list of the user's current task, so that you track a task of several steps and the user sees "
    "where you are. Each call sends the WHOLE list (it replaces the previous one; [] clears it). The list is kept "
    "outside the conversation and survives when older turns are summarized. Not for tasks of one or two steps.\n"
    "Statuses: pending; in_progress (mark an item just before you start it; one at a time); completed; cancelled "
    "(no longer needed). Update the list as soon as you start, finish or cancel an item."
)


class WriteTodos(Tool[list[TodoItem]]):
    declaration = declare(
        "write_todos",
        _DESCRIPTION,
        {
            "todos": {
                "type": "array",
                "description": "The complete list of todo items. This replaces the existing list.",
                "items": {
                    "type": "object",
                    "description": "A single todo item.",
                    "properties": {
                        "description": {"type": "string", "description": "The description of the task."},
                        "status": {
                            "type": "string",
                            "description": "The current status of the task.",
                            "enum": ["pending", "in_progress", "completed", "cancelled"],
                        },
                    },
                    "required": ["description", "status"],
                    "additionalProperties": False,
                },
            }
        },
        ["todos"],
    )
    kind = "read"  # it changes no file: it never asks
    acp_kind = "think"

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[list[TodoItem]]:
        if context.agent is None:
            raise ToolError("write_todos is not available in this session.")
        items, problem = check_todos(args["todos"])
        if problem is not None:
            raise ToolError(f"The todo list was not changed: {problem}")
        description = f"Set the todo list ({counted(len(items), 'item')})" if items else "Clear the todo list"
        return ToolPlan(self.name, args, "read", description, payload=items)

    async def run(
        self, plan: ToolPlan[list[TodoItem]], context: ToolContext, apply_edit: ApplyEdit | None
    ) -> ToolResult:
        if context.agent is None:
            raise ToolError("write_todos is not available in this session.")
        items = plan.payload
        context.agent.set_todos(items)
        if not items:
            return ToolResult(True, {"output": "Successfully cleared the todo list."}, "Cleared the todo list")
        output = f"Successfully updated the todo list. The current list is now:\n{listed(items)}"
        return ToolResult(True, {"output": output}, f"Set the todo list ({counted(len(items), 'item')})")
