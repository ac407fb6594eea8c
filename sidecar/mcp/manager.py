"""The configured MCP servers: started in parallel in the background, restarted on change, their tools by name."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import weakref
from collections.abc import Awaitable, Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from sidecar.mcp.config import ServerConfig, parse_servers
from sidecar.mcp.connection import CallFailed, Connection, RemoteTool, Status
from sidecar.mcp.environment import secret_references
from sidecar.mcp.naming import clean_schema, qualified_name, tool_enabled
from sidecar.mcp.results import Converted, convert, convert_resource

log = logging.getLogger(__name__)

#: The longest a turn's first model request waits for a server still starting (its own `timeout` when shorter).
START_WAIT_CAP_S = 10.0
#: Asks the user whether a workspace's server may start (sidecar/mcp/approval.py): True when approved.
Approve = Callable[[ServerConfig], Awaitable[bool]]
#: How a workspace's servers are named in messages.
WORKSPACE_ORIGIN = "the workspace settings"


@dataclass(frozen=True)
class McpTool:
    """A server's tool under the name the model calls it by."""

    name: str
    server: ServerConfig
    tool: RemoteTool


@dataclass(frozen=True)
class ServerState:
    """One row of sidecar/listMcpServers."""

    name: str
    status: Status
    tools: list[str]
    error: str | None = None


