"""Running the model's function calls: plan, confirm with the user, run, report — every call gets a response."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sidecar.core.history import FunctionCall, FunctionResponse, Part
from sidecar.protocol.tools import ConfirmToolCallParams, ToolCallParams, ToolCallStatus, ToolDecision
from sidecar.session import Session
from sidecar.tools import ToolPlan, ToolRegistry, ToolResult, allow_always_key, needs_confirmation
from sidecar.tools.edits import ApplyEdit
from sidecar.tools.tool import one_line

log = logging.getLogger(__name__)

DENIED = "The user denied this tool call. Do not retry it; ask the user how to proceed."
CANCELLED = "The tool call was cancelled by the user before it finished."


class CallsCancelled(asyncio.CancelledError):
    """The turn was cancelled while its tool calls ran: `answered` holds one response per call (the unfinished ones
    answer that they were cancelled), so the history can stay valid. Propagates as a cancellation."""

    def __init__(self, answered: list[Part], *args: object) -> None:
        super().__init__(*args)
        self.answered = answered


class ToolHost(Protocol):
    """The front-end's side of tool calls (sidecar.rpc.editor.ToolHost, sidecar.acp.tools.AcpToolHost): it is
    given each call's plan, so it can show what the call does and where, and choose how an edit is applied."""

    async def before_plan(self, paths: list[Path]) -> None:
        """Before a call that reads or edits these files is planned: fetch what the editor holds of them."""

    def after_call(self) -> None:
        """The call is answered: forget what before_plan fetched."""

    def tool_call(self, notice: ToolCallParams, plan: ToolPlan | None, result: ToolResult | None = None) -> None:
        """A call's status changed: show it (`plan`: what the call does, when it was planned; `result`: what the
        call gave, once it ran)."""

    async def confirm(self, request: ConfirmToolCallParams, plan: ToolPlan | None = None) -> ToolDecision:
        """Ask the user whether the call may run."""

    def apply_edit(self, plan: ToolPlan | None = None) -> ApplyEdit | None:
        """How the edit of `plan` (None: a rewind's) is applied through the editor (None: the registry writes the
        files itself)."""


