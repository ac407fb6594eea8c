"""The hooks of the current session: which run (trust, approval, matcher), their JSON, failures told once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from sidecar.config.settings import HOOK_EVENTS, Hooks, HookSpec
from sidecar.hooks.approval import HookApproval
from sidecar.hooks.output import HookOutput, combine, hook_context_text, read_output
from sidecar.hooks.process import HookRun, run_hook
from sidecar.session import Session

log = logging.getLogger(__name__)

Event = Literal["PreCompress", "BeforeAgent", "SessionStart"]
SessionSource = Literal["new", "resume", "compact"]


class SessionFile(Protocol):
    """Where the current session is recorded (sidecar.recording.recorder.Recorder)."""

    @property
    def path(self) -> Path | None:
        """The session file (None before the session is recorded)."""


def matches(spec: HookSpec, value: str | None) -> bool:
    """Lifecycle matchers are exact strings (PreCompress: the trigger, SessionStart: the source); empty, missing or
    "*" match everything, and an event without a value to match (BeforeAgent) runs every hook."""
    return value is None or spec.matcher in (None, "", "*") or spec.matcher == value


class HookService:
    """Runs the configured hooks of an event, one after another in configuration order (the editor's settings,
    the user file, then a trusted workspace file, as config/layers.py concatenates them).

    A workspace file's hooks run only after the user approved that list (`approval`; None where they never count,
    as in ACP). A hook that fails (cannot start, exits non-zero other than 2, times out) never stops the work: the
    log has its stderr and the user is told in words once per hook and kind of failure (`warn`). A hook's
    `systemMessage` is shown with `inform`."""

    def __init__(
        self,
        session: Session,
        recording: SessionFile,
        inform: Callable[[str], None],
        approval: HookApproval | None = None,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self._session = session
        self._recording = recording
        self._inform = inform
        self._warn = warn or inform
        self._approval = approval
        self._told: set[tuple[str, str, str]] = set()

    # -- the events ---------------------------------------------------------------------------------------------
    async def pre_compress(self, trigger: str) -> None:
        """Before a compaction (the Compactor's pre-compress step); advisory: its output is only shown."""
        await self._run("PreCompress", trigger, {"trigger": trigger})

    async def __call__(self, trigger: str) -> None:
        """The Compactor calls its pre-compress step as a plain callable."""
        await self.pre_compress(trigger)

    async def before_agent(self, prompt: str) -> HookOutput:
        """Before a user turn: whether to block it (and why), and context to add to it."""
        return await self._run("BeforeAgent", None, {"prompt": prompt})

    async def session_start_context(self, source: SessionSource) -> list[str]:
        """When a session's context turn is built (new, resume, after a compaction): the hooks' additionalContext,
        each wrapped as `<hook_context>…</hook_context>`, for the session context turn. A block is ignored."""
        outputs = await self._outputs("SessionStart", source, {"source": source})
        return [hook_context_text(o.additional_context) for o in outputs if o.additional_context]

    # -- running ------------------------------------------------------------------------------------------------
    async def _run(self, event: Event, value: str | None, extra: dict[str, Any]) -> HookOutput:
        return combine(await self._outputs(event, value, extra))

    async def _outputs(self, event: Event, value: str | None, extra: dict[str, Any]) -> list[HookOutput]:
        specs = [spec for spec in await self.runnable(event) if matches(spec, value)]
        if not specs:
            return []
        cwd = self._session.project_root
        session_id = self._session.conversation.session_id
        payload = {
            "session_id": session_id,
            "transcript_path": self.transcript_path(),
            "cwd": cwd,
            "hook_event_name": event,
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            **extra,
        }
        outputs = []
        for spec in specs:
            run = await run_hook(spec, payload, cwd=cwd, session_id=session_id)
            self._report(event, run)
            output = read_output(run)
            if output.system_message:
                self._inform(f"{event} hook `{spec.command}`: {output.system_message}")
            outputs.append(output)
        return outputs

    async def runnable(self, event: Event) -> list[HookSpec]:
        """The hooks of `event` that may run now: all of them, less a workspace file's until its list is approved.

        The settings concatenate each event's hooks with the workspace file's last (config/layers.py), so the
        workspace's are the tail of the list."""
        attribute = HOOK_EVENTS[event]
        specs: list[HookSpec] = getattr(self._session.settings.hooks, attribute)
        workspace: Hooks = self._session.sources.workspace_hooks
        theirs = len(getattr(workspace, attribute))
        if not specs or not theirs or specs[len(specs) - theirs :] != getattr(workspace, attribute):
            return specs
        if self._approval is not None and await self._approval.approved(workspace):
            return specs
        return specs[: len(specs) - theirs]

    def _report(self, event: Event, run: HookRun) -> None:
        failure = run.failure()
        if failure is None:
            log.info("%s hook %r exited with %s", event, run.command, run.exit_code)
            if run.stderr.strip():
                log.info("%s hook %r stderr: %s", event, run.command, run.stderr.strip()[-4000:])
            return
        log.warning("%s hook %r %s; the work goes on: %s", event, run.command, failure, run.output[-4000:])
        kind = failure.split(" ", 1)[0]
        if (event, run.command, kind) in self._told:
            return
        self._told.add((event, run.command, kind))
        goes_on = {
            "PreCompress": "the compaction went on",
            "BeforeAgent": "your message was sent without it",
            "SessionStart": "the session started without its context",
        }[event]
        self._warn(f"The {event} hook `{run.command}` {failure}; {goes_on} (the sidecar's log has its output).")

    def transcript_path(self) -> str:
        """The session file the hooks are told about ("" until it exists)."""
        path = self._recording.path
        return str(path) if path is not None and path.exists() else ""
