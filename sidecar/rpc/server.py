"""The JSON-RPC server: wires the services to one Session, runs the LSP lifecycle, registers the handlers."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from sidecar import __version__
from sidecar.app import FrontEnd, build_services
from sidecar.config.workspace_file import settings_path
from sidecar.gemini.backend import key_hint
from sidecar.mcp.manager import McpManager
from sidecar.mcp.status import MCP_STATUS, mcp_status
from sidecar.protocol import methods
from sidecar.protocol.editor_settings import split_section
from sidecar.protocol.memory import MemoryInfo
from sidecar.protocol.sessions import TodoItem, TodosChangedParams
from sidecar.protocol.types import to_wire
from sidecar.rpc import editor
from sidecar.rpc.handlers import chat as chat_handlers
from sidecar.rpc.handlers import mcp as mcp_handlers
from sidecar.rpc.handlers import memory as memory_handlers
from sidecar.rpc.handlers import sessions as session_handlers
from sidecar.rpc.handlers import window as window_handlers
from sidecar.rpc.transport import SidecarProtocol, run_stdio
from sidecar.session import Session
from sidecar.watcher import WorkspaceWatcher

log = logging.getLogger(__name__)


class SidecarServer(LanguageServer):
    """pygls server holding the sidecar's services; see docs/protocol.md for the methods."""

    def __init__(self) -> None:
        super().__init__("sidecar", __version__, protocol_cls=SidecarProtocol)
        protocol = self.protocol
        assert isinstance(protocol, SidecarProtocol)
        self.session = Session()
        self.mcp_started = False
        host = editor.ToolHost(self, protocol)
        front_end = FrontEnd(
            notifier=editor.Notifier(self, protocol),
            inform=self.show_info,
            warn=self.show_warning,
            tools=host,
            ask_hooks=host.confirm,
            editor_text=self._editor_text,
            on_mcp_change=self._mcp_changed,
            on_memory_change=self._memory_changed,
            on_todos_change=self._todos_changed,
            tell_skipped_memory=False,  # the editors say it from sidecar/memoryChanged (skippedProjectFiles)
        )
        self.services = build_services(self.session, front_end)
        self.live = self.services.live
        assert self.services.backend is not None and self.services.mcp is not None
        self.backend = self.services.backend
        #: MCP servers (sidecar/mcp/): started after `initialized`, re-applied with the settings.
        self.mcp: McpManager = self.services.mcp
        self.watcher: WorkspaceWatcher | None = None

    def _editor_text(self, path: Path) -> str | None:
        """An open editor buffer's current text, when the client syncs documents to us."""
        document = self.workspace.text_documents.get(from_fs_path(str(path)) or "")
        return None if document is None else document.source

    # -- messages to the user ------------------------------------------------------------------------
    def show_info(self, text: str) -> None:
        """An information message in the editor (window/showMessage)."""
        editor.show(self, lsp.MessageType.Info, text)

    def show_warning(self, text: str) -> None:
        """A warning in the editor, prefixed with "Sidecar:"."""
        editor.show(self, lsp.MessageType.Warning, f"Sidecar: {text}")

    # -- settings -----------------------------------------------------------------------------------
    def apply_settings(self) -> None:
        """Layer the settings sources again (sidecar.config.layers); each new problem is shown once."""
        problems = self.session.reload_settings()
        self.live.settings_changed()
        for message in problems:
            log.warning("%s", message)
            editor.show(self, lsp.MessageType.Warning, message)
        if self.mcp_started:
            self.start_mcp()

    def start_mcp(self) -> None:
        """(Re)apply the mcpServers setting: only added, removed, changed and failed servers start or stop."""
        self.mcp_started = True
        self.mcp.apply_settings(self.session.settings.mcp_servers, workspace=self.session.sources.workspace_servers)

    def _mcp_changed(self) -> None:
        if self.mcp_started:
            self.protocol.notify(MCP_STATUS.name, to_wire(mcp_status(self.mcp)))

    def _memory_changed(self, info: MemoryInfo) -> None:
        self.protocol.notify(methods.MEMORY_CHANGED.name, to_wire(info))

    def _todos_changed(self, session_id: str, items: list[TodoItem]) -> None:
        self.protocol.notify(
            methods.TODOS_CHANGED.name, to_wire(TodosChangedParams(session_id=session_id, items=items))
        )

    def on_files_changed(self, paths: set[str]) -> None:
        """Files changed on disk (watcher thread hopped to the loop): settings reloaded, tracked files noted."""
        settings_files = {os.path.realpath(settings_path(root)) for root in self.session.workspace_folders}
        if paths & settings_files:
            log.info("workspace settings changed; reloading")
            self.apply_settings()
            self.live.push_usage()
        self.live.files_changed(paths - settings_files)

    async def start_watching(self) -> None:
        """Watch the workspace folders for changes (off the loop); a watcher that cannot start is logged."""
        folders = self.session.workspace_folders
        if not folders:
            return
        loop = asyncio.get_running_loop()
        watcher = WorkspaceWatcher(folders, loop, self.on_files_changed)
        try:
            await loop.run_in_executor(None, watcher.start)
        except Exception:
            log.exception("the workspace watcher could not start; files changed on disk will not be reported")
            return
        self.watcher = watcher
        # The settings file may have changed between initialize and the first watch: read it once more.
        self.on_files_changed({os.path.realpath(settings_path(root)) for root in folders})
        log.info("start-up complete: watching the workspace, settings re-read")

    def start(self, stdin: Any, stdout: Any) -> None:
        """Serve JSON-RPC on these streams until the client exits."""
        run_stdio(self, stdin, stdout)


