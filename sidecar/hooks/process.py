"""One hook command as a process: JSON on stdin, stdout and stderr kept apart (their ends), a timeout, the process
group ended, also when the sidecar dies."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sidecar.config.settings import HookSpec

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 60_000
KILL_GRACE_S = 5.0
#: What is kept of a hook's stdout and of its stderr (the end of each), while it is read.
MAX_OUTPUT_CHARS = 64_000
_KEPT_BYTES = 4 * MAX_OUTPUT_CHARS  # a character is at most 4 bytes of UTF-8
_CHUNK = 65_536
#: The shell tool's guard: it leads the hook's process group and ends the group when the sidecar dies.
GUARD_SCRIPT = str(Path(__file__).resolve().parent.parent / "tools" / "shell_guard.py")
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
    command's sake (not found, non-zero exit, timeout); a cancellation ends its process group and propagates.

    It runs under the shell tool's guard (sidecar/tools/shell_guard.py), which leads its process group and ends the
    group when the sidecar dies, even by SIGKILL. Its stdout and stderr are read as they come; only the last
    MAX_OUTPUT_CHARS of each are kept (a hook that prints gigabytes does not fill the sidecar's memory)."""
    timeout_ms = spec.timeout or DEFAULT_TIMEOUT_MS
    guard = [sys.executable, "-I", "-S", GUARD_SCRIPT, str(os.getpid())]
    try:
        proc = await asyncio.create_subprocess_exec(
            *guard,
            "/bin/sh",
            "-c",
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
    out, err = bytearray(), bytearray()
    try:
        await asyncio.wait_for(_talk(proc, data, out, err), timeout_ms / 1000)
    except TimeoutError:
        timed_out = True
        out, err = bytearray(), bytearray()
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


async def _talk(proc: asyncio.subprocess.Process, data: bytes, out: bytearray, err: bytearray) -> None:
    """Write the payload, read both outputs to their end keeping their tails, wait for the exit."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    await asyncio.gather(_feed(proc.stdin, data), _keep_tail(proc.stdout, out), _keep_tail(proc.stderr, err))
    await proc.wait()


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a hook need not read its input
        stdin.write(data)
        await stdin.drain()
    stdin.close()


async def _keep_tail(stream: asyncio.StreamReader, kept: bytearray) -> None:
    while chunk := await stream.read(_CHUNK):
        kept += chunk
        del kept[:-_KEPT_BYTES]


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
