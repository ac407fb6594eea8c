"""The tool registry: {name: Tool}, built-in and MCP; declarations for Gemini, planning, confirmation rules, running."""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any, Protocol

from sidecar.tools import protected, safe_io
from sidecar.tools.builtin import BUILTIN
from sidecar.tools.declarations import check_args
from sidecar.tools.edits import ApplyEdit, EditorBuffers, EditorText, EditPlan
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.tool import (
    AgentState,
    EarlierResult,
    Kind,
    ResultsInView,
    SaveOutput,
    Tool,
    ToolContext,
    ToolPlan,
    ToolResult,
    one_line,
)

__all__ = [
    "ExtraTools",
    "FileWatch",
    "Kind",
    "SaveOutput",
    "ToolPlan",
    "ToolRegistry",
    "ToolResult",
    "allow_always_key",
    "needs_confirmation",
]

log = logging.getLogger(__name__)


class ExtraTools(Protocol):
    """Tools from outside the registry (the MCP servers' tools, sidecar/mcp/gate.py): declared after the built-in
    ones, planned by name (None: not one of theirs), run by kind "mcp"."""

    def declarations(self) -> list[dict[str, Any]]: ...
    def plan(self, name: str, args: Any) -> ToolPlan | None: ...
    async def run(self, plan: ToolPlan, threshold: int, save_output: SaveOutput) -> ToolResult: ...


class FileWatch(Protocol):
    """Checkpoints (sidecar/checkpoints/capture.py): told before and after every edit and shell command the
    registry runs, in every approval mode and for both front-ends, so the files can be put back on a rewind."""

    async def before_edit(self, plan: EditPlan, tool: str) -> Any: ...
    def edited(self, saved: Any) -> None: ...
    async def before_shell(self, command: str, cwd: Path, workspace: Workspace, tool: str) -> Any: ...
    async def after_shell(self, watch: Any) -> None: ...


def needs_confirmation(plan: ToolPlan, approval_mode: str, always_allowed: AbstractSet[str]) -> bool:
    """default: edits and shell ask; autoEdit: shell asks; yolo: nothing asks. Reads and refused plans never ask.
    A plan with an `ask_reason` (a protected path, a file with several hard links) asks in every mode but yolo,
    and "allow always" never covers it.

    An unknown mode counts as default. `always_allowed` holds tool names (allow every call of the tool) and
    allow keys (ToolPlan.allow_key: the tool name for edits, "run_shell_command:<exact command>" for shell).
    """
    if plan.error is not None or plan.kind == "read" or approval_mode == "yolo":
        return False
    if plan.ask_reason is not None:
        return True
    if plan.confirm is not None:  # MCP servers' tools (sidecar/mcp/gate.py)
        return plan.confirm(approval_mode, always_allowed)
    if plan.kind == "edit" and approval_mode == "autoEdit":
        return False
    return plan.name not in always_allowed and plan.allow_key not in always_allowed


def allow_always_key(plan: ToolPlan) -> str | None:
    """What an "allow always" answer to this plan's question adds to always_allowed; None: nothing (it counts
    as "allow" once), for a plan with an ask_reason."""
    return None if plan.ask_reason is not None else plan.allow_key or plan.name


