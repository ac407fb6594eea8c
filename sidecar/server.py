"""The JSON-RPC server: thin handlers that decode params, call a service, and encode the result."""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from sidecar import __version__, errors, hooks
from sidecar.backend import Backend
from sidecar.chat import ChatService
from sidecar.compaction_service import Compactor, Trigger
from sidecar.core.compaction import tool_output_threshold
from sidecar.core.ide_context import IdeContextParams, decode_open_files, normalize
from sidecar.editor_bridge import Notifier, ToolHost, WorkDone
from sidecar.logging_setup import register_secret
from sidecar.paths import data_home, project_id
from sidecar.recording import SessionStore
from sidecar.session_recorder import Recorder
from sidecar.sessions import SessionService
from sidecar.settings import Settings, decode_settings
from sidecar.tool_outputs import ToolOutputSaver
from sidecar.tool_runner import ToolRunner
from sidecar.tools import ToolRegistry
from sidecar.transport import SidecarProtocol, run_stdio
from sidecar.watcher import WorkspaceWatcher
from sidecar.wire import (
    CompressParams,
    Empty,
    ImportParams,
    SendMessageParams,
    SessionParams,
    TranscriptParams,
    to_wire,
)
from sidecar.workspace_settings import read_workspace_settings, settings_path

log = logging.getLogger(__name__)

P = TypeVar("P", bound=msgspec.Struct)


