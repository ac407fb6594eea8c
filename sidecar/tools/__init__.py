"""The agent's tools (files, edits through the editor, shell), confined to the workspace: see docs/tools.md."""

from sidecar.tools.declarations import DECLARATIONS, SHELL_TOOL
from sidecar.tools.edits import ApplyEdit, EditorText
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.registry import Kind, ToolPlan, ToolRegistry, ToolResult, allow_always_key, needs_confirmation

__all__ = [
    "DECLARATIONS",
    "SHELL_TOOL",
    "ApplyEdit",
    "EditorText",
    "Kind",
    "ToolError",
    "ToolPlan",
    "ToolRegistry",
    "ToolResult",
    "Workspace",
    "allow_always_key",
    "needs_confirmation",
]