def _workspace_folders(params: lsp.InitializeParams) -> list[str]:
    uris = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
    folders = [to_fs_path(uri) for uri in uris]
    if not folders and params.root_path:
        folders = [params.root_path]
    return [f for f in folders if f]


def build_server() -> SidecarServer:
    """The server with the LSP lifecycle and every sidecar/* handler registered."""
    server = SidecarServer()
    session = server.session

    @server.feature(lsp.INITIALIZE)
    def on_initialize(params: lsp.InitializeParams) -> None:
        session.sources.init_options = params.initialization_options
        session.ide.trusted = split_section(params.initialization_options)[2]  # known from the start when sent
        session.workspace_folders = _workspace_folders(params)
        server.backend.key_hint = key_hint(params.client_info.name if params.client_info else None)
        server.apply_settings()

    @server.feature(lsp.INITIALIZED)
    async def on_initialized(_params: lsp.InitializedParams) -> None:
        server.mcp_started = True  # from now on, a settings change re-applies the MCP servers
        # Recording (before anything can be said), MCP servers in the background, context files (memoryChanged).
        await server.services.start()
        # Heavy imports happen now, after `initialize` has been answered, off the event loop.
        await asyncio.get_running_loop().run_in_executor(None, _warm_imports)
        await server.start_watching()
        server.backend.warm_soon()  # the model client too: the first message does not wait to build it

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        before = session.sources.config_section or session.sources.init_options
        if _model_setting(params.settings) != _model_setting(before):
            session.sources.overrides.pop("model", None)  # the user set the model again: it wins over a switch
        session.sources.config_section = params.settings
        server.apply_settings()
        server.live.push_usage()

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(_params: Any) -> None:
        if server.watcher is not None:  # first: no file event reaches services that are shutting down
            await asyncio.get_running_loop().run_in_executor(None, server.watcher.stop)
        await server.services.aclose()

    chat_handlers.register(
        server,
        server.services.chat,
        server.live,
        trust_changed=server.apply_settings,
        compaction=server.services.compaction,
    )
    session_handlers.register(server, server.services.sessions, server.services.actions)
    mcp_handlers.register(server, server.mcp)
    memory_handlers.register(server, server.services.memory)
    window_handlers.register(server, server.services.window, server.live.push_usage)
    return server


def _model_setting(raw: Any) -> Any:
    """The `model` the editor's settings name (user's and workspace's values), to tell when the user changed it."""
    user, workspace, _ = split_section(raw)
    return tuple(v.get("model") if isinstance(v, dict) else None for v in (user, workspace))


def _warm_imports() -> None:
    import google.genai  # noqa: F401
    import mcp.client.session  # noqa: F401
