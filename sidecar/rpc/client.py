"""The project's one JSON-RPC client: spawns a server and speaks LSP framing to it (demo, benchmarks, all tests).

It keeps everything the server sends (notifications by method, requests, every message), answers server requests
through handlers, and can write raw bytes, cancel, SIGKILL and measure the process — what the e2e and reliability
suites need to drive the real `python -m sidecar`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

Handler = Callable[[Any], Any]


class RpcError(Exception):
    """A JSON-RPC error answer from the server: its code, message and data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class RpcClient:
    """Spawn `command`, send requests/notifications, dispatch server notifications and requests to handlers."""

    def __init__(self, command: Sequence[str], env: dict[str, str] | None = None) -> None:
        self._command = list(command)
        self._env = env
        self._proc: asyncio.subprocess.Process | None = None
        self._ids = itertools.count(1)
        self._pending: dict[Any, asyncio.Future[Any]] = {}
        self._handlers: dict[str, Handler] = {}
        self._reader_task: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self.stderr_lines: list[str] = []
        #: Every message the server sent, in order (responses with a null id included).
        self.received: list[dict[str, Any]] = []
        #: Params of every server notification, by method.
        self.notes: dict[str, list[Any]] = defaultdict(list)
        #: Requests the server sent (answered by the handler set with `on`, else with null).
        self.server_requests: list[dict[str, Any]] = []

    def on(self, method: str, handler: Handler) -> None:
        """Handle a server notification or request; a request's answer is the handler's return value."""
        self._handlers[method] = handler

    # -- the process ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Spawn the server process and start reading what it sends."""
        self._proc = await asyncio.create_subprocess_exec(
            *self._command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._env if self._env is not None else dict(os.environ),
            limit=64 * 1024 * 1024,
        )
        self._reader_task = asyncio.create_task(self._read_loop())
        self._stderr_task = asyncio.create_task(self._drain_stderr())

    @property
    def pid(self) -> int:
        """The server process's id."""
        assert self._proc is not None
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The server's exit code, None while it runs."""
        assert self._proc is not None
        return self._proc.returncode

    def kill(self) -> None:
        """SIGKILL (no chance to flush, close or unlock anything)."""
        if self._proc is not None and self._proc.returncode is None:
            os.kill(self._proc.pid, signal.SIGKILL)

    async def wait_exit(self, timeout: float = 10) -> int:
        """Wait for the server to exit (at most `timeout` seconds); its exit code."""
        assert self._proc is not None
        return await asyncio.wait_for(self._proc.wait(), timeout)

    async def close(self) -> int:
        """shutdown + exit, then wait for the process."""
        assert self._proc is not None
        try:
            await self.request("shutdown", None, timeout=10)
            self.notify("exit")
        except (RpcError, TimeoutError, ConnectionError):
            pass
        try:
            return await asyncio.wait_for(self._proc.wait(), 10)
        except TimeoutError:
            self._proc.kill()
            return await self._proc.wait()

    async def stop(self) -> None:
        """close() when the server still answers, SIGKILL otherwise: never leaves a process behind."""
        proc = self._proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(TimeoutError, ConnectionError, RpcError, BrokenPipeError):
                await asyncio.wait_for(self.close(), 8)
        if proc.returncode is None:
            self.kill()
            await proc.wait()
        for task in (self._reader_task, self._stderr_task):
            if task is not None and not task.done():
                task.cancel()

    # -- talking ------------------------------------------------------------------------------------------
    async def request(self, method: str, params: Any = None, timeout: float = 120) -> Any:
        """Send a request and wait for its result; RpcError when the server answers with an error."""
        return await asyncio.wait_for(self.request_now(method, params), timeout)

    def request_now(self, method: str, params: Any = None, *, msg_id: Any = None) -> asyncio.Future[Any]:
        """Write a request at once, in program order with notify() and other request_now() calls (a task running
        request() would only write it when the event loop gets to it), and return the future of its answer."""
        msg_id = next(self._ids) if msg_id is None else msg_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        future.add_done_callback(lambda _done: self._pending.pop(msg_id, None))
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return future

    def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer)."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def close_stdin(self) -> None:
        """End of input for the server (as when the editor goes away without shutdown)."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.close()

    def cancel(self, msg_id: Any) -> None:
        """Ask the server to cancel a running request ($/cancelRequest)."""
        self.notify("$/cancelRequest", {"id": msg_id})

    def write_raw(self, data: bytes) -> None:
        """Bytes straight to the server's stdin, bypassing the framing."""
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write(data)

    # -- observing -----------------------------------------------------------------------------------------
    def messages(self, kind: int | None = None) -> list[str]:
        """window/showMessage texts (of one MessageType when given: 1 error, 2 warning, 3 info)."""
        return [m["message"] for m in self.notes["window/showMessage"] if kind is None or m["type"] == kind]

    def progress(self) -> dict[Any, list[dict[str, Any]]]:
        """The `value`s of the $/progress notifications, by token."""
        found: dict[Any, list[dict[str, Any]]] = {}
        for note in self.notes["$/progress"]:
            found.setdefault(note["token"], []).append(note["value"])
        return found

    async def wait_note(
        self, method: str, predicate: Callable[[Any], bool] = lambda _: True, timeout: float = 15, start: int = 0
    ) -> Any:
        """The first notification of `method` (from index `start`) that matches `predicate`."""

        def found() -> Any:
            return next((n for n in self.notes[method][start:] if predicate(n)), None)

        return await poll(found, timeout, lambda: f"no {method} matching; last: {self.notes[method][-3:]}")

    async def wait_log(self, needle: str, timeout: float = 10, start: int = 0) -> str:
        """The first line of the server's stderr (from line `start`) that holds `needle`."""

        def found() -> str | None:
            return next((line for line in self.stderr_lines[start:] if needle in line), None)

        return await poll(found, timeout, lambda: f"no log line with {needle!r}")  # type: ignore[no-any-return]

    # -- the wire ------------------------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        body = json.dumps(message).encode()
        self._proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read_loop(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        while True:
            length = 0
            while True:
                line = await stdout.readline()
                if not line:
                    last = "\n".join(self.stderr_lines[-10:])
                    self._fail_pending(ConnectionError(f"the server closed its output; its last log lines:\n{last}"))
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(await stdout.readexactly(length))
            await self._dispatch(message)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        if "method" not in message:
            future = self._pending.get(message.get("id"))
            if future is not None and not future.done():
                if "error" in message:
                    err = message["error"]
                    future.set_exception(RpcError(err.get("code", 0), err.get("message", ""), err.get("data")))
                else:
                    future.set_result(message.get("result"))
            return
        if "id" in message:
            self.server_requests.append(message)
        else:
            self.notes[message["method"]].append(message.get("params"))
        handler = self._handlers.get(message["method"])
        result = None
        if handler is not None:
            result = handler(message.get("params"))
            if isinstance(result, Awaitable):
                result = await result
        if "id" in message:
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        async for line in self._proc.stderr:
            self.stderr_lines.append(line.decode(errors="replace").rstrip())

    def _fail_pending(self, exc: Exception) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(exc)


async def poll(check: Callable[[], Any], timeout: float, describe: Callable[[], str]) -> Any:
    """Wait until `check()` is not None (a state, never "the next message"); AssertionError after `timeout`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = check()
        if value is not None:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout}s: {describe()}")
        await asyncio.sleep(0.01)


def sidecar_command(*extra: str) -> list[str]:
    """The command that starts the sidecar with this Python, with `extra` arguments."""
    return [sys.executable, "-m", "sidecar", *extra]