class McpManager:
    """Starts, restarts and stops servers without ever making a caller wait for one to start.

    `on_change()` runs after any status or tool list change; each new problem (a failing server with its stderr
    tail, a name clash) is logged and given to `inform(message)` once.
    """

    def __init__(
        self,
        on_change: Callable[[], None] | None = None,
        inform: Callable[[str], None] | None = None,
        approve: Approve | None = None,
    ):
        #: Called after any status or tool list change (settable: the ACP session hooks in after building).
        self.on_change: Callable[[], None] = on_change or (lambda: None)
        self._inform = inform or (lambda message: None)
        self._connections: dict[str, Connection] = {}
        self._tools: dict[str, McpTool] = {}
        self._told: set[str] = set()
        self._closing: set[asyncio.Task[None]] = set()
        #: Servers the user disabled (sidecar/setMcpServerEnabled): kept for the life of this process, across
        #: settings changes; not written anywhere.
        self._disabled: set[str] = set()
        #: Set on every status or tool list change; the starts a turn already waited for (see wait_for_starting).
        self._change = asyncio.Event()
        self._waited: weakref.WeakSet[Connection] = weakref.WeakSet()
        #: Asks whether a workspace's server may start (None: none ever starts, there is nobody to ask).
        self._approve = approve
        #: Every server the settings want, workspace servers still waiting for approval included.
        self._wanted: dict[str, ServerConfig] = {}
        #: The user's answer for each workspace server definition asked about (sidecar/mcp/approval.py's key).
        self._verdicts: dict[ServerConfig, bool] = {}
        self._asking: dict[ServerConfig, asyncio.Task[None]] = {}

    # -- configuration --------------------------------------------------------------------------------
    def configure(self, servers: dict[str, ServerConfig]) -> None:
        """Apply a new set of servers: removed and changed ones stop, new, changed and failed ones start."""
        for name, connection in list(self._connections.items()):
            wanted = servers.get(name)
            if wanted is None or wanted != connection.config or connection.status == "failed":
                del self._connections[name]
                self._stop(connection)
        for name, config in servers.items():
            if name not in self._connections:
                self._start(config)
        self._changed()

    def apply_settings(
        self,
        raw: Any,
        extra: dict[str, ServerConfig] | None = None,
        *,
        retry: bool = True,
        workspace: AbstractSet[str] = frozenset(),
    ) -> None:
        """The `mcpServers` setting (problems told once each) plus `extra` servers (an ACP session's). The servers
        named in `workspace` came from the workspace: each starts once the user approved its definition. With
        `retry` false nothing happens while the servers wanted are the ones already configured."""
        servers, problems = parse_servers(raw)
        for problem in problems:
            self._tell(problem)
        for name in workspace & servers.keys():
            server = servers[name] = dataclasses.replace(servers[name], workspace=True, origin=WORKSPACE_ORIGIN)
            for secret in secret_references(server):
                self._tell(
                    f"MCP server {name!r} ({WORKSPACE_ORIGIN}): `${secret}` in its env expands to nothing: a "
                    "workspace's server never gets the sidecar's secrets."
                )
        self._wanted = {**servers, **(extra or {})}
        wanted = self._admitted()
        if not retry and wanted == {name: c.config for name, c in self._connections.items()}:
            return
        self.configure(wanted)

    def _admitted(self) -> dict[str, ServerConfig]:
        """The wanted servers that may run now: the user's, and the workspace's the user approved (the others are
        asked about once each, in the background, and start when approved)."""
        admitted: dict[str, ServerConfig] = {}
        for name, config in self._wanted.items():
            verdict = self._verdicts.get(config)
            if not config.workspace or verdict:
                admitted[name] = config
            elif verdict is None and config not in self._asking:
                self._asking[config] = asyncio.create_task(self._ask_about(config))
        return admitted

    async def _ask_about(self, config: ServerConfig) -> None:
        try:
            if self._approve is None:
                ok = False
                self._tell(
                    f"MCP server {config.name!r} ({WORKSPACE_ORIGIN}) is not started: nobody can be asked "
                    "to approve it here."
                )
            else:
                ok = await self._approve(config)
        except Exception:
            log.exception("asking about the workspace's MCP server %r failed; it is not started", config.name)
            ok = False
        finally:
            self._asking.pop(config, None)
        self._verdicts[config] = ok
        if not ok:
            self._tell(f"MCP server {config.name!r} ({WORKSPACE_ORIGIN}) was not approved; it is not started.")
        elif self._wanted.get(config.name) == config and config.name not in self._connections:
            self._start(config)
            self._changed()

    def _start(self, config: ServerConfig) -> None:
        """Start the server, or (disabled) only hold its config and the status `disabled`."""
        disabled = config.name in self._disabled
        connection = Connection(config, self._changed, disabled=disabled)
        self._connections[config.name] = connection
        if not disabled:
            connection.start()

    def _stop(self, connection: Connection) -> None:
        task = asyncio.create_task(connection.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def restart(self, name: str) -> bool:
        """sidecar/restartMcpServer: False when no server has that name (or it is disabled)."""
        if name in self._disabled:
            return False
        connection = self._connections.pop(name, None)
        if connection is None:
            return False
        self._told = {m for m in self._told if not m.startswith(f"MCP server {name!r}")}
        await connection.aclose()
        self._start(connection.config)
        self._changed()
        return True

    async def set_enabled(self, name: str, enabled: bool) -> bool:
        """sidecar/setMcpServerEnabled: disabling stops the server's process and takes its tools from the model;
        enabling starts it again. False when no server has that name."""
        connection = self._connections.get(name)
        if connection is None:
            return False
        if enabled == (name not in self._disabled):
            return True
        if enabled:
            self._disabled.discard(name)
            self._told = {m for m in self._told if not m.startswith(f"MCP server {name!r}")}
        else:
            self._disabled.add(name)
        del self._connections[name]
        self._start(connection.config)  # a disabled one is not started
        self._changed()
        if connection.started:
            await connection.aclose()
        return True

    async def aclose(self) -> None:
        """Stop every server (their process groups end) and wait for it."""
        for task in list(self._asking.values()):
            task.cancel()
        connections, self._connections = list(self._connections.values()), {}
        closing = [c.aclose() for c in connections] + list(self._closing)
        if closing:
            await asyncio.gather(*closing, return_exceptions=True)
        self._tools = {}

    async def wait_for_starting(self, report: Callable[[str], None]) -> list[str]:
        """Before a turn's first model request: wait for the servers still starting (each start waited for once,
        each server up to its `timeout`, at most START_WAIT_CAP_S), naming each through `report`. Returns one
        sentence per server the turn goes on without because it is still starting (one that failed meanwhile was
        already told, with its cause)."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        deadlines = {
            c: now + min(c.config.timeout_s, START_WAIT_CAP_S)
            for c in self._connections.values()
            if c.status == "starting" and c.started and c not in self._waited
        }
        for connection in deadlines:
            self._waited.add(connection)
            report(f"Waiting for MCP server {connection.config.name!r} to start…")
        pending = dict(deadlines)
        while pending:
            pending = {c: d for c, d in pending.items() if c.status == "starting" and d > loop.time()}
            if not pending:
                break
            self._change.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._change.wait(), min(pending.values()) - loop.time())
        without: list[str] = []
        for connection in deadlines:
            name, bound = connection.config.name, min(connection.config.timeout_s, START_WAIT_CAP_S)
            if connection.status == "starting":
                without.append(
                    f"MCP server {name!r} did not finish starting within {bound:g} s: this turn goes on "
                    "without its tools (they are offered from the next request once it is ready)."
                )
        return without

    # -- state ----------------------------------------------------------------------------------------
    def servers(self) -> list[ServerState]:
        """Every configured server with its status and tool names."""
        by_server: dict[str, list[str]] = {}
        for tool in self._tools.values():
            by_server.setdefault(tool.server.name, []).append(tool.name)
        return [
            ServerState(name, c.status, by_server.get(name, []), c.error)
            for name, c in sorted(self._connections.items())
        ]

    def connection(self, name: str) -> Connection | None:
        """The live connection to a server, if it runs."""
        return self._connections.get(name)

    def _changed(self) -> None:
        self._change.set()
        self._tools = self._table()
        for connection in self._connections.values():
            if connection.error is not None:
                self._tell(connection.error)
        with contextlib.suppress(Exception):
            self.on_change()

    def _tell(self, message: str) -> None:
        """Each problem once: in the log (an editor's "Show log" finds it there) and to `inform`."""
        if message not in self._told:
            self._told.add(message)
            log.warning("%s", message)
            self._inform(message)

    def _table(self) -> dict[str, McpTool]:
        """Ready servers' enabled tools by model-facing name, servers in name order; a clash leaves the later out
        and is reported (never a silent overwrite)."""
        table: dict[str, McpTool] = {}
        for name, connection in sorted(self._connections.items()):
            if connection.status != "ready":
                continue
            for tool in connection.tools:
                if not tool.name or not tool_enabled(connection.config, tool.name):
                    continue
                qualified = qualified_name(name, tool.name)
                other = table.get(qualified)
                if other is not None:
                    self._tell(
                        f"MCP tool {tool.name!r} of server {name!r} and tool {other.tool.name!r} of server "
                        f"{other.server.name!r} both become {qualified!r}; the first is kept. Rename a server or "
                        "use excludeTools."
                    )
                    continue
                table[qualified] = McpTool(qualified, connection.config, tool)
        return table

    # -- tools ----------------------------------------------------------------------------------------
    def tool(self, name: str) -> McpTool | None:
        """The MCP tool declared under this name."""
        return self._tools.get(name)

    def tool_names(self) -> list[str]:
        """The names of every MCP tool declared to the model."""
        return list(self._tools)

    def declarations(self) -> list[dict[str, Any]]:
        """FunctionDeclarations with the schema as `parametersJsonSchema` (after the reference's one cleanup)."""
        return [
            {
                "name": t.name,
                "description": t.tool.description or f"{t.tool.name} ({t.server.name} MCP server)",
                "parametersJsonSchema": clean_schema(t.tool.input_schema),
            }
            for t in self._tools.values()
        ]

    def resources(self) -> list[tuple[str, str, str]]:
        """(server, uri, name) of every ready server's listed resources."""
        return [
            (name, r.uri, r.name)
            for name, c in sorted(self._connections.items())
            if c.status == "ready"
            for r in c.resources
        ]

    async def read_resource(self, uri: str, server: str | None = None) -> Converted:
        """resources/read on the server that lists `uri` (or the one named): text wrapped as untrusted, blobs as
        inline data."""
        owners = [s for s, u, _ in self.resources() if u == uri and (server is None or s == server)]
        if server is not None and not owners and server in self._connections:
            owners = [server]
        if not owners:
            listed = ", ".join(u for _, u, _ in self.resources()[:20]) or "none"
            return Converted(f"No MCP server lists the resource {uri!r}. Listed resources: {listed}.", True)
        try:
            result = await self._connections[owners[0]].read(uri)
        except CallFailed as exc:
            self._changed()
            return Converted(str(exc), True)
        return convert_resource(uri, result)

    async def call(self, name: str, args: dict[str, Any]) -> Converted:
        """Run a tool; every failure comes back in words (a cancelled turn raises CancelledError, after the SDK
        has told the server)."""
        entry = self._tools.get(name)
        if entry is None:
            return Converted(f"MCP tool {name!r} is not available (its server stopped or no longer lists it).", True)
        connection = self._connections.get(entry.server.name)
        if connection is None:
            return Converted(f"MCP server {entry.server.name!r} is not running.", True)
        try:
            result = await connection.call(entry.tool.name, args)
        except CallFailed as exc:
            self._changed()
            return Converted(str(exc), True)
        except Exception as exc:  # a result the SDK could not read, say
            log.exception("MCP call %s failed", name)
            return Converted(f"MCP tool {name!r} failed: {exc}", True)
        return convert(entry.tool.name, args, result)
