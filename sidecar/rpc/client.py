"""A small asyncio JSON-RPC client that spawns a server and talks LSP framing to it (for the demo and benchmarks)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

Handler = Callable[[Any], Any]


class RpcError(Exception):
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
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._handlers: dict[str, Handler] = {}
        self._reader_task: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self.stderr_lines: list[str] = []

    def on(self, method: str, handler: Handler) -> None:
        """Handle a server notification or request; a request's answer is the handler's return value."""
        self._handlers[method] = handler

    async def start(self) -> None:
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

    async def request(self, method: str, params: Any = None, timeout: float = 120) -> Any:
        msg_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(msg_id, None)

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

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
                    self._fail_pending(ConnectionError("the server closed its output"))
                    return
                if not line.strip():
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            message = json.loads(await stdout.readexactly(length))
            await self._dispatch(message)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if future is not None and not future.done():
                if "error" in message:
                    err = message["error"]
                    future.set_exception(RpcError(err.get("code", 0), err.get("message", ""), err.get("data")))
                else:
                    future.set_result(message.get("result"))
            return
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


def sidecar_command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "sidecar", *extra]