class SidecarServer(LanguageServer):
    """pygls server holding the sidecar's services; see docs/protocol.md for the methods."""

    def __init__(self) -> None:
        super().__init__("sidecar", __version__, protocol_cls=SidecarProtocol)
        self._init_options: Any = None
        self._config_section: Any = None
        self._last_problems: set[str] = set()
        self.settings = Settings()
        self.workspace_folders: list[str] = []
        self.backend = Backend(lambda: self.settings, self.show_info)
        compactor = Compactor(
            lambda: self.settings,
            self.backend.client,
            self._save_tool_output,
            self._run_pre_compress_hooks,
            lambda: self.workspace_folders,
        )
        self._store: SessionStore | None = None
        recorder = Recorder(self.session_store, lambda: self.settings.model, self.show_warning)
        registry = ToolRegistry(
            lambda: self.workspace_folders,
            save_output=self._save_tool_output,
            output_threshold=self._tool_output_threshold,
            editor_text=self._editor_text,
        )
        tools = ToolRunner(
            registry,
            ToolHost(self),
            approval_mode=lambda: self.settings.approval_mode,
            trusted=lambda: self.chat.ide.trusted is not False,
            track=lambda path: self.chat.track_file(path),
        )
        self.chat = ChatService(
            lambda: self.settings, self.backend.client, Notifier(self), compactor, recorder, tools
        )
        self.chat.backend_label = self.backend.describe
        self.sessions = SessionService(self.chat)
        self._tool_outputs: ToolOutputSaver | None = None
        self.watcher: WorkspaceWatcher | None = None

    def _tool_output_threshold(self) -> int:
        return tool_output_threshold(self.settings.effective_token_limit(), self.chat.conversation.last_prompt_tokens)

    def _editor_text(self, path: Path) -> str | None:
        """An open editor buffer's current text, when the client syncs documents to us."""
        document = self.workspace.text_documents.get(from_fs_path(str(path)) or "")
        return None if document is None else document.source

    def session_store(self) -> SessionStore:
        if self._store is None or self._store.project_root != os.path.realpath(self.project_root):
            self._store = SessionStore(self.project_root, home=data_home())
        return self._store

    @property
    def project_root(self) -> str:
        return self.workspace_folders[0] if self.workspace_folders else os.getcwd()

    def session_dir(self) -> Path:
        """Where this session's data lives (tool outputs saved by compaction, …), created 0700."""
        path = data_home() / "sessions" / project_id(self.project_root) / self.chat.conversation.session_id
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path

    def _save_tool_output(self, content: str, tool_name: str) -> Path:
        directory = self.session_dir()
        if self._tool_outputs is None or self._tool_outputs.directory.parent != directory:
            self._tool_outputs = ToolOutputSaver(directory)
        return self._tool_outputs(content, tool_name)

    async def _run_pre_compress_hooks(self, trigger: Trigger) -> None:
        specs = self.settings.hooks.pre_compress
        if specs:
            await hooks.run_pre_compress(
                specs,
                session_id=self.chat.conversation.session_id,
                transcript_path=self.transcript_path(),
                cwd=self.project_root,
                trigger=trigger,
            )

    def transcript_path(self) -> str:
        path = self.chat.recorder.path
        return str(path) if path is not None and path.exists() else ""

    # -- messages to the user ------------------------------------------------------------------------
    def show(self, kind: lsp.MessageType, text: str) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=text))

    def show_info(self, text: str) -> None:
        self.show(lsp.MessageType.Info, text)

    def show_warning(self, text: str) -> None:
        self.show(lsp.MessageType.Warning, f"Sidecar: {text}")

    # -- settings -----------------------------------------------------------------------------------
    def apply_settings(self) -> None:
        """Defaults < initializationOptions < didChangeConfiguration < the workspace's .sidecar/settings.json."""
        settings, problems = decode_settings(self._init_options)
        settings, more = decode_settings(self._config_section, base=settings)
        section, file_problems = read_workspace_settings(self.workspace_folders, self.chat.ide.trusted is True)
        settings, from_file = decode_settings(section, base=settings)
        self.settings = settings
        register_secret(settings.api_key)
        messages = [p.message() for p in [*problems, *more, *from_file]] + file_problems
        for message in messages:
            if message not in self._last_problems:  # each problem is shown once until it goes away
                log.warning("%s", message)
                self.show(lsp.MessageType.Warning, message)
        self._last_problems = set(messages)

    def on_files_changed(self, paths: set[str]) -> None:
        settings_files = {os.path.realpath(settings_path(root)) for root in self.workspace_folders}
        if paths & settings_files:
            log.info("workspace settings changed; reloading")
            self.apply_settings()
            self.chat.push_usage()
        self.chat.files_changed(paths - settings_files)

    async def start_watching(self) -> None:
        if not self.workspace_folders:
            return
        loop = asyncio.get_running_loop()
        watcher = WorkspaceWatcher(self.workspace_folders, loop, self.on_files_changed)
        try:
            await loop.run_in_executor(None, watcher.start)
        except Exception:
            log.exception("the workspace watcher could not start; files changed on disk will not be reported")
            return
        self.watcher = watcher
        # The settings file may have changed between initialize and the first watch: read it once more.
        self.on_files_changed({os.path.realpath(settings_path(root)) for root in self.workspace_folders})
        log.info("start-up complete: watching the workspace, settings re-read")

    def start(self, stdin: Any, stdout: Any) -> None:
        run_stdio(self, stdin, stdout)

    # -- progress ----------------------------------------------------------------------------------
    async def start_progress(self, title: str) -> WorkDone:
        window = self.client_capabilities.window if self.protocol.client_capabilities else None
        if window is None or not window.work_done_progress:
            return WorkDone(self, None)
        token = f"sidecar-{uuid.uuid4().hex[:12]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), timeout=5)
        except Exception:
            log.info("client did not accept a progress token; continuing without progress")
            return WorkDone(self, None)
        self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=True))
        return WorkDone(self, token)


def _decode(method: str, raw: Any, kind: type[P], *, whole_unicode: bool = True) -> P:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise errors.invalid_params(method, f"params must be an object, got {type(raw).__name__}")
    try:
        if whole_unicode:
            msgspec.json.encode(raw)  # JSON allows "\ud800"; text that is not valid Unicode must not get further
    except UnicodeEncodeError:
        raise errors.invalid_params(method, "a string holds a lone UTF-16 surrogate (not valid Unicode)") from None
    except (TypeError, OverflowError) as exc:
        raise errors.invalid_params(method, str(exc)) from None
    try:
        return msgspec.convert(raw, kind)
    except msgspec.ValidationError as exc:
        raise errors.invalid_params(method, exc) from None


def _request(
    server: SidecarServer, method: str, kind: type[P]
) -> Callable[[Callable[[P], Awaitable[Any]]], None]:
    """Register `fn(params) -> result` for a sidecar/* request, with msgspec decoding and clean errors."""

    def register(fn: Callable[[P], Awaitable[Any]]) -> None:
        async def handler(raw: Any) -> Any:
            params = _decode(method, raw, kind)
            try:
                return to_wire(await fn(params))
            except (errors.SidecarError, asyncio.CancelledError):
                raise
            except Exception as exc:
                log.exception("%s failed", method)
                raise errors.SidecarError(-32603, f"{method} failed: {type(exc).__name__}: {exc}") from None

        server.feature(method)(handler)

    return register


