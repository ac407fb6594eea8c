"""run_shell_command: one command (bash -c) in a workspace directory, in a trusted workspace, checkpointed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.core.compaction import format_truncated_tool_output
from sidecar.core.jsonlen import utf16_len
from sidecar.tools import safe_io
from sidecar.tools.declarations import (
    DEFAULT_SHELL_TIMEOUT,
    MAX_SHELL_TIMEOUT,
    PATH_NOTE,
    SHELL_TOOL,
    declare,
    integer,
    string,
)
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.paths import ToolError
from sidecar.tools.shell import run_shell
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult, one_line


@dataclass(frozen=True)
class Command:
    """The command line, where it runs (and how the plan shows it), and its deadline in seconds."""

    command: str
    cwd: Path
    shown: str
    timeout: int


class RunShellCommand(Tool[Command]):
    declaration = declare(
        SHELL_TOOL,
        "Run a shell command (bash -c) in a workspace directory, without input (stdin is empty). Returns the exit "
        "code and stdout and stderr combined. The command, and anything it starts in the background, is stopped "
        f"when it finishes, after timeout_seconds (default {DEFAULT_SHELL_TIMEOUT}) or when the user cancels. "
        "Long output is shortened to its start and end; the full output is saved to a file named in the result.",
        {
            "command": string("The command line, run with bash -c."),
            "directory": string(f"Working directory (default: the first workspace folder). {PATH_NOTE}"),
            "timeout_seconds": integer(
                f"Stop the command after this many seconds (default {DEFAULT_SHELL_TIMEOUT}).", 1, MAX_SHELL_TIMEOUT
            ),
        },
        ["command"],
    )
    kind = "shell"
    acp_kind = "execute"
    trusted_only = True

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[Command]:
        command = args["command"]
        if not command.strip():
            raise ToolError("The command is empty.")
        workspace = context.workspace
        cwd = workspace.resolve(args.get("directory", "."), what="directory")
        if not cwd.is_dir():
            raise ToolError(f"{workspace.display(cwd)} is not an existing directory.")
        timeout = args.get("timeout_seconds", DEFAULT_SHELL_TIMEOUT)
        shown = workspace.display(cwd)
        description = f"Run `{one_line(command, None)}` in {shown}"  # the whole command: the user approves it
        key = f"{SHELL_TOOL}:{command.strip()}"
        return ToolPlan(
            self.name, args, "shell", description, allow_key=key, payload=Command(command, cwd, shown, timeout)
        )

    async def run(self, plan: ToolPlan[Command], context: ToolContext, apply_edit: ApplyEdit | None) -> ToolResult:
        command, cwd, shown, timeout = plan.payload.command, plan.payload.cwd, plan.payload.shown, plan.payload.timeout
        workspace = context.workspace
        if workspace.resolve(str(cwd), what="directory") != cwd:
            raise ToolError(f"{shown} now resolves to another directory; the command was not run.")
        buffers = await safe_io.off_loop(context.buffers.unsaved, seconds=safe_io.PLAN_SECONDS, what="Reading buffers")
        unsaved = sorted(workspace.display(Path(p)) for p in buffers)
        watch = context.watch
        before = await watch.before_shell(command, cwd, workspace, plan.name) if watch is not None else None
        try:
            run = await run_shell(command, cwd, timeout)
        finally:
            if before is not None and watch is not None:
                await watch.after_shell(before)
        body = run.output or "(no output)"
        threshold = max(0, context.output_threshold())
        saved: Path | None = None
        if utf16_len(body) > threshold:
            try:
                saved = Path(context.save_output(body, SHELL_TOOL))
                where = str(saved)
            except Exception as exc:
                where = f"(the full output could not be saved: {exc})"
            body = format_truncated_tool_output(body, where, threshold)
        lines = [f"Command: {command}", f"Directory: {shown}"]
        short = one_line(command, 120)
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
