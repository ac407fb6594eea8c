"""The built-in tools, one per module; adding a tool is one module here and one line in BUILTIN."""

from __future__ import annotations

from typing import Any

from sidecar.tools.builtin.glob import Glob
from sidecar.tools.builtin.list_directory import ListDirectory
from sidecar.tools.builtin.read_file import ReadFile
from sidecar.tools.builtin.replace import Replace
from sidecar.tools.builtin.run_shell_command import RunShellCommand
from sidecar.tools.builtin.save_memory import SaveMemory
from sidecar.tools.builtin.search_text import SearchText
from sidecar.tools.builtin.write_file import WriteFile
from sidecar.tools.builtin.write_todos import WriteTodos
from sidecar.tools.tool import Tool

__all__ = ["BUILTIN", "DECLARATIONS", "acp_kind"]

#: The built-in tools by name, in the order they are declared to the model.
BUILTIN: dict[str, Tool[Any]] = {
    tool.name: tool
    for tool in (
        ReadFile(),
        ListDirectory(),
        Glob(),
        SearchText(),
        WriteFile(),
        Replace(),
        RunShellCommand(),
        SaveMemory(),
        WriteTodos(),
    )
}
#: Their Gemini FunctionDeclarations by name.
DECLARATIONS: dict[str, dict[str, Any]] = {name: tool.declaration for name, tool in BUILTIN.items()}


def acp_kind(name: str) -> str:
    """The ACP tool kind of a call of `name` (other for MCP tools and unknown names)."""
    tool = BUILTIN.get(name)
    return tool.acp_kind if tool is not None else "other"
