"""One MCP server: a task that holds its SDK session open, its status and tools, calls, and its stderr tail."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Literal

from sidecar.mcp.config import ServerConfig
from sidecar.mcp.environment import child_environment, guarded_command
from sidecar.mcp.stderr_tail import StderrTail

log = logging.getLogger(__name__)

Status = Literal["starting", "ready", "failed", "disabled"]


async def _first(*waits: Any) -> None:
    """Wait until the first of the awaitables is done; cancel the others."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


def _fail_after(seconds: float) -> Any:
    """anyio's deadline (the SDK's event library), imported when first needed: not on the start-up path."""
    import anyio

    return anyio.fail_after(seconds)


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


@dataclass(frozen=True)
class RemoteResource:
    """A resource as the server listed it."""

    uri: str
    name: str
    mime_type: str | None


@dataclass(frozen=True)
class RemotePrompt:
    """A prompt as the server listed it: its arguments as (name, required), their descriptions in the same order."""

    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...]
    argument_descriptions: tuple[str, ...] = ()


class CallFailed(Exception):
    """A call that produced no result: timed out, the server went away, or the server answered with an error."""


class _WatchedStream:
    """The transport's read stream, passed through to the SDK, that sets `ended` at end of input: a server that
    exits (or closes its stdout) while idle is noticed at once, not at its next call."""

    def __init__(self, inner: Any, ended: asyncio.Event) -> None:
        self._inner = inner
        self._ended = ended

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except StopAsyncIteration:
            self._ended.set()
            raise

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except anyio.EndOfStream:
            self._ended.set()
            raise


