"""One hook command as a process: JSON on stdin, stdout and stderr kept apart, a timeout, the process group ended."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from dataclasses import dataclass
from typing import Any

from sidecar.config.settings import HookSpec

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 60_000
KILL_GRACE_S = 5.0
#: What is kept of a hook's stdout and of its stderr (the end of each).
MAX_OUTPUT_CHARS = 64_000
#: Never in a hook's environment: a hook is the user's command, the key is not its business.
HIDDEN_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


@dataclass(frozen=True)
class HookRun:
    """What one hook command did. `exit_code` None: it did not start, or it was ended after its timeout."""

    command: str
    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    timeout_ms: int
    #: Why it could not start (OSError text), else "".
    start_error: str = ""

    @property
    def ok(self) -> bool:
        """It ran to exit 0 within its time."""
        return self.exit_code == 0 and not self.timed_out

    @property
    def output(self) -> str:
        """stdout and stderr together (what the log shows of a failure)."""
        return "\n".join(text for text in (self.stdout.strip(), self.stderr.strip()) if text)

    def failure(self) -> str | None:
        """The failure in words (None when it ran to exit 0 or 2: 2 is a deliberate block)."""
        if self.start_error:
            return f"could not start ({self.start_error})"
        if self.timed_out:
            return f"timed out after {self.timeout_ms} ms"
        if self.exit_code not in (0, 2):
            return f"exited with code {self.exit_code}"
        return None


def hook_env(cwd: str, session_id: str) -> dict[str, str]:
    """The hook's environment: the sidecar's, without the API keys, plus where it runs and for which session."""
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN_ENV}
    env.update({"SIDECAR_PROJECT_DIR": cwd, "SIDECAR_SESSION_ID": session_id, "GEMINI_PROJECT_DIR": cwd})
    return env


async def run_hook(spec: HookSpec, payload: dict[str, Any], *, cwd: str, session_id: str) -> HookRun:
    """Run `spec.command` through the shell in `cwd` with `payload` as JSON on stdin. Never raises for the
    command's sake (not found, non-zero exit, timeout); a cancellation ends its process group and propagates."""
    timeout_ms = spec.timeout or DEFAULT_TIMEOUT_MS
    try:
        proc = await asyncio.create_subprocess_shell(
            spec.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd if os.path.isdir(cwd) else None,
            env=hook_env(cwd, session_id),
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(spec.command, None, False, "", "", timeout_ms, start_error=str(exc))
    data = json.dumps(payload).encode()
    timed_out = False
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), timeout_ms / 1000)
    except TimeoutError:
        timed_out = True
        out, err = b"", b""
        await terminate(proc)
    except asyncio.CancelledError:
        await terminate(proc)
        raise
    return HookRun(
        spec.command,
        None if timed_out else proc.returncode,
        timed_out,
        out.decode(errors="replace")[-MAX_OUTPUT_CHARS:],
        err.decode(errors="replace")[-MAX_OUTPUT_CHARS:],
        timeout_ms,
    )


async def terminate(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the hook's process group, then SIGKILL it 5 s later if it is still there."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
            return
        except TimeoutError:
            continue
