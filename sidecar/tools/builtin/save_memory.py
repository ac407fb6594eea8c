"""save_memory: the model adds a fact under `## Gemini Added Memories` in the global or project memory file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sidecar.core.memory_text import append_fact, sanitize_fact
from sidecar.tools.declarations import declare, string
from sidecar.tools.edits import ApplyEdit, unified_diff
from sidecar.tools.paths import ToolError
from sidecar.tools.safe_io import read_regular
from sidecar.tools.tool import Tool, ToolContext, ToolPlan, ToolResult, one_line

SCOPES = ("global", "project")


class SaveMemory(Tool[tuple[str, str, Path]]):
    declaration = declare(
        "save_memory",
        "Saves a short, self-contained fact or preference for all future sessions. Use it when the user asks you "
        "to remember something, or states a durable preference or fact about them or the project. Never for the "
        "state of the current task or temporary information. The user is asked before every save.",
        {
            "fact": string(
                "The fact or preference to remember, as one short self-contained statement (e.g. "
                '"The user prefers tabs over spaces").'
            ),
            "scope": {
                "type": "string",
                "enum": list(SCOPES),
                "description": "global (default): the user's preferences, every workspace; project: this workspace.",
            },
        },
        ["fact"],
    )
    kind = "edit"
    acp_kind = "edit"

    def plan(self, args: dict[str, Any], context: ToolContext) -> ToolPlan[tuple[str, str, Path]]:
        agent = context.agent
        if agent is None:
            raise ToolError("save_memory is not available in this session.")
        scope = args.get("scope", "global")
        if scope not in SCOPES:
            raise ToolError(f"'scope' must be global or project, got {str(scope)[:40]!r}.")
        fact = sanitize_fact(args["fact"])
        if not fact:
            raise ToolError('Parameter "fact" must be a non-empty string.')
        target = agent.memory_file(scope)
        before_bytes = read_regular(target, str(target), 4 * 1024 * 1024, "add to")
        before = before_bytes.decode("utf-8", "replace") if before_bytes is not None else None
        diff, _added, _removed = unified_diff(before, append_fact(before or "", fact), str(target))
        line = f"- {fact}"
        why = f"it adds the line {line!r} to the {scope} memory file {target}, which every later session reads"
        description = f"Save to {scope} memory: {one_line(line, 120)} (in {target})"
        return ToolPlan(
            self.name,
            args,
            "edit",
            f"{description}. Asks every time: {why}.",
            diff,
            payload=(fact, scope, target),
            ask_reason=why,
        )

    async def run(
        self, plan: ToolPlan[tuple[str, str, Path]], context: ToolContext, apply_edit: ApplyEdit | None
    ) -> ToolResult:
        agent = context.agent
        if agent is None:
            raise ToolError("save_memory is not available in this session.")
        fact, scope, _target = plan.payload
        target = await agent.save_memory(fact, scope)
        output = f'Okay, I\'ve remembered that: "{fact}" (added to {target}).'
        return ToolResult(True, {"output": output}, f"Saved to {scope} memory: {one_line(fact, 120)}")
