"""A real sidecar process for the reliability suite: every byte it writes is kept, so tests can grep it.

Built on the project's one JSON-RPC client (sidecar/rpc/client.py) and the e2e harness's environment, so the
process can be SIGKILLed, fed raw bytes, and measured (RSS) from the test.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sidecar.recording.reader import LoadedSession, read_session
from sidecar.rpc.client import RpcClient, RpcError, sidecar_command
from tests.e2e.harness import CANARY_KEY, server_env

__all__ = ["CANARY_KEY", "RpcError", "Sidecar", "records", "session_file"]


class Sidecar:
    """One `python -m sidecar` process recording into `home`, with `workspace` as its root folder."""

    def __init__(
        self,
        home: str | Path,
        workspace: str | Path,
        fake_url: str,
        *,
        log_level: str = "DEBUG",
        args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.home = Path(home)
        self.workspace = str(workspace)
        self.fake_url = fake_url
        self._markers = 0
        self.client = RpcClient(
            sidecar_command("--log-level", log_level, *args), env=server_env(SIDECAR_HOME=str(self.home), **(env or {}))
        )

    # -- lifecycle ------------------------------------------------------------------------------------
    async def start(self, *, initialize: bool = True, **settings: Any) -> Sidecar:
        await self.client.start()
        if initialize:
            await self.initialize(**settings)
        return self

    async def initialize(self, **settings: Any) -> Any:
        options = {
            "baseUrl": self.fake_url,
            "apiKey": CANARY_KEY,
            "retryInitialDelayMs": 10,
            "requestTimeoutMs": 10_000,
            **settings,
        }
        result = await self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "rootUri": f"file://{self.workspace}",
                "workspaceFolders": [{"uri": f"file://{self.workspace}", "name": "ws"}],
                "initializationOptions": options,
            },
            timeout=30,
        )
        self.client.notify("initialized", {})
        await self.wait_note("sidecar/tokenUsage")  # sent once the heavy imports are done
        return result

    async def watching(self) -> None:
        """Wait until start-up is over: the workspace watcher runs and the settings file was re-read (its usage
        push, if the state changed, was written before this log line; a ping after it is a barrier for it)."""
        await self.wait_log("start-up complete: watching the workspace")

    @property
    def pid(self) -> int:
        return self.client.pid

    @property
    def returncode(self) -> int | None:
        return self.client.returncode

    def kill(self) -> None:
        """SIGKILL (no chance to flush, close or unlock anything)."""
        self.client.kill()

    async def wait_exit(self, timeout: float = 10) -> int:
        return await self.client.wait_exit(timeout)

    async def stop(self) -> None:
        """shutdown + exit when the server still answers; SIGKILL otherwise. Always leaves no process behind."""
        await self.client.stop()

    # -- talking ----------------------------------------------------------------------------------------
    async def request(self, method: str, params: Any = None, timeout: float = 30) -> Any:
        return await self.client.request(method, params, timeout=timeout)

    async def error(self, method: str, params: Any = None, timeout: float = 30) -> RpcError:
        try:
            result = await self.request(method, params, timeout)
        except RpcError as exc:
            return exc
        raise AssertionError(f"{method} answered {str(result)[:300]} but an error was expected")

    def notify(self, method: str, params: Any = None) -> None:
        self.client.notify(method, params)

    def request_now(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        """Write a request at once (in program order with notify()) and return the future of its answer."""
        return self.client.request_now(method, params)

    async def say(self, text: str, timeout: float = 30) -> dict[str, Any]:
        return await self.request("sidecar/sendMessage", {"text": text}, timeout)  # type: ignore[no-any-return]

    def write_raw(self, data: bytes) -> None:
        self.client.write_raw(data)

    async def ping(self, timeout: float = 10) -> dict[str, Any]:
        """The server still answers requests (sidecar/getTokenUsage)."""
        return await self.request("sidecar/getTokenUsage", {}, timeout)  # type: ignore[no-any-return]

    # -- observing --------------------------------------------------------------------------------------
    def notes(self, method: str) -> list[Any]:
        return self.client.notes[method]

    def messages(self, kind: int | None = None) -> list[str]:
        """window/showMessage texts (of one MessageType when given: 1 error, 2 warning, 3 info)."""
        return self.client.messages(kind)

    @property
    def stderr(self) -> list[str]:
        return self.client.stderr_lines

    async def wait_note(
        self, method: str, predicate: Callable[[Any], bool] = lambda _: True, timeout: float = 15, start: int = 0
    ) -> Any:
        return await self.client.wait_note(method, predicate, timeout, start)

    async def wait_log(self, needle: str, timeout: float = 10, start: int = 0) -> str:
        return await self.client.wait_log(needle, timeout, start)

    async def logged_since(self, mark: int) -> list[str]:
        """The log lines written since stderr line `mark`, up to everything the server has handled so far.

        The server handles messages in order and logs synchronously, so once a marker notification sent now
        shows up in the log, every line about earlier messages is there too.
        """
        self._markers += 1
        marker = f"sidecar/logMarker{self._markers}"
        self.notify(marker, {})
        await self.wait_log(repr(marker), start=mark)
        lines = self.stderr[mark:]
        return lines[: next(i for i, line in enumerate(lines) if repr(marker) in line)]

    def rss_kb(self) -> int:
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def session_id(self) -> str:
        return str(self.notes("sidecar/tokenUsage")[-1]["sessionId"])

    def session_path(self, session_id: str | None = None) -> Path:
        return session_file(self.home, session_id or self.session_id())


def session_file(home: Path, session_id: str) -> Path:
    found = list(home.rglob(f"{session_id}.jsonl"))
    assert len(found) == 1, f"expected one file for session {session_id}, found {found}"
    return found[0]


def records(path: Path) -> list[dict[str, Any]]:
    """The complete lines of a session file as JSON objects (a torn tail is left out)."""
    data = path.read_bytes()
    return [json.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines() if line.strip()]


def replay(path: Path) -> LoadedSession:
    """The session as a fresh sidecar would load it (strict: a damaged line raises)."""
    return read_session(path)