def _notification(server: SidecarServer, method: str, kind: type[P]) -> Callable[[Callable[[P], None]], None]:
    """Register `fn(params)` for a sidecar/* notification; bad params are logged and the message dropped."""

    def register(fn: Callable[[P], None]) -> None:
        def handler(raw: Any) -> None:
            try:
                params = _decode(method, raw, kind, whole_unicode=False)  # notifications check their own parts
            except errors.SidecarError as exc:
                log.warning("dropping %s: %s", method, exc.message)
                return
            fn(params)

        server.feature(method)(handler)

    return register


def _workspace_folders(params: lsp.InitializeParams) -> list[str]:
    uris = [f.uri for f in params.workspace_folders or []] or ([params.root_uri] if params.root_uri else [])
    folders = [to_fs_path(uri) for uri in uris]
    if not folders and params.root_path:
        folders = [params.root_path]
    return [f for f in folders if f]


def build_server() -> SidecarServer:
    server = SidecarServer()
    chat = server.chat

    @server.feature(lsp.INITIALIZE)
    def on_initialize(params: lsp.InitializeParams) -> None:
        server._init_options = params.initialization_options
        server.workspace_folders = _workspace_folders(params)
        server.apply_settings()

    @server.feature(lsp.INITIALIZED)
    async def on_initialized(_params: lsp.InitializedParams) -> None:
        # Heavy imports happen now, after `initialize` has been answered, off the event loop.
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, _warm_imports)
        chat.push_usage()
        await server.start_watching()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        server._config_section = params.settings
        server.apply_settings()
        chat.push_usage()

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(_params: Any) -> None:
        chat.recorder.close()
        if server.watcher is not None:
            await asyncio.get_running_loop().run_in_executor(None, server.watcher.stop)
        await server.backend.aclose()

    @_request(server, "sidecar/sendMessage", SendMessageParams)
    async def send_message(params: SendMessageParams) -> Any:
        editor = chat.ide.current  # before any await: the editor context this message was sent with
        work = await server.start_progress("Gemini")
        try:
            return await chat.send_message(params.text, work, editor)
        finally:
            work.end()

    @_request(server, "sidecar/getTokenUsage", Empty)
    async def get_token_usage(_params: Empty) -> Any:
        return chat.usage()

    @_request(server, "sidecar/compress", CompressParams)
    async def compress(params: CompressParams) -> Any:
        return await chat.compress(params.instructions)

    @server.command("sidecar.compressConversation")
    async def compress_command(*args: Any) -> Any:
        instructions = args[0] if args and isinstance(args[0], str) else None
        return to_wire(await chat.compress(instructions))

    sessions = server.sessions

    @_request(server, "sidecar/newSession", Empty)
    async def new_session(_params: Empty) -> Any:
        return await sessions.new()

    @_request(server, "sidecar/listSessions", Empty)
    async def list_sessions(_params: Empty) -> Any:
        return sessions.list()

    @_request(server, "sidecar/resumeSession", SessionParams)
    async def resume_session(params: SessionParams) -> Any:
        return await sessions.resume(params.session_id)

    @_request(server, "sidecar/getTranscript", TranscriptParams)
    async def get_transcript(params: TranscriptParams) -> Any:
        return sessions.transcript(params.session_id)

    @_request(server, "sidecar/importSession", ImportParams)
    async def import_session(params: ImportParams) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, sessions.import_gemini, params.path)

    @_request(server, "sidecar/undoCompaction", Empty)
    async def undo_compaction(_params: Empty) -> Any:
        return await sessions.undo_compaction()

    @_notification(server, "sidecar/ideContext", IdeContextParams)
    def ide_context(params: IdeContextParams) -> None:
        if chat.set_ide_context(normalize(decode_open_files(params.open_files)), params.is_trusted):
            server.apply_settings()  # workspace hooks follow the trust decision

    return server


def _warm_imports() -> None:
    import google.genai  # noqa: F401
