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
    "Lists the subtasks of the user's current request and their progress, so that you keep track of a complex "
    "task and the user sees where you are. Each call sends the WHOLE list (it replaces the previous one; an empty "
    "list clears it). The list is kept outside the conversation: it survives when older turns are summarized.\n\n"
    "Use it for tasks that take several steps; do not use it for simple requests that take one or two steps.\n\n"
    "Statuses: pending (not started); in_progress (mark an item just before you start it; at most one item is "
    "in_progress at a time); completed (done, without errors); cancelled (no longer needed).\n\n"
    "Update the list as soon as you start, finish or cancel an item: do not batch updates."
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
