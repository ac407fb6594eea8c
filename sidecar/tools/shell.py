"""run_shell_command: `bash -c` in its own process group, with a timeout and an output cap; the group is stopped."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from sidecar.tools.paths import ToolError

__all__ = ["KILL_GRACE_SECONDS", "MAX_CAPTURE_BYTES", "ShellRun", "group_alive", "run_shell", "stop_group"]

MAX_CAPTURE_BYTES = 16 * 1024 * 1024  # kept in memory: the first quarter and the last three quarters
KILL_GRACE_SECONDS = 1.0  # between SIGTERM and SIGKILL
PIPE_DRAIN_SECONDS = 2.0  # for output still buffered once the group is gone
_POLL_SECONDS = 0.02


@dataclass(frozen=True)
class ShellRun:
    """How a command ended and what it printed (stdout and stderr interleaved)."""

    output: str
    exit_code: int | None  # None when the shell was ended by a signal
    signal_name: str | None
    timed_out: bool
    stopped_leftovers: bool  # processes still running when the shell exited were stopped
    output_held: bool  # a process outside the group kept the output open; later output is missing


class _Capture:
    """Output bytes, bounded: past the limit the middle is dropped and counted."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 4
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        excess = len(self.tail) - self.tail_limit
        if excess > 0:
            del self.tail[:excess]
            self.dropped += excess

    def text(self) -> str:
        if not self.dropped:
            return (self.head + self.tail).decode("utf-8", "replace")
        gap = f"\n[... {self.dropped:,} bytes of output not kept ...]\n"
        return self.head.decode("utf-8", "replace") + gap + self.tail.decode("utf-8", "replace")


_GUARD = str(Path(__file__).with_name("shell_guard.py"))


def _shell() -> list[str]:
    """The guard (sidecar/tools/shell_guard.py: the group goes down with the sidecar), then the shell."""
    bash = shutil.which("bash")
    guard = [sys.executable, "-I", "-S", _GUARD, str(os.getpid())]
    return [*guard, bash, "-c"] if bash else [*guard, "/bin/sh", "-c"]


_SECRETS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")  # the sidecar's own keys: a command's output goes to the model


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SECRETS}
    env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies waiting to be reaped do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not os.path.isdir("/proc"):
        return True
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(os.path.join(entry.path, "stat"), "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                return True
    return False


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def stop_group(pgid: int, grace: float = KILL_GRACE_SECONDS) -> bool:
    """SIGTERM the process group, SIGKILL whatever is left after `grace` seconds (also when cancelled meanwhile).

    Returns whether anything was still running.
    """
    if not group_alive(pgid):
        return False
    _signal_group(pgid, signal.SIGTERM)
    _signal_group(pgid, signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    try:
        while group_alive(pgid) and loop.time() < deadline:
            await asyncio.sleep(_POLL_SECONDS)
    finally:
        if group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)
    return True


class _Protocol(asyncio.SubprocessProtocol):
    """Collects the output and reports the shell's exit and the pipe's close separately: a background process
    can keep the pipe open long after the shell is gone (asyncio's Process.wait() waits for both)."""

    def __init__(self, capture: _Capture) -> None:
        loop = asyncio.get_running_loop()
        self.capture = capture
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        self.capture.add(data.encode() if isinstance(data, str) else data)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def _within(future: asyncio.Future[None], seconds: float) -> bool:
    """Whether `future` completes within `seconds` (it is not cancelled either way)."""
    try:
        await asyncio.wait_for(asyncio.shield(future), seconds)
    except TimeoutError:
        return False
    return True


async def run_shell(command: str, cwd: Path, timeout: float) -> ShellRun:
    """Run `command` with `bash -c` in `cwd`, stdin empty, in a new session (so its own process group).

    When the shell exits, on timeout, and when the caller is cancelled, the whole group is stopped
    (SIGTERM, then SIGKILL); a cancellation is re-raised once that is done. Processes that start a new
    session themselves (setsid, daemons) leave the group and are out of reach.
    """
    loop = asyncio.get_running_loop()
    capture = _Capture(MAX_CAPTURE_BYTES)
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(capture),
            *_shell(),
            command,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=_environment(),
        )
    except OSError as exc:
        raise ToolError(f"Could not start the shell: {exc.strerror or exc}") from None
    pgid = transport.get_pid()
    try:
        timed_out = not await _within(protocol.exited, timeout)
        leftovers = await stop_group(pgid)
        await _within(protocol.exited, 5.0)
        held = not await _within(protocol.closed, PIPE_DRAIN_SECONDS)
    except BaseException:
        await stop_group(pgid)
        await _within(protocol.exited, 1.0)  # let the watcher reap the shell before the transport closes
        raise
    finally:
        transport.close()
    code = transport.get_returncode()
    signal_name = None
    if code is not None and code < 0:
        try:
            signal_name = signal.Signals(-code).name
        except ValueError:
            signal_name = f"signal {-code}"
    return ShellRun(
        output=capture.text(),
        exit_code=code if code is not None and code >= 0 else None,
        signal_name=signal_name,
        timed_out=timed_out,
        stopped_leftovers=leftovers and not timed_out,
        output_held=held,
    )
