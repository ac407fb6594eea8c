"""The ACP agent: initialize, sessions (new, load, resume, list, close), prompt, cancel and modes over the SDK."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from acp import PROTOCOL_VERSION, Client, RequestError
from acp.agent.connection import AgentSideConnection
from acp.schema import (
    AcpMcpServer,
    AgentCapabilities,
    CloseSessionResponse,
    ForkSessionResponse,
    HttpMcpServer,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    McpServerStdio,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    SseMcpServer,
)

from sidecar import __version__
from sidecar.acp import window
from sidecar.acp.rpc import INVALID_PARAMS, RESOURCE_NOT_FOUND, ClientOffers, Handler, NdjsonStdio, in_words
from sidecar.protocol import edge
from sidecar.protocol.errors import BUSY, METHOD_NOT_FOUND

if TYPE_CHECKING:  # the services are imported after initialize has been answered (see warm_up)
    from sidecar.acp.session import AcpSession
    from sidecar.recording.reader import SessionInfo as RecordedInfo

log = logging.getLogger(__name__)

McpServer = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio

PAGE_SIZE = 50
STDIO_LIMIT = 64 * 1024 * 1024  # one JSON-RPC line may carry a whole attached file


class SidecarAgent:
    """Implements acp.Agent. Every session has its own chat service; they share nothing but the process."""

    def __init__(self, user_settings: Path) -> None:
        self.user_settings = user_settings
        self.offers = ClientOffers()
        self.sessions: dict[str, AcpSession] = {}
        self.conn: AgentSideConnection | None = None
        self.transport: NdjsonStdio | None = None

    def on_connect(self, conn: Client) -> None:
        """Keep the connection: sessions send their updates and requests through it."""
        assert isinstance(conn, AgentSideConnection)
        self.conn = conn

    # -- lifecycle ------------------------------------------------------------------------------------
    async def initialize(
        self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None, **kwargs: Any
    ) -> InitializeResponse:
        """Record what the client offers (fs, compaction events) and advertise this agent's capabilities."""
        fs = getattr(client_capabilities, "fs", None)
        self.offers.read_text_file = bool(getattr(fs, "read_text_file", False))
        self.offers.write_text_file = bool(getattr(fs, "write_text_file", False))
        log.info(
            "client %s, protocol %s, fs read=%s write=%s, compaction=%s",
            getattr(client_info, "name", "?"),
            protocol_version,
            self.offers.read_text_file,
            self.offers.write_text_file,
            self.offers.compaction,
        )
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
            session_capabilities=SessionCapabilities(
                list=SessionListCapabilities(),
                resume=SessionResumeCapabilities(),
                close=SessionCloseCapabilities(),
                fork=SessionForkCapabilities(),
            ),
            mcp_capabilities=McpCapabilities(http=True, sse=True),  # stdio always (sidecar/mcp/)
        )
        asyncio.get_running_loop().call_soon(warm_up)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            auth_methods=[],
            agent_info=Implementation(name="sidecar", title="Sidecar (Gemini)", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        """No login is needed (the key comes from the settings or environment): any method is refused in words."""
        raise RequestError(
            INVALID_PARAMS,
            edge.bad_params(
                "authenticate",
                f"unknown method {method_id!r}. The "
                "sidecar needs no login: set GEMINI_API_KEY, or apiKey in the user settings file.",
            ),
        )

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError(
                RESOURCE_NOT_FOUND,
                f"Unknown session {session_id!r}: create it with session/new or open it with session/load first.",
                {"sessionId": session_id},
            )
        return session

    async def _open(self, cwd: str, session_id: str | None = None) -> AcpSession:
        assert self.conn is not None and self.transport is not None
        from sidecar.acp.session import AcpSession

        session = AcpSession(self.conn, self.transport, self.offers, cwd, self.user_settings, session_id)
        await session.start()
        return session

    # -- sessions -------------------------------------------------------------------------------------
    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        """A new recorded session for `cwd`; its first updates follow the response that names it."""
        session = await self._open(cwd)
        session.use_mcp_servers(mcp_servers)
        self.sessions[session.session_id] = session
        assert self.transport is not None
        session.outbox.hold()  # updates wait until the client has the response that names the session
        self.transport.announce(session.session_id, session.outbox.release)
        session.announce()
        session.backend.warm_soon()  # the model client: the first prompt does not wait to build it
        await session.backend.warmed()  # answered once it is built: a prompt sent at once does not wait for it
        return NewSessionResponse(
            session_id=session.session_id,
            modes=session.modes(),
            config_options=window.model_options(session.services.window.known_models()),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: list[McpServer] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse | None:
        """Open a recorded session and replay its (compacted) conversation as updates."""
        session = await self._attach(cwd, session_id, replay=True)
        session.use_mcp_servers(mcp_servers)
        return LoadSessionResponse(
            modes=session.modes(), config_options=window.model_options(session.services.window.known_models())
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """Open a recorded session without replaying it."""
        session = await self._attach(cwd, session_id, replay=False)
        session.use_mcp_servers(mcp_servers)
        return ResumeSessionResponse(
            modes=session.modes(), config_options=window.model_options(session.services.window.known_models())
        )

    async def _attach(self, cwd: str, session_id: str, *, replay: bool) -> AcpSession:
        live = self.sessions.get(session_id)
        if live is not None:
            if live.turn is not None and not live.turn.done():
                raise RequestError(BUSY, f"Session {session_id} is running a prompt; cancel it or wait first.")
            if replay:
                live.send_replay()
            live.announce()
            await live.outbox.flush()
            return live
        session = await self._open(cwd, session_id)
        try:
            await session.resume(session_id, replay=replay)
        except BaseException:
            await session.close()
            raise
        self.sessions[session_id] = session
        session.backend.warm_soon()
        await session.backend.warmed()  # as session/new: a prompt sent at once does not wait for the model client
        return session

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        """Recorded sessions, newest first, of one folder or of all; PAGE_SIZE a page."""
        start = 0
        if cursor is not None:
            if not cursor.isdigit():
                raise RequestError(
                    INVALID_PARAMS,
                    edge.bad_params("session/list", f"cursor {cursor!r} is not one this agent gave out."),
                )
            start = int(cursor)
        infos = await asyncio.get_running_loop().run_in_executor(None, _recorded, cwd)
        page = infos[start : start + PAGE_SIZE]
        listed = [
            SessionInfo(session_id=i.session_id, cwd=i.project_root, title=i.title, updated_at=i.last_updated)
            for i in page
        ]
        more = start + PAGE_SIZE < len(infos)
        return ListSessionsResponse(sessions=listed, next_cursor=str(start + PAGE_SIZE) if more else None)

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse | None:
        """End a session (its recording stays)."""
        session = self._session(session_id)
        del self.sessions[session_id]
        await session.close()
        return CloseSessionResponse()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse | None:
        """Choose the approval mode (default, autoEdit, yolo) for this session."""
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse | None:
        """The `model` option switches the session's model; there is no other (settings come from the files)."""
        if config_id == window.MODEL_OPTION:
            services = self._session(session_id).services
            listed = await window.switch_model(services, "session/set_config_option", value)
            return SetSessionConfigOptionResponse(config_options=window.model_options(listed))
        raise RequestError(
            INVALID_PARAMS,
            edge.bad_params(
                "session/set_config_option",
                f"this agent has no config option {config_id!r}; settings come from the settings files (docs/acp.md).",
            ),
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: list[McpServer] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """session/fork (unstable): a new session with the whole history of `session_id`, which stays as it was."""
        from sidecar.protocol import errors

        live = self.sessions.get(session_id)
        if live is not None:
            live.services.recorder.sync()  # the fork reads the parent's file: everything said so far is in it
        session = await self._open(cwd)
        try:
            session.require_recorded(session_id)
            await session.fork_from(session_id)
        except errors.SidecarError as exc:
            await session.close()
            raise RequestError(exc.code, exc.message) from None
        except BaseException:
            await session.close()
            raise
        self.sessions[session.session_id] = session
        assert self.transport is not None
        session.outbox.hold()  # updates wait until the client has the response that names the session
        self.transport.announce(session.session_id, session.outbox.release)
        session.announce()
        return ForkSessionResponse(
            session_id=session.session_id,
            modes=session.modes(),
            config_options=window.model_options(session.services.window.known_models()),
        )

    # -- turns ----------------------------------------------------------------------------------------
    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        """Run one prompt (a turn or a slash command) and answer with its stop reason."""
        stop = await self._session(session_id).prompt(prompt)
        return PromptResponse(stop_reason=stop)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        """Stop the session's running turn; the prompt answers `cancelled`."""
        session = self.sessions.get(session_id)
        if session is None:
            log.warning("session/cancel for unknown session %r ignored", session_id)
            return
        session.cancel()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """`_sidecar/listMcpServers {sessionId}`; any other extension method: Method not found, in words."""
        from sidecar.protocol.methods import LIST_MCP_SERVERS

        if method == LIST_MCP_SERVERS.name:  # `_sidecar/listMcpServers {sessionId}`: the session's MCP servers
            from sidecar.mcp.status import server_rows

            session = self._session(str(params.get("sessionId")))
            return {"servers": [msgspec.to_builtins(row) for row in server_rows(session.mcp)]}
        raise RequestError(METHOD_NOT_FOUND, f"Method not found: _{method} is not an extension this agent serves.")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        """Extension notifications are logged and ignored."""
        log.info("ignoring extension notification _%s", method)

    async def aclose(self) -> None:
        """Close every session (each in its shutdown order); one that fails is logged, the others still close."""
        for session in list(self.sessions.values()):
            try:
                await session.close()
            except Exception:
                log.exception("closing session %s", session.session_id)
        self.sessions.clear()


def _recorded(cwd: str | None) -> list[RecordedInfo]:
    """Recorded sessions, newest first: of one folder, or of every folder the sidecar has recorded."""
    from sidecar.recording.layout import data_home, project_id
    from sidecar.recording.reader import list_sessions

    root = data_home() / "sessions"
    if cwd is not None:
        directories = [root / project_id(cwd)]
    else:
        directories = sorted(p for p in root.glob("*") if p.is_dir()) if root.is_dir() else []
    infos: list[RecordedInfo] = []
    for directory in directories:
        if directory.is_dir():
            infos.extend(list_sessions(directory))
    infos.sort(key=lambda info: info.last_updated, reverse=True)
    return infos


def _capture_offers(agent: SidecarAgent, handler: Handler) -> Handler:
    """The SDK's ClientCapabilities has no `session.compaction` (unstable): read it from the raw params."""

    async def wrapped(method: str, params: Any, is_notification: bool) -> Any:
        if method == "initialize" and isinstance(params, dict):
            caps = params.get("clientCapabilities")
            session = caps.get("session") if isinstance(caps, dict) else None
            agent.offers.compaction = isinstance(session, dict) and isinstance(session.get("compaction"), dict)
        return await handler(method, params, is_notification)

    return wrapped


async def serve(user_settings: Path) -> None:
    """Serve ACP on this process's stdin/stdout until the client closes stdin."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STDIO_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    write_transport, write_protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(), os.fdopen(sys.stdout.fileno(), "wb", closefd=False)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    transport = NdjsonStdio(reader, writer)
    agent = SidecarAgent(user_settings)
    agent.transport = transport
    conn = AgentSideConnection(agent, transport, listening=False, use_unstable_protocol=True)
    inner = conn._conn  # the SDK offers no hook between its router and the wire; see rpc.in_words
    inner._handler = in_words(window.session_models(agent, _capture_offers(agent, inner._handler)))
    try:
        await conn.listen()
    finally:
        await agent.aclose()
        await asyncio.shield(conn.close())


_warming: asyncio.Future[None] | None = None


def warm_up() -> None:
    """Import the chat services off the event loop once initialize has been answered (as the editor protocol
    imports google-genai after its initialize): session/new then finds them loaded."""
    global _warming
    if _warming is None:
        _warming = asyncio.get_running_loop().run_in_executor(None, _import_services)


def _import_services() -> None:
    import google.genai  # noqa: F401  (the model client's SDK: ~0.4 s, not in the first prompt)

    import sidecar.acp.session  # noqa: F401

    gc.freeze()  # keep the ~100k long-lived objects of the imports out of the collector's way (as cli.py does)


def run(user_settings: Path) -> int:
    """Serve ACP on stdio until the client closes it (the `sidecar acp` command)."""
    log.info("serving ACP v%d on stdio (agent-client-protocol %s)", PROTOCOL_VERSION, _sdk_version())
    gc.freeze()
    asyncio.run(serve(user_settings))
    return 0


def _sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version("agent-client-protocol")
    except Exception:
        return "?"


__all__ = ["PAGE_SIZE", "STDIO_LIMIT", "SidecarAgent", "run", "warm_up"]