class Connection:
    """Owns one server's SDK session in its own task (anyio contexts must be left in the task that entered them).

    `on_change()` is called whenever the status or the tool list changes.
    """

    def __init__(self, config: ServerConfig, on_change: Callable[[], None], *, disabled: bool = False) -> None:
        self.config = config
        #: A disabled server's connection is never started: it only holds the config and the status.
        self.status: Status = "disabled" if disabled else "starting"
        self.error: str | None = None
        self.tools: list[RemoteTool] = []
        self.resources: list[RemoteResource] = []
        self.prompts: list[RemotePrompt] = []
        self._on_change = on_change
        self._session: Any = None
        self._stop = asyncio.Event()
        #: Set when the server's output ends (it exited or closed stdout), whether or not a call was running.
        self._ended = asyncio.Event()
        #: The tool of the call in flight, if any (for the words of a failure).
        self._calling: str | None = None
        self._stderr: StderrTail | None = None
        self._task: asyncio.Task[None] | None = None
        self._refresh: asyncio.Task[None] | None = None

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect in the background: nothing waits for it."""
        self._task = asyncio.create_task(self._run(), name=f"mcp-{self.config.name}")

    @property
    def started(self) -> bool:
        """Whether `start()` ran (a disabled server's connection never starts)."""
        return self._task is not None

    async def aclose(self) -> None:
        """Close the session; the SDK closes stdin, waits, then ends the server's process group."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await self._task
        if self._stderr is not None:
            self._stderr.close()

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                session = await self._connect(stack)
                self._session = session
                self._set("ready")
                await _first(self._stop.wait(), self._ended.wait())
                if not self._stop.is_set():  # its output ended: it exited while idle (or during a call)
                    doing = f"during a call to {self._calling}" if self._calling else "while idle"
                    raise CallFailed(f"it exited {doing}")
        except Exception as exc:
            self._fail(self._describe(exc))
        finally:
            self._session = None
            if self.status in ("starting", "ready"):
                self._set("disabled" if self._stop.is_set() else "failed")

    async def _connect(self, stack: AsyncExitStack) -> Any:
        from mcp import ClientSession  # the SDK loads after `initialize` has been answered

        read, write = await stack.enter_async_context(self._transport())
        if self._stderr is not None:
            self._stderr.started()
        read = _WatchedStream(read, self._ended)
        session = await stack.enter_async_context(ClientSession(read, write, message_handler=self._message))
        try:
            with _fail_after(self.config.timeout_s):
                await session.initialize()
                self.tools = await self._list_tools(session)
                self.resources = await self._list_resources(session)
                self.prompts = await self._list_prompts(session)
        except TimeoutError:
            raise CallFailed(f"it did not finish starting (initialize, tools/list) within {self._timeout()}") from None
        return session

    def _transport(self) -> Any:
        config = self.config
        if config.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command, args = guarded_command(config)
            if self._stderr is not None:
                self._stderr.close()
            self._stderr = StderrTail()
            params = StdioServerParameters(command=command, args=args, env=child_environment(config), cwd=config.cwd)
            return stdio_client(params, errlog=self._stderr.writer)  # type: ignore[arg-type]
        assert config.url is not None
        headers = dict(config.headers)
        if config.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(config.url, headers=headers, timeout=config.timeout_s)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(config.timeout_s, read=config.timeout_s))
        return streamable_http_client(config.url, http_client=client)

    async def _list_tools(self, session: Any) -> list[RemoteTool]:
        tools: list[RemoteTool] = []
        cursor: str | None = None
        from mcp_types import PaginatedRequestParams

        while True:
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            for tool in result.tools:
                hints = tool.annotations
                read_only = bool(hints is not None and hints.read_only_hint)
                schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
                tools.append(RemoteTool(tool.name, tool.description or "", schema, read_only))
            cursor = result.next_cursor
            if not cursor:
                return tools

    async def _list_resources(self, session: Any) -> list[RemoteResource]:
        """resources/list (all pages) when the server offers resources; a server that says no has none."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import PaginatedRequestParams

        capabilities = session.server_capabilities
        if capabilities is None or capabilities.resources is None:
            return []
        found: list[RemoteResource] = []
        cursor: str | None = None
        try:
            while True:
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                result = await session.list_resources(params=params)
                found += [RemoteResource(str(r.uri), r.name, r.mime_type) for r in result.resources]
                cursor = result.next_cursor
                if not cursor:
                    return found
        except MCPError as exc:  # MethodNotFound and the like count as none (as in Gemini CLI)
            log.info("MCP server %s: resources/list failed (%s); no resources", self.config.name, exc)
            return found

    async def _list_prompts(self, session: Any) -> list[RemotePrompt]:
        """prompts/list when the server offers prompts; a refusal counts as none."""
        from mcp.shared.exceptions import MCPError

        capabilities = session.server_capabilities
        if capabilities is None or capabilities.prompts is None:
            return []
        try:
            result = await session.list_prompts()
        except MCPError as exc:
            log.info("MCP server %s: prompts/list failed (%s); no prompts", self.config.name, exc)
            return []
        return [
            RemotePrompt(
                p.name,
                p.description or "",
                tuple((a.name, bool(a.required)) for a in p.arguments or []),
                tuple(a.description or "" for a in p.arguments or []),
            )
            for p in result.prompts
        ]

    async def get_prompt(self, name: str, args: dict[str, str]) -> Any:
        """prompts/get with the server's timeout; failures as CallFailed in words."""
        from mcp.shared.exceptions import MCPError

        session = self._session
        if session is None or self.status != "ready":
            raise CallFailed(f"MCP server {self.config.name!r} is not running ({self.status}).")
        try:
            with _fail_after(self.config.timeout_s):
                return await session.get_prompt(name, args)
        except TimeoutError:
            raise CallFailed(f"The prompt {name} timed out after {self._timeout()}.") from None
        except MCPError as exc:
            raise CallFailed(f"MCP server {self.config.name!r} could not give the prompt {name}: {exc}") from None

    async def read(self, uri: str) -> Any:
        """resources/read with the server's timeout; failures as CallFailed in words."""
        from mcp.shared.exceptions import MCPError

        session = self._session
        if session is None or self.status != "ready":
            raise CallFailed(f"MCP server {self.config.name!r} is not running ({self.status}).")
        try:
            with _fail_after(self.config.timeout_s):
                return await session.read_resource(uri)
        except TimeoutError:
            raise CallFailed(f"Reading {uri} timed out after {self._timeout()}.") from None
        except MCPError as exc:
            raise CallFailed(f"MCP server {self.config.name!r} could not read {uri}: {exc}") from None

    async def _message(self, message: Any) -> None:
        """Server notifications: a changed tool list is listed again; stray output is logged."""
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            if self._refresh is None or self._refresh.done():
                self._refresh = asyncio.create_task(self._relist())
        elif isinstance(message, Exception):
            log.warning("MCP server %s sent something that is not MCP: %s", self.config.name, message)

    async def _relist(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            with _fail_after(self.config.timeout_s):
                self.tools = await self._list_tools(session)
        except Exception as exc:
            log.warning("MCP server %s: listing its changed tools failed: %s", self.config.name, exc)
            return
        self._on_change()

    # -- calls ----------------------------------------------------------------------------------------
    async def call(self, tool: str, args: dict[str, Any]) -> Any:
        """tools/call with the server's timeout. A timeout or a cancelled caller sends MCP cancellation (the SDK
        does); raises CallFailed in words."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        session = self._session
        if session is None or self.status != "ready":
            raise CallFailed(f"MCP server {self.config.name!r} is not running ({self.status}).")
        self._calling = tool
        try:
            return await session.call_tool(tool, args, read_timeout_seconds=self.config.timeout_s)
        except MCPError as exc:
            if exc.error.code == REQUEST_TIMEOUT:
                raise CallFailed(
                    f"The call timed out after {self._timeout()} (the server's `timeout`) and was cancelled on "
                    "the server."
                ) from None
            if self._stop.is_set():
                raise CallFailed(f"MCP server {self.config.name!r} was stopped during the call.") from None
            if exc.error.code == CONNECTION_CLOSED:
                await self._settled()
                self._fail(f"it exited during a call to {tool}")
                raise CallFailed(f"MCP server {self.config.name!r} stopped during the call. {self.error}") from None
            raise CallFailed(f"MCP server {self.config.name!r} answered with an error: {exc}") from None
        finally:
            self._calling = None

    async def _settled(self) -> None:
        """Wait (bounded) until the connection task has noticed the end and closed the transport, so that the
        failure carries the whole stderr tail and is told once, in the same words."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(Exception, asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), 5)

    # -- reporting ------------------------------------------------------------------------------------
    def stderr_tail(self) -> str:
        """The last lines the server printed on stderr (for a failure's reason)."""
        return "" if self._stderr is None else self._stderr.text()

    def _timeout(self) -> str:
        ms = self.config.timeout_ms
        return f"{ms // 1000} s" if ms % 1000 == 0 else f"{ms} ms"

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, CallFailed):
            return str(exc)
        if isinstance(exc, BaseExceptionGroup):
            return "; ".join(self._describe(e) for e in exc.exceptions)
        if isinstance(exc, FileNotFoundError | PermissionError):
            return f"cannot run {self.config.command!r}: {exc.strerror}"
        text = str(exc) or type(exc).__name__
        return f"it could not be started: {text}"

    def _fail(self, reason: str) -> None:
        if self.status == "failed":
            return
        tail = self.stderr_tail()
        where = f" ({self.config.where()})" if self.config.where() else ""
        self.error = f"MCP server {self.config.name!r}{where} failed: {reason}." + (
            f" Its last output on stderr:\n{tail}" if tail else ""
        )
        self._set("failed")

    def _set(self, status: Status) -> None:
        if status != self.status or status == "ready":
            self.status = status
            self._on_change()