@dataclass
class ToolRunner:
    """Plans, confirms and runs the model's tool calls; the approval mode, trust and "allow always" answers are
    read from the session."""

    registry: ToolRegistry
    host: ToolHost
    session: Session
    #: Given the paths a tool touched, the context files to append to its result ("" for none).
    context_files: Callable[[list[str]], Awaitable[str]] | None = None

    def __post_init__(self) -> None:
        self._media: dict[str, list[Part]] = {}
        #: call id -> the title each call was shown with (its plan's description), until take_titles().
        self._titles: dict[str, str] = {}

    def take_titles(self) -> dict[str, str]:
        """The titles the calls answered since the last take were shown with, by call id (recorded with the
        responses, so a replay shows the same words)."""
        titles, self._titles = self._titles, {}
        return titles

    @property
    def always_allowed(self) -> set[str]:
        """The tools / allow keys the user answered "allow always" for (kept in the session)."""
        return self.session.always_allowed

    def declarations(self) -> list[dict[str, Any]]:
        """The tool declarations to send, as the workspace's trust allows."""
        return self.registry.declarations(self.session.trusted)

    async def answer(self, turn_id: str, calls: list[FunctionCall]) -> list[Part]:
        """One functionResponse part per call, in order. On cancellation the unanswered calls are answered
        with a cancellation error and CallsCancelled (a CancelledError) carries all the answers."""
        answered: list[Part] = []
        for index, call in enumerate(calls):
            call_id = call.id or f"{turn_id}-call-{index + 1}"
            try:
                part = await self._one(turn_id, call_id, call)
            except asyncio.CancelledError as exc:
                for pending in calls[index:]:
                    answered.append(_response(pending, {"error": CANCELLED}))
                    self._notify(turn_id, pending.id or call_id, pending, "cancelled", "Cancelled")
                self._media.pop(turn_id, None)
                raise CallsCancelled(answered, *exc.args) from exc
            answered.append(part)
        # Media a tool returned (MCP images, audio) follow all the responses, in the same user turn.
        return answered + self._media.pop(turn_id, [])

    async def _one(self, turn_id: str, call_id: str, call: FunctionCall) -> Part:
        name, args = call.name or "", call.args or {}
        await self.host.before_plan(self._buffer_paths(name, args))
        try:
            return await self._planned(turn_id, call_id, call)
        finally:
            self.host.after_call()

    async def read_back(self, raw: str) -> tuple[str, str | None, str]:
        """A file's current text as read_file shows it (the editor's buffer first; the workspace, ignore and
        protection rules read_file applies), for the working set after a compaction: no confirmation, no notice.
        (shown path, text or None, why not)."""
        args = {"path": raw, "force": True}
        await self.host.before_plan(self._buffer_paths("read_file", args))
        try:
            plan = await self.registry.plan_async("read_file", args, trusted=self.session.trusted)
            shown = plan.payload.shown if plan.error is None and plan.payload is not None else raw
            result = await self.registry.run(plan, apply_edit=None)
        finally:
            self.host.after_call()
        output = result.response.get("output")
        if not result.ok or output is None:
            return shown, None, one_line(result.response.get("error") or result.summary, 160)
        return shown, output, ""

    def _buffer_paths(self, name: str, args: dict[str, Any]) -> list[Path]:
        raw, tool = args.get("path"), self.registry.tool(name)
        if tool is None or not tool.reads_buffer or not isinstance(raw, str):
            return []
        try:
            return [self.registry.workspace.resolve(raw)]
        except Exception as exc:  # outside the workspace and the like: planning will say so
            log.debug("no buffer for %r: %s", raw, exc)
            return []

    async def _planned(self, turn_id: str, call_id: str, call: FunctionCall) -> Part:
        name, args = call.name or "", call.args or {}
        plan = await self.registry.plan_async(name, args, trusted=self.session.trusted)
        self._titles[call_id] = valid_text(plan.description)
        self._notify(turn_id, call_id, call, "pending", plan.description, plan)
        if plan.error is not None:
            self._notify(turn_id, call_id, call, "error", plan.error)
            return _response(call, {"error": plan.error})
        if needs_confirmation(plan, self.session.settings.approval_mode, self.always_allowed):
            decision = await self._ask(turn_id, call_id, plan)
            if decision == "deny":
                self._notify(turn_id, call_id, call, "denied", "Denied by the user")
                return _response(call, {"error": DENIED})
            if decision in ("allowAlways", "allowAlwaysServer") and (key := allow_always_key(plan)) is not None:
                # never a protected path; MCP "this server": every tool of the server (other tools: as allowAlways)
                self.always_allowed.add(plan.server_key or key if decision == "allowAlwaysServer" else key)
        self._notify(turn_id, call_id, call, "running", plan.description)
        result = await self._run(plan)
        if result.media:
            self._media.setdefault(turn_id, []).extend(result.media)
        self._notify(turn_id, call_id, call, "done" if result.ok else "error", result.summary, plan, result)
        tool = self.registry.tool(name)
        if tool is not None and tool.tracks_path and result.ok:
            self._track(str(args.get("path", "")))
        response = result.response
        if tool is not None and tool.brings_context_files and result.ok and self.context_files is not None:
            response = await self._with_context_files(args, response)
        return _response(call, response)

    async def _with_context_files(self, args: dict[str, Any], response: dict[str, str]) -> dict[str, str]:
        """The response with the context files newly found between the tool's path and the project root."""
        raw = args.get("path")
        if not isinstance(raw, str) or not raw or self.context_files is None:
            return response
        try:
            path = str(self.registry.workspace.resolve(raw))
        except Exception:
            return response
        block = await self.context_files([path])
        if not block:
            return response
        return {**response, "output": response.get("output", "") + block}

    async def _ask(self, turn_id: str, call_id: str, plan: ToolPlan) -> ToolDecision:
        request = ConfirmToolCallParams(
            turn_id=turn_id,
            call_id=call_id,
            tool_name=plan.name,
            args=plan.args,
            description=plan.description,
            diff=plan.diff,
            mcp_server=plan.server,
            ask_reason=plan.ask_reason,
        )
        try:
            return await self.host.confirm(request, plan)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the editor could not ask: safest is no
            log.warning("confirmation for %s failed (%s); treating it as denied", plan.name, exc)
            return "deny"

    async def _run(self, plan: ToolPlan) -> ToolResult:
        return await self.registry.run(plan, apply_edit=self.host.apply_edit(plan))

    def _track(self, raw: str) -> None:
        try:
            # A later change on disk outside the editor will be reported in the next context turn.
            self.session.ide.track(str(self.registry.workspace.resolve(raw)))
        except Exception:
            log.debug("not tracking %r", raw)

    def _notify(
        self,
        turn_id: str,
        call_id: str,
        call: FunctionCall,
        status: ToolCallStatus,
        summary: str,
        plan: ToolPlan | None = None,
        result: ToolResult | None = None,
    ) -> None:
        self.host.tool_call(
            ToolCallParams(
                turn_id=turn_id,
                call_id=call_id,
                name=call.name or "",
                args=call.args or {},
                status=status,
                summary=valid_text(summary),
            ),
            plan,
            result,
        )


def _response(call: FunctionCall, response: dict[str, Any]) -> Part:
    clean = {key: valid_text(value) if isinstance(value, str) else value for key, value in response.items()}
    return Part(function_response=FunctionResponse(name=call.name, id=call.id, response=clean))


def valid_text(text: str) -> str:
    r"""Text that can be recorded and sent: undecodable file-name bytes as \xNN, other lone surrogates as U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def decode_decision(result: Any) -> ToolDecision:
    """The client's answer to sidecar/confirmToolCall; anything unexpected counts as deny."""
    decision = result.get("decision") if isinstance(result, dict) else getattr(result, "decision", None)
    return decision if decision in ("allow", "allowAlways", "allowAlwaysServer", "deny") else "deny"
