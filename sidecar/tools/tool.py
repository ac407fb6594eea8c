"""What a tool is: its declaration and facts, a typed plan of one call, and the run of that plan (tools/builtin/)."""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, Protocol

from typing_extensions import TypeVar

from sidecar.tools.edits import ApplyEdit, EditorBuffers, EditPlan, apply_edit_plan
from sidecar.tools.paths import ToolError, Workspace

__all__ = [
    "AgentState",
    "EditTool",
    "Kind",
    "Payload",
    "SaveOutput",
    "Tool",
    "ToolContext",
    "ToolPlan",
    "ToolResult",
    "one_line",
]

#: What a call does, for the confirmation rules: reads never ask, edits ask unless autoEdit, shell asks, MCP: its own.
Kind = Literal["read", "edit", "shell", "mcp"]
SaveOutput = Callable[[str, str], "str | os.PathLike[str]"]
#: What a tool's plan carries from planning to running (a path, a search, an edit, a command).
Payload = TypeVar("Payload", default=Any)


@dataclass(frozen=True)
class ToolPlan(Generic[Payload]):
    """A validated tool call, ready to confirm and run — or refused (`error`), in which case nothing runs and
    `payload` is None."""

    name: str
    args: dict[str, Any]
    kind: Kind
    description: str  # one line for the UI
    diff: str | None = None  # edits: unified diff of the change
    error: str | None = None  # why the call is refused; sent to the model as {"error": ...}
    edit: dict[str, Any] | None = None  # edits: the LSP WorkspaceEdit for workspace/applyEdit
    allow_key: str | None = None  # what an "always allow" answer adds to always_allowed
    payload: Payload = field(default=None, repr=False, compare=False)  # type: ignore[assignment]
    #: Why this call asks in every mode but yolo, whatever was allowed always (a protected path, a hard link).
    ask_reason: str | None = None
    #: MCP tools: what an "allow always for this server" answer adds to always_allowed, and the server's name.
    server_key: str | None = None
    server: str | None = None
    #: Extra tools' own confirmation rule: (approval mode, always_allowed) -> ask?
    confirm: Callable[[str, AbstractSet[str]], bool] | None = field(default=None, repr=False, compare=False)

    @property
    def edit_plan(self) -> EditPlan | None:
        """The planned edit (the file before and after), for an edit tool's plan."""
        return self.payload if isinstance(self.payload, EditPlan) else None


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced: the functionResponse.response for the model and a one-line summary."""

    ok: bool
    response: dict[str, str]  # {"output": ...} or {"error": ...}
    summary: str
    saved_output: Path | None = None  # where the full shell output went when the model got a shortened form
    media: list[Any] = field(default_factory=list)  # MCP: inline data Parts sent after the functionResponse


@dataclass(frozen=True)
class EarlierResult:
    """A tool call whose result the model still sees verbatim in the current request: its id, arguments, output."""

    call_id: str
    args: dict[str, Any]
    output: str
    #: Where the model sees it, when not in a tool call's result (e.g. the files re-attached after a compaction).
    where: str = ""


#: A tool's name -> its calls whose results are still verbatim in the current request, newest first (the live
#: conversation answers: not compacted away, not cut, not masked).
ResultsInView = Callable[[str], "list[EarlierResult]"]


class AgentState(Protocol):
    """What the model's own tools change outside the workspace (sidecar/chat/model_state.py): the memory files
    (save_memory) and the session's todo list (write_todos)."""

    def memory_file(self, scope: str) -> Path:
        """The file a fact of `scope` (global, project) goes to; raises ToolError to refuse in words."""

    async def save_memory(self, fact: str, scope: str) -> Path:
        """Append `- <fact>` to the scope's file and reload the memory; the file. Raises ToolError."""

    def set_todos(self, items: list[Any]) -> None:
        """Replace the live session's todo list (recorded, shown to the user)."""


class ToolContext(Protocol):
    """What a tool plans and runs with (the registry): the workspace, the editor's buffers, the checkpoints, the
    agent's own state."""

    @property
    def workspace(self) -> Workspace: ...
    @property
    def buffers(self) -> EditorBuffers: ...
    @property
    def watch(self) -> Any: ...
    def output_threshold(self) -> int: ...
    def save_output(self, text: str, tool: str) -> str | os.PathLike[str]: ...
    def edit_ask_reason(self, raw: str, path: Path) -> str | None: ...
    def results_in_view(self, tool: str) -> list[EarlierResult]: ...
    @property
    def agent(self) -> AgentState | None: ...


class Tool(ABC, Generic[Payload]):
    """One tool the model may call. A subclass per file under tools/builtin/ says what the tool is; `plan` checks a
    call without side effects and never runs it; `run` does it. Arguments reach `plan` checked against
    `declaration` (types, required, unknown ones refused)."""

    #: The Gemini FunctionDeclaration (JSON Schema in `parametersJsonSchema`); its "name" is the tool's name.
    declaration: ClassVar[dict[str, Any]]
    kind: ClassVar[Kind]
    #: The ACP tool kind (read, edit, search, execute, other): the client picks icons and grouping from it.
    acp_kind: ClassVar[str] = "other"
    #: After a successful call, its `path` is watched: a change on disk outside the editor is reported next turn.
    tracks_path: ClassVar[bool] = False
    #: After a successful call, a subfolder's context files (GEMINI.md) not yet delivered join its result.
    brings_context_files: ClassVar[bool] = False
    #: Its `path` may be an editor buffer with unsaved changes: the front-end fetches it before planning.
    reads_buffer: ClassVar[bool] = False
    #: Offered only in a trusted workspace (run_shell_command).
    trusted_only: ClassVar[bool] = False

    @property
    def name(self) -> str:
        """The name the model calls it by."""
        return str(self.declaration["name"])

    @abstractmethod
    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[Payload]:
        """The call, checked: paths confined, the change computed; raises ToolError to refuse it in words."""

    @abstractmethod
    async def run(self, plan: ToolPlan[Payload], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        """Do what `plan` says; raises ToolError for a failure the model is told about."""


def one_line(text: str, limit: int | None = 200) -> str:
    """`text` on one line (⏎ between its lines), cut to `limit` characters."""
    flat = " ⏎ ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1] + "…"


class EditTool(Tool[EditPlan]):
    """A tool that changes one file (write_file, replace): asks unless autoEdit (every time for a protected path or
    a hard-linked file), goes through the editor when it can, and is checkpointed before it writes."""

    kind = "edit"
    acp_kind = "edit"
    tracks_path = True
    brings_context_files = True
    reads_buffer = True

    def edit_plan(self, args: dict[str, Any], context: ToolContext, edit: EditPlan) -> ToolPlan[EditPlan]:
        """The plan of `edit`, saying why it asks every time when it does."""
        why = context.edit_ask_reason(args["path"], edit.path)
        description = edit.description if why is None else f"{edit.description}. Asks every time: {why}."
        return ToolPlan(
            self.name, args, "edit", description, edit.diff, None, edit.edit, self.name, edit, ask_reason=why
        )

    async def run(self, plan: ToolPlan[EditPlan], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        edit = plan.payload
        if context.workspace.resolve(str(edit.path)) != edit.path:  # a symlink appeared since planning
            raise ToolError(f"{edit.shown} now resolves to another file; the edit was not applied.")
        watch = context.watch
        saved = await watch.before_edit(edit, plan.name) if watch is not None else None
        summary = await apply_edit_plan(edit, context.buffers, apply_edit)
        if saved is not None and watch is not None:
            watch.edited(saved)
        return ToolResult(True, {"output": summary + "."}, summary)