class ExtraTool(Tool[Any]):
    """One tool of the extra tools (an MCP server's), in the registry like the built-in ones."""

    kind = "mcp"

    def __init__(self, declaration: dict[str, Any], extra: ExtraTools) -> None:
        self.declaration = declaration  # type: ignore[misc]
        self._extra = extra

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[Any]:
        plan = self._extra.plan(self.name, args)
        if plan is None:  # gone since it was listed (its server stopped)
            raise ToolError(f"{self.name} is no longer offered by its MCP server.")
        return plan

    async def run(self, plan: ToolPlan[Any], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        return await self._extra.run(plan, context.output_threshold(), context.save_output)


class ToolRegistry:
    """The agent's tools over the workspace (or its folders: a list, or a callable returning the current list):
    the built-in tools (sidecar/tools/builtin/) and the extra ones (the MCP servers'), all through Tool.

    save_output(text, tool_name) stores a full shell output and returns its path; output_threshold() gives
    the characters a shell output may have before the model gets the shortened form. editor_text(path), if
    given, returns an open editor buffer's current text (unsaved changes included) or None.
    """

    def __init__(
        self,
        workspace: Workspace | Sequence[str] | Callable[[], Sequence[str]],
        buffers: EditorBuffers | None = None,
        *,
        save_output: SaveOutput,
        output_threshold: Callable[[], int],
        editor_text: EditorText | None = None,
        saved_outputs: Callable[[], Path | None] | None = None,
        extra: ExtraTools | None = None,
        watch: FileWatch | None = None,
        results_in_view: ResultsInView | None = None,
        agent: AgentState | None = None,
    ) -> None:
        #: The workspace folders (shared with the checkpoints, which restore what the tools see).
        self.workspace = workspace if isinstance(workspace, Workspace) else Workspace(workspace, saved_outputs)
        self.buffers = buffers if buffers is not None else EditorBuffers(editor_text)
        self._save_output = save_output
        self._output_threshold = output_threshold
        #: The MCP servers' tools (sidecar/mcp/gate.py), when the composition root wires them in.
        self.extra = extra
        #: Checkpoints of the files edits and shell commands change (sidecar/checkpoints/), when wired in.
        self.watch = watch
        #: Which earlier results the model still sees verbatim (the live conversation, when wired in).
        self._results_in_view = results_in_view
        #: The memory files and the todo list the model's own tools change (None: those tools refuse in words).
        self.agent = agent

    # -- the ToolContext the tools plan and run with ---------------------------------------------------
    def output_threshold(self) -> int:
        """The characters a shell output may have before the model gets the shortened form."""
        return self._output_threshold()

    def save_output(self, text: str, tool: str) -> str | os.PathLike[str]:
        """Store a full output; its path."""
        return self._save_output(text, tool)

    def results_in_view(self, tool: str) -> list[EarlierResult]:
        """`tool`'s calls whose results are still verbatim in the current request, newest first."""
        return self._results_in_view(tool) if self._results_in_view is not None else []

    # -- the tools ------------------------------------------------------------------------------------
    def tool(self, name: str) -> Tool[Any] | None:
        """The tool called `name`: a built-in one, else an MCP server's (None: no such tool)."""
        builtin = BUILTIN.get(name)
        if builtin is not None or self.extra is None:
            return builtin
        for declaration in self.extra.declarations():
            if declaration.get("name") == name:
                return ExtraTool(declaration, self.extra)
        return None

    def declarations(self, trusted: bool) -> list[dict[str, Any]]:
        """The `tools` value of a Gemini request; without run_shell_command when the workspace is untrusted."""
        decls = [copy.deepcopy(tool.declaration) for tool in BUILTIN.values() if trusted or not tool.trusted_only]
        if self.extra is not None:
            decls += self.extra.declarations()
        return [{"functionDeclarations": decls}]

    # -- planning -------------------------------------------------------------------------------------
    def plan(self, name: str, args: Any, *, trusted: bool) -> ToolPlan[Any]:
        """Check a function call: arguments, paths, trust, and for edits the change itself. Never raises."""
        raw = dict(args) if isinstance(args, dict) else {}
        if name not in BUILTIN and self.extra is not None:
            extra = self.extra.plan(name, args)
            if extra is not None:
                return extra
        tool = BUILTIN.get(name)
        if tool is None:
            known = ", ".join(n for n, t in BUILTIN.items() if trusted or not t.trusted_only)
            return ToolPlan(name, raw, "read", f"Unknown tool {name}", error=f"Unknown tool {name!r}. Tools: {known}.")
        kind = tool.kind
        if tool.trusted_only and not trusted:
            error = (
                f"{name} is not available because the workspace is not trusted. Use the file tools "
                "instead, or ask the user to trust the workspace."
            )
            return ToolPlan(name, raw, kind, "Run a shell command (refused: untrusted workspace)", error=error)
        clean, problem = check_args(tool.declaration, args)
        if problem is not None:
            return ToolPlan(name, raw, kind, f"{name} with invalid arguments", error=problem)
        try:
            return tool.plan(clean, self)
        except ToolError as exc:
            return ToolPlan(name, clean, kind, f"{name} refused", error=str(exc))
        except Exception as exc:  # a bug or an odd file system: the model still gets an answer
            log.exception("planning %s failed", name)
            return ToolPlan(name, clean, kind, f"{name} failed", error=f"{name} failed unexpectedly: {exc!r}")

    async def plan_async(self, name: str, args: Any, *, trusted: bool) -> ToolPlan[Any]:
        """`plan` off the event loop (it reads files), with a deadline; never raises."""
        try:
            return await safe_io.off_loop(
                lambda: self.plan(name, args, trusted=trusted), seconds=safe_io.PLAN_SECONDS, what=f"Planning {name}"
            )
        except ToolError as exc:
            raw = dict(args) if isinstance(args, dict) else {}
            tool = BUILTIN.get(name)
            return ToolPlan(name, raw, tool.kind if tool is not None else "read", f"{name} failed", error=str(exc))

    def edit_ask_reason(self, raw: str, path: Path) -> str | None:
        """Why an edit of `path` (written `raw`) asks in every mode but yolo: a protected path, or a file with
        more than one hard link (its other names may be outside the workspace). None: the usual rules apply."""
        why = protected.why_protected([self.workspace.written(raw), path], self.workspace.roots())
        if why is not None:
            return why
        links = safe_io.link_count(path)
        if links > 1:
            return (
                f"this file has {links} hard links: the edit also changes it under its other names, which may be "
                "outside the workspace"
            )
        return None

    # -- running --------------------------------------------------------------------------------------
    async def run(self, plan: ToolPlan[Any], *, apply_edit: ApplyEdit | None) -> ToolResult:
        """Run a plan. A refused plan gives its error back. Failures come back as ok=False results, never raised;
        cancellation (CancelledError) is raised once a running command's process group has been stopped.

        apply_edit sends a WorkspaceEdit to the editor (workspace/applyEdit) and returns (applied, failure
        reason); None means the editor cannot, and edits are written to disk.
        """
        if plan.error is not None:
            return ToolResult(False, {"error": plan.error}, f"{plan.name} refused: {one_line(plan.error, 160)}")
        try:
            tool = BUILTIN.get(plan.name) if plan.kind != "mcp" else None
            if plan.kind == "mcp" and self.extra is not None:
                return await self.extra.run(plan, self._output_threshold(), self._save_output)
            if tool is None:
                raise ToolError(f"Unknown tool {plan.name!r}.")
            return await tool.run(plan, self, apply_edit)
        except ToolError as exc:
            return ToolResult(False, {"error": str(exc)}, f"{plan.name} failed: {one_line(str(exc), 160)}")
        except Exception as exc:
            log.exception("running %s failed", plan.name)
            message = f"{plan.name} failed unexpectedly: {exc!r}"
            return ToolResult(False, {"error": message}, one_line(message, 200))
