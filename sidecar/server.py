"""The JSON-RPC server: thin handlers that decode params, call a service, and encode the result."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from sidecar import __version__, errors
from sidecar.backend import Backend
from sidecar.chat import ChatService
from sidecar.settings import Settings, decode_settings
from sidecar.transport import SidecarProtocol, run_stdio
from sidecar.wire import Empty, MessageDelta, SendMessageParams, TokenUsage, to_wire

log = logging.getLogger(__name__)

P = TypeVar("P", bound=msgspec.Struct)


class SidecarServer(LanguageServer):
    """pygls server holding the sidecar's services; see docs/protocol.md for the methods."""

    def __init__(self) -> None:
        super().__init__("sidecar", __version__, protocol_cls=SidecarProtocol)
        self._init_options: Any = None
        self._config_section: Any = None
        self.settings = Settings()
        self.backend = Backend(lambda: self.settings, self.show_info)
        self.chat = ChatService(lambda: self.settings, self.backend.client, _Notifier(self))

    # -- messages to the user ------------------------------------------------------------------------
    def show(self, kind: lsp.MessageType, text: str) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=text))

    def show_info(self, text: str) -> None:
        self.show(lsp.MessageType.Info, text)

    # -- settings -----------------------------------------------------------------------------------
    def apply_settings(self) -> None:
        settings, problems = decode_settings(self._init_options)
        settings, more = decode_settings(self._config_section, base=settings)
        self.settings = settings
        for problem in [*problems, *more]:
            log.warning("%s", problem.message())
            self.show(lsp.MessageType.Warning, problem.message())

    def start(self, stdin: Any, stdout: Any) -> None:
        run_stdio(self, stdin, stdout)

    # -- progress ----------------------------------------------------------------------------------
    async def start_progress(self, title: str) -> _WorkDone:
        window = self.client_capabilities.window if self.protocol.client_capabilities else None
        if window is None or not window.work_done_progress:
            return _WorkDone(self, None)
        token = f"sidecar-{uuid.uuid4().hex[:12]}"
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), timeout=5)
        except Exception:
            log.info("client did not accept a progress token; continuing without progress")
            return _WorkDone(self, None)
        self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, cancellable=True))
        return _WorkDone(self, token)


class _WorkDone:
    """A running work-done progress (a no-op when the client has no progress support)."""

    def __init__(self, server: SidecarServer, token: str | None) -> None:
        self._server = server
        self._token = token

    def report(self, message: str) -> None:
        if self._token is not None:
            self._server.work_done_progress.report(self._token, lsp.WorkDoneProgressReport(message=message))

    def end(self, message: str | None = None) -> None:
        if self._token is not None:
            self._server.work_done_progress.end(self._token, lsp.WorkDoneProgressEnd(message=message))
            self._token = None


class _Notifier:
    def __init__(self, server: SidecarServer) -> None:
        self._server = server

    def message_delta(self, turn_id: str, text: str) -> None:
        self._server.protocol.notify("sidecar/messageDelta", to_wire(MessageDelta(turn_id=turn_id, text=text)))

    def token_usage(self, usage: TokenUsage) -> None:
        self._server.protocol.notify("sidecar/tokenUsage", to_wire(usage))

    def error(self, message: str) -> None:
        self._server.show(lsp.MessageType.Error, f"Sidecar: {message}")


def _decode(method: str, raw: Any, kind: type[P]) -> P:
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise errors.invalid_params(method, f"params must be an object, got {type(raw).__name__}")
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


def build_server() -> SidecarServer:
    server = SidecarServer()
    chat = server.chat

    @server.feature(lsp.INITIALIZE)
    def on_initialize(params: lsp.InitializeParams) -> None:
        server._init_options = params.initialization_options
        server.apply_settings()

    @server.feature(lsp.INITIALIZED)
    async def on_initialized(_params: lsp.InitializedParams) -> None:
        # Heavy imports happen now, after `initialize` has been answered, off the event loop.
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, _warm_imports)
        chat.push_usage()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_configuration(params: lsp.DidChangeConfigurationParams) -> None:
        server._config_section = params.settings
        server.apply_settings()
        chat.push_usage()

    @server.feature(lsp.SHUTDOWN)
    async def on_shutdown(_params: Any) -> None:
        await server.backend.aclose()

    @_request(server, "sidecar/sendMessage", SendMessageParams)
    async def send_message(params: SendMessageParams) -> Any:
        work = await server.start_progress("Gemini")
        try:
            return await chat.send_message(params.text, work)
        finally:
            work.end()

    @_request(server, "sidecar/getTokenUsage", Empty)
    async def get_token_usage(_params: Empty) -> Any:
        return chat.usage()

    return server


def _warm_imports() -> None:
    import google.genai  # noqa: F401
