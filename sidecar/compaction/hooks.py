"""PreCompress hooks: run configured commands before a compaction (advisory; failures are logged, never fatal)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from sidecar.compaction.hook_approval import HookApproval
from sidecar.config.settings import HookSpec
from sidecar.session import Session

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 60_000
KILL_GRACE_S = 5.0


@dataclass(frozen=True)
class HookResult:
    command: str
    exit_code: int | None
    timed_out: bool
    output: str

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def matches(spec: HookSpec, trigger: str) -> bool:
    """Lifecycle matchers are exact strings; empty, missing or "*" match every trigger."""
    return spec.matcher in (None, "", "*") or spec.matcher == trigger


class SessionFile(Protocol):
    """Where the current session is recorded (sidecar.recording.recorder.Recorder)."""

    @property
    def path(self) -> Path | None: ...


class PreCompressHooks:
    """The Compactor's pre-compress step: the PreCompress hooks configured for the current session."""

    def __init__(self, session: Session, recording: SessionFile, approval: HookApproval | None = None) -> None:
        self._session = session
        self._recording = recording
        #: None where a workspace file's hooks never count (ACP): then every configured hook is the user's.
        self._approval = approval

    async def __call__(self, trigger: str) -> None:
        specs = self._session.settings.hooks.pre_compress
        if specs and self._approval is not None:
            specs = await self._approval.allowed(specs)
        if specs:
            await run_pre_compress(
                specs,
                session_id=self._session.conversation.session_id,
                transcript_path=self.transcript_path(),
                cwd=self._session.project_root,
                trigger=trigger,
            )

    def transcript_path(self) -> str:
        path = self._recording.path
        return str(path) if path is not None and path.exists() else ""


async def run_pre_compress(
    hooks: Sequence[HookSpec], *, session_id: str, transcript_path: str, cwd: str, trigger: str
) -> list[HookResult]:
    """Run each matching hook in turn with the PreCompress JSON on stdin; returns what each did."""
    payload = json.dumps(
        {
            "session_id": session_id,
            "transcript_path": transcript_path,
            "cwd": cwd,
            "hook_event_name": "PreCompress",
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "trigger": trigger,
        }
    ).encode()
    results = []
    for spec in hooks:
        if matches(spec, trigger):
            results.append(await _run_one(spec, payload, cwd, session_id))
    return results


async def _run_one(spec: HookSpec, payload: bytes, cwd: str, session_id: str) -> HookResult:
    timeout = (spec.timeout or DEFAULT_TIMEOUT_MS) / 1000
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env.update({"SIDECAR_PROJECT_DIR": cwd, "SIDECAR_SESSION_ID": session_id, "GEMINI_PROJECT_DIR": cwd})
    try:
        proc = await asyncio.create_subprocess_shell(
            spec.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd if os.path.isdir(cwd) else None,
            env=env,
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("PreCompress hook %r could not start: %s", spec.command, exc)
        return HookResult(spec.command, None, False, str(exc))
    timed_out = False
    try:
        output, _ = await asyncio.wait_for(proc.communicate(payload), timeout)
    except TimeoutError:
        timed_out = True
        output = b""
        await _terminate(proc)
    except asyncio.CancelledError:
        await _terminate(proc)
        raise
    text = output.decode(errors="replace")[-4000:]
    result = HookResult(spec.command, proc.returncode, timed_out, text)
    if timed_out:
        log.warning("PreCompress hook %r timed out after %d ms; compaction proceeds", spec.command, timeout * 1000)
    elif not result.ok:
        log.warning("PreCompress hook %r exited with %s; compaction proceeds: %s", spec.command, proc.returncode, text)
    else:
        log.info("PreCompress hook %r succeeded", spec.command)
    return result


async def _terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the hook's process group, then SIGKILL it 5 s later if it is still there."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, KILL_GRACE_S)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(proc.wait(), wait)
            return
        except TimeoutError:
            continue
