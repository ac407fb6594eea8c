"""The agent's tools (files, edits through the editor, shell), confined to the workspace: see docs/tools.md."""

from sidecar.tools.builtin import BUILTIN, DECLARATIONS
from sidecar.tools.declarations import SHELL_TOOL
from sidecar.tools.edits import ApplyEdit, EditorText
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.registry import ToolRegistry, allow_always_key, needs_confirmation
from sidecar.tools.tool import Kind, Tool, ToolPlan, ToolResult

__all__ = [
    "BUILTIN",
    "DECLARATIONS",
    "SHELL_TOOL",
    "ApplyEdit",
    "EditorText",
    "Kind",
    "Tool",
    "ToolError",
    "ToolPlan",
    "ToolRegistry",
    "ToolResult",
    "Workspace",
    "allow_always_key",
    "needs_confirmation",
]
