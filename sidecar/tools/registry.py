"""The tool registry: declarations for Gemini, planning (arguments, confinement, diffs), confirmation rules, running."""

from __future__ import annotations

import copy
import logging
import os
import re
import threading
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from sidecar.core.compaction import format_truncated_tool_output
from sidecar.core.jsonlen import utf16_len
from sidecar.tools import files, protected, safe_io
from sidecar.tools.declarations import DECLARATIONS, DEFAULT_SHELL_TIMEOUT, SHELL_TOOL, check_args
from sidecar.tools.edits import (
    ApplyEdit,
    EditorBuffers,
    EditorText,
    EditPlan,
    apply_edit_plan,
    plan_replace,
    plan_write,
)
from sidecar.tools.paths import ToolError, Workspace
from sidecar.tools.shell import run_shell

__all__ = [
    "ExtraTools",
    "FileWatch",
    "Kind",
    "ToolPlan",
    "ToolRegistry",
    "ToolResult",
    "allow_always_key",
    "needs_confirmation",
]

log = logging.getLogger(__name__)

Kind = Literal["read", "edit", "shell", "mcp"]
SaveOutput = Callable[[str, str], "str | os.PathLike[str]"]

KINDS: dict[str, Kind] = {
    "read_file": "read",
    "list_directory": "read",
    "glob": "read",
    "search_text": "read",
    "write_file": "edit",
    "replace": "edit",
    SHELL_TOOL: "shell",
}


