"""Drive `sidecar acp` as a real process with the official SDK's client side (acp.connect_to_agent)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import acp
from acp.schema import ClientCapabilities, FileSystemCapabilities

from tests.e2e.harness import CANARY_KEY, server_env

STDIO_LIMIT = 64 * 1024 * 1024


class RecordingClient:
    """The client side: records every raw message the agent sends, answers permissions and fs/* as told."""

    def __init__(self) -> None:
        self.raw: list[dict[str, Any]] = []  # every message from the agent, as JSON (compaction_update included)
        self.decisions: list[str] = []  # optionIds to answer permission requests with, in order ("cancel" too)
        self.permissions: list[dict[str, Any]] = []
        self.buffers: dict[str, str] = {}  # fs/read_text_file answers (unsaved editor buffers)
        self.writes: list[tuple[str, str]] = []
        #: fs/write_text_file saves the file (Zed, acpx), not only a buffer
        self.write_to_disk = False

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass  # read from `raw`, which also holds updates the SDK has no type for

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> acp.RequestPermissionResponse:
        shown = tool_call.model_dump(by_alias=True, exclude_none=True)
        self.permissions.append({"toolCall": shown, "options": [o.option_id for o in options]})
        decision = self.decisions.pop(0) if self.decisions else "allow"
        if decision == "cancel":
            return acp.RequestPermissionResponse(outcome={"outcome": "cancelled"})  # type: ignore[arg-type]
        return acp.RequestPermissionResponse(outcome={"outcome": "selected", "optionId": decision})  # type: ignore[arg-type]

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> acp.ReadTextFileResponse:
        if path not in self.buffers:
            raise acp.RequestError(-32002, f"not open: {path}")
        return acp.ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> None:
        self.writes.append((path, content))
        self.buffers[path] = content
        if self.write_to_disk:  # as Zed and acpx do: the file is saved
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(content)

    # -- reading what arrived ---------------------------------------------------------------------
    def updates(self, session_id: str | None = None) -> list[dict[str, Any]]:
        return [
            m["params"]["update"]
            for m in self.raw
            if m.get("method") == "session/update" and (session_id is None or m["params"]["sessionId"] == session_id)
        ]

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates(session_id)]

    def text(self, kind: str = "agent_message_chunk", start: int = 0) -> str:
        return "".join(u["content"].get("text", "") for u in self.updates()[start:] if u["sessionUpdate"] == kind)


class Agent:
    """One `sidecar acp` process and its SDK connection."""

    def __init__(self, fake_url: str, home: str, *, settings: dict[str, Any] | None = None, **env: str) -> None:
        self.config = tempfile.mkdtemp(prefix="acp-config-")
        options = {"retryInitialDelayMs": 10, "requestTimeoutMs": 10_000, **(settings or {})}
        with open(os.path.join(self.config, "settings.json"), "w") as handle:
            json.dump(options, handle)
        self.env = server_env(
            SIDECAR_HOME=home,
            SIDECAR_SETTINGS=os.path.join(self.config, "settings.json"),
            GEMINI_API_KEY=CANARY_KEY,
            GOOGLE_GEMINI_BASE_URL=fake_url,
            **env,
        )
        self.client = RecordingClient()
        self.proc: asyncio.subprocess.Process | None = None
        self.conn: Any = None
        #: The server's log lines, when started with `start(log=True)`.
        self.log: list[str] = []
        self._log_task: asyncio.Task[None] | None = None

    async def start(self, *, log: bool = False) -> Agent:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "sidecar",
            "--log-level",
            "DEBUG",
            "acp",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE if log else asyncio.subprocess.DEVNULL,
            env=self.env,
            limit=STDIO_LIMIT,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if log:
            self._log_task = asyncio.get_running_loop().create_task(self._read_log())

        def observe(event: Any) -> None:
            if event.direction.value == "incoming":
                self.client.raw.append(event.message)

        self.conn = acp.connect_to_agent(self.client, self.proc.stdin, self.proc.stdout, observers=[observe])
        return self

    async def _read_log(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            self.log.append(line.decode(errors="replace").rstrip("\n"))

    def logged(self, needle: str, start: int = 0) -> list[str]:
        return [line for line in self.log[start:] if needle in line]

    async def initialize(self, *, fs: bool = False, compaction: bool = False) -> dict[str, Any]:
        caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs))
        params: dict[str, Any] = {
            "protocolVersion": acp.PROTOCOL_VERSION,
            "clientCapabilities": caps.model_dump(by_alias=True, exclude_none=True),
            "clientInfo": {"name": "sidecar-tests", "version": "1"},
        }
        if compaction:  # unstable: the SDK's ClientCapabilities has no field for it, so send it raw
            params["clientCapabilities"]["session"] = {"compaction": {}}
        return await self.raw_request("initialize", params)  # type: ignore[no-any-return]

    async def raw_request(self, method: str, params: Any, timeout: float = 60) -> Any:
        """A request with exactly these params (bad ones too): the result, or acp.RequestError."""
        return await asyncio.wait_for(self.conn._conn.send_request(method, params), timeout)

    async def new_session(self, cwd: str) -> str:
        response = await asyncio.wait_for(self.conn.new_session(cwd=cwd, mcp_servers=[]), 60)
        return str(response.session_id)

    async def prompt(self, session_id: str, *blocks: Any, timeout: float = 60) -> str:
        parts = [acp.text_block(b) if isinstance(b, str) else b for b in blocks]
        response = await asyncio.wait_for(self.conn.prompt(session_id=session_id, prompt=parts), timeout)
        return str(response.stop_reason)

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 30, start: int = 0
    ) -> dict[str, Any]:
        """The first raw message from the agent (from index `start`) matching `predicate` (waits for the state)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for message in self.client.raw[start:]:
                if predicate(message):
                    return message
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"no matching message within {timeout}s; last: {self.client.raw[-3:]}")
            await asyncio.sleep(0.01)

    def write_line(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(data)

    async def close(self) -> int:
        """Close stdin (how editors stop agents) and wait for the process to exit."""
        assert self.proc is not None
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            code = await asyncio.wait_for(self.proc.wait(), 30)
        except TimeoutError:
            self.proc.kill()
            code = await self.proc.wait()
        await self.conn.close()
        if self._log_task is not None:
            await asyncio.wait([self._log_task], timeout=10)
        return code


def is_update(kind: str, **fields: Any) -> Callable[[dict[str, Any]], bool]:
    def match(message: dict[str, Any]) -> bool:
        if message.get("method") != "session/update":
            return False
        update = message["params"]["update"]
        return update.get("sessionUpdate") == kind and all(update.get(k) == v for k, v in fields.items())

    return match