@dataclass(frozen=True)
class ToolPlan:
    """A validated tool call, ready to confirm and run — or refused (`error`), in which case nothing runs."""

    name: str
    args: dict[str, Any]
    kind: Kind
    description: str  # one line for the UI
    diff: str | None = None  # edits: unified diff of the change
    error: str | None = None  # why the call is refused; sent to the model as {"error": ...}
    edit: dict[str, Any] | None = None  # edits: the LSP WorkspaceEdit for workspace/applyEdit
    allow_key: str | None = None  # what an "always allow" answer adds to always_allowed
    payload: Any = field(default=None, repr=False, compare=False)
    #: Why this call asks in every mode but yolo, whatever was allowed always (a protected path, a hard link).
    ask_reason: str | None = None
    #: MCP tools: what an "allow always for this server" answer adds to always_allowed, and the server's name.
    server_key: str | None = None
    server: str | None = None
    #: Extra tools' own confirmation rule: (approval mode, always_allowed) -> ask?
    confirm: Callable[[str, AbstractSet[str]], bool] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced: the functionResponse.response for the model and a one-line summary."""

    ok: bool
    response: dict[str, str]  # {"output": ...} or {"error": ...}
    summary: str
    saved_output: Path | None = None  # where the full shell output went when the model got a shortened form
    media: list[Any] = field(default_factory=list)  # MCP: inline data Parts sent after the functionResponse


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
    def after_shell(self, watch: Any) -> None: ...


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


def _one_line(text: str, limit: int | None = 200) -> str:
    flat = " ⏎ ".join(part.strip() for part in text.strip().splitlines() if part.strip())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class _Search:
    roots: list[Path]
    where: str


class ToolRegistry:
    """The agent's tools over the workspace folders (a list, or a callable returning the current list).

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

    # -- declarations ---------------------------------------------------------------------------------
    def declarations(self, trusted: bool) -> list[dict[str, Any]]:
        """The `tools` value of a Gemini request; without run_shell_command when the workspace is untrusted."""
        decls = [copy.deepcopy(d) for name, d in DECLARATIONS.items() if trusted or name != SHELL_TOOL]
        if self.extra is not None:
            decls += self.extra.declarations()
        return [{"functionDeclarations": decls}]

    # -- planning -------------------------------------------------------------------------------------
    def plan(self, name: str, args: Any, *, trusted: bool) -> ToolPlan:
        """Check a function call: arguments, paths, trust, and for edits the change itself. Never raises."""
        raw = dict(args) if isinstance(args, dict) else {}
        kind = KINDS.get(name)
        if kind is None and self.extra is not None:
            extra = self.extra.plan(name, args)
            if extra is not None:
                return extra
        if kind is None:
            known = ", ".join(n for n in KINDS if trusted or n != SHELL_TOOL)
            return ToolPlan(name, raw, "read", f"Unknown tool {name}", error=f"Unknown tool {name!r}. Tools: {known}.")
        if name == SHELL_TOOL and not trusted:
            error = (
                "run_shell_command is not available because the workspace is not trusted. Use the file tools "
                "instead, or ask the user to trust the workspace."
            )
            return ToolPlan(name, raw, kind, "Run a shell command (refused: untrusted workspace)", error=error)
        clean, problem = check_args(name, args)
        if problem is not None:
            return ToolPlan(name, raw, kind, f"{name} with invalid arguments", error=problem)
        try:
            planner = getattr(self, f"_plan_{name}")
            plan: ToolPlan = planner(clean)
        except ToolError as exc:
            return ToolPlan(name, clean, kind, f"{name} refused", error=str(exc))
        except Exception as exc:  # a bug or an odd file system: the model still gets an answer
            log.exception("planning %s failed", name)
            return ToolPlan(name, clean, kind, f"{name} failed", error=f"{name} failed unexpectedly: {exc!r}")
        return plan

    async def plan_async(self, name: str, args: Any, *, trusted: bool) -> ToolPlan:
        """`plan` off the event loop (it reads files), with a deadline; never raises."""
        try:
            return await safe_io.off_loop(
                lambda: self.plan(name, args, trusted=trusted), seconds=safe_io.PLAN_SECONDS, what=f"Planning {name}"
            )
        except ToolError as exc:
            raw = dict(args) if isinstance(args, dict) else {}
            return ToolPlan(name, raw, KINDS.get(name, "read"), f"{name} failed", error=str(exc))

    def _search_roots(self, directory: str | None) -> _Search:
        if directory is not None:
            root = self.workspace.resolve(directory, what="directory")
            if not root.is_dir():
                raise ToolError(f"{self.workspace.display(root)} is not a directory.")
            return _Search([root], self.workspace.display(root))
        roots = self.workspace.roots()
        if not roots:
            raise ToolError("No workspace folder is open, so there is nothing to search.")
        return _Search(roots, ", ".join(self.workspace.display(r) for r in roots))

    def _plan_read_file(self, args: dict[str, Any]) -> ToolPlan:
        path = self.workspace.resolve_readable(args["path"])  # saved tool outputs too
        start, end = args.get("start_line"), args.get("end_line")
        if start is not None and end is not None and end < start:
            raise ToolError(f"end_line ({end}) is before start_line ({start}).")
        shown = self.workspace.display(path)
        lines = f" (lines {start or 1}–{end or 'end'})" if start or end else ""
        return ToolPlan("read_file", args, "read", f"Read {shown}{lines}", payload=(path, shown, start, end))

    def _plan_list_directory(self, args: dict[str, Any]) -> ToolPlan:
        path = self.workspace.resolve(args.get("path", "."))
        ignored = bool(args.get("include_ignored", False))
        return ToolPlan("list_directory", args, "read", f"List {self.workspace.display(path)}", payload=(path, ignored))

    def _plan_glob(self, args: dict[str, Any]) -> ToolPlan:
        files.compile_glob(args["pattern"])  # refuse a bad pattern now
        search = self._search_roots(args.get("directory"))
        description = f"Find files matching {args['pattern']} in {search.where}"
        return ToolPlan("glob", args, "read", description, payload=search)

    def _plan_search_text(self, args: dict[str, Any]) -> ToolPlan:
        try:
            re.compile(args["pattern"], re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as exc:
            raise ToolError(f"Invalid regular expression {args['pattern']!r}: {exc}.") from None
        if args.get("include") is not None:
            files.compile_glob(args["include"])
        search = self._search_roots(args.get("directory"))
        return ToolPlan("search_text", args, "read", f"Search /{args['pattern']}/ in {search.where}", payload=search)

    def _edit_plan(self, name: str, args: dict[str, Any], edit: EditPlan) -> ToolPlan:
        why = self.edit_ask_reason(args["path"], edit.path)
        description = edit.description if why is None else f"{edit.description}. Asks every time: {why}."
        return ToolPlan(name, args, "edit", description, edit.diff, None, edit.edit, name, edit, ask_reason=why)

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

    def _plan_write_file(self, args: dict[str, Any]) -> ToolPlan:
        path = self.workspace.resolve(args["path"])
        edit = plan_write(path, self.workspace.display(path), args["content"], self.buffers)
        return self._edit_plan("write_file", args, edit)

    def _plan_replace(self, args: dict[str, Any]) -> ToolPlan:
        path = self.workspace.resolve(args["path"])
        expected = args.get("expected_replacements", 1)
        shown = self.workspace.display(path)
        edit = plan_replace(path, shown, args["old_string"], args["new_string"], expected, self.buffers)
        return self._edit_plan("replace", args, edit)

    def _plan_run_shell_command(self, args: dict[str, Any]) -> ToolPlan:
        command = args["command"]
        if not command.strip():
            raise ToolError("The command is empty.")
        cwd = self.workspace.resolve(args.get("directory", "."), what="directory")
        if not cwd.is_dir():
            raise ToolError(f"{self.workspace.display(cwd)} is not an existing directory.")
        timeout = args.get("timeout_seconds", DEFAULT_SHELL_TIMEOUT)
        shown = self.workspace.display(cwd)
        description = f"Run `{_one_line(command, None)}` in {shown}"  # the whole command: the user approves it
        key = f"{SHELL_TOOL}:{command.strip()}"
        return ToolPlan(SHELL_TOOL, args, "shell", description, allow_key=key, payload=(command, cwd, shown, timeout))

    # -- running --------------------------------------------------------------------------------------
    async def run(self, plan: ToolPlan, *, apply_edit: ApplyEdit | None) -> ToolResult:
        """Run a plan. A refused plan gives its error back. Failures come back as ok=False results, never raised;
        cancellation (CancelledError) is raised once a running command's process group has been stopped.

        apply_edit sends a WorkspaceEdit to the editor (workspace/applyEdit) and returns (applied, failure
        reason); None means the editor cannot, and edits are written to disk.
        """
        if plan.error is not None:
            return ToolResult(False, {"error": plan.error}, f"{plan.name} refused: {_one_line(plan.error, 160)}")
        try:
            if plan.kind == "edit":
                return await self._run_edit(plan, apply_edit)
            if plan.kind == "shell":
                return await self._run_shell(plan)
            if plan.kind == "mcp" and self.extra is not None:
                return await self.extra.run(plan, self._output_threshold(), self._save_output)
            return await self._run_read(plan)
        except ToolError as exc:
            return ToolResult(False, {"error": str(exc)}, f"{plan.name} failed: {_one_line(str(exc), 160)}")
        except Exception as exc:
            log.exception("running %s failed", plan.name)
            message = f"{plan.name} failed unexpectedly: {exc!r}"
            return ToolResult(False, {"error": message}, _one_line(message, 200))

    async def _run_read(self, plan: ToolPlan) -> ToolResult:
        stop = threading.Event()
        job: Callable[[], files.Outcome]
        if plan.name == "read_file":
            path, shown, start, end = plan.payload
            job = lambda: files.read_file(path, shown, start, end, self.buffers.text(path))  # noqa: E731
        elif plan.name == "list_directory":
            path, ignored = plan.payload
            job = lambda: files.list_directory(self.workspace, path, ignored)  # noqa: E731
        elif plan.name == "glob":
            roots, ignored = plan.payload.roots, bool(plan.args.get("include_ignored", False))
            job = lambda: files.glob_files(self.workspace, roots, plan.args["pattern"], ignored, stop)  # noqa: E731
        else:
            regex = re.compile(plan.args["pattern"], re.IGNORECASE if plan.args.get("ignore_case") else 0)
            include = files.compile_glob(plan.args["include"]) if plan.args.get("include") is not None else None
            roots, unsaved = plan.payload.roots, self.buffers.unsaved()
            job = lambda: files.search_text(self.workspace, roots, regex, include, stop, unsaved)  # noqa: E731
        outcome = await safe_io.off_loop(job, seconds=safe_io.RUN_SECONDS, what=plan.description, stop=stop)
        return ToolResult(True, {"output": outcome.output}, outcome.summary)

    async def _run_edit(self, plan: ToolPlan, apply_edit: ApplyEdit | None) -> ToolResult:
        edit: EditPlan = plan.payload
        if self.workspace.resolve(str(edit.path)) != edit.path:  # a symlink appeared since planning
            raise ToolError(f"{edit.shown} now resolves to another file; the edit was not applied.")
        saved = await self.watch.before_edit(edit, plan.name) if self.watch is not None else None
        summary = await apply_edit_plan(edit, self.buffers, apply_edit)
        if saved is not None and self.watch is not None:
            self.watch.edited(saved)
        return ToolResult(True, {"output": summary + "."}, summary)

    async def _run_shell(self, plan: ToolPlan) -> ToolResult:
        command, cwd, shown, timeout = plan.payload
        if self.workspace.resolve(str(cwd), what="directory") != cwd:
            raise ToolError(f"{shown} now resolves to another directory; the command was not run.")
        buffers = await safe_io.off_loop(self.buffers.unsaved, seconds=safe_io.PLAN_SECONDS, what="Reading buffers")
        unsaved = sorted(self.workspace.display(Path(p)) for p in buffers)
        watch = self.watch
        before = await watch.before_shell(command, cwd, self.workspace, plan.name) if watch is not None else None
        try:
            run = await run_shell(command, cwd, timeout)
        finally:
            if before is not None and watch is not None:
                watch.after_shell(before)
        body = run.output or "(no output)"
        threshold = max(0, self._output_threshold())
        saved: Path | None = None
        if utf16_len(body) > threshold:
            try:
                saved = Path(self._save_output(body, SHELL_TOOL))
                where = str(saved)
            except Exception as exc:
                where = f"(the full output could not be saved: {exc})"
            body = format_truncated_tool_output(body, where, threshold)
        lines = [f"Command: {command}", f"Directory: {shown}"]
        short = _one_line(command, 120)
        if run.timed_out:
            lines.append(f"Timed out after {timeout} s; the command and its process group were stopped.")
            summary = f"Timed out after {timeout} s: {short}"
        elif run.exit_code is not None:
            lines.append(f"Exit code: {run.exit_code}")
            summary = f"Exit code {run.exit_code}: {short}"
        else:
            lines.append(f"Ended by signal: {run.signal_name}")
            summary = f"Ended by {run.signal_name}: {short}"
        if run.stopped_leftovers:
            lines.append("Processes it left running (e.g. started with &) were stopped when it finished.")
        if run.output_held:
            lines.append("A process outside its process group kept the output open; later output is missing.")
        if unsaved:
            lines.append(
                f"Note: unsaved editor changes to {', '.join(unsaved)} are not on disk yet; the command saw the "
                "saved versions."
            )
        text = "\n".join(lines) + "\nOutput:\n" + body
        return ToolResult(not run.timed_out, {"error" if run.timed_out else "output": text}, summary, saved)
