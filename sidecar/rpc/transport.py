"""JSON-RPC framing on stdio: a reader that survives garbage, and a protocol that keeps sidecar/* params as dicts."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Generator
from concurrent.futures import Future
from typing import Any, TypeVar

import msgspec
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    lsp_method,
)

from sidecar.protocol import errors, methods
from sidecar.protocol.version import EXPERIMENTAL_KEY, PROTOCOL_VERSION

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_LINES = 32
#: LSP's ServerNotInitialized: a request came before `initialize`.
SERVER_NOT_INITIALIZED = -32002


class SidecarProtocol(LanguageServerProtocol):
    """LSP protocol whose custom messages keep their params (and results) as plain JSON values.

    pygls turns unknown-method params into namedtuples, renaming keys that are not identifiers;
    we validate with msgspec instead, so we hand the handlers the JSON exactly as it arrived.
    """

    _custom_result_ids: set[Any]
    #: The LSP lifecycle as the transport saw it: `initialize` received, `shutdown` received.
    lifecycle_started = False
    lifecycle_ended = False

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Generator[Any, Any, lsp.InitializeResult]:
        """LSP's initialize, with the sidecar's protocol version in `capabilities.experimental` for the editors."""
        result: lsp.InitializeResult = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {EXPERIMENTAL_KEY: {"protocolVersion": PROTOCOL_VERSION}}
        return result

    def structure_raw(self, data: dict[str, Any]) -> Any:
        """sidecar/* messages as plain JSON-RPC messages (decoded by the dispatcher), the rest as pygls does."""
        method = data.get("method")
        if isinstance(method, str) and method.startswith(methods.PREFIX):
            if "id" in data:
                return JsonRPCRequestMessage(
                    id=data["id"], method=method, jsonrpc=data["jsonrpc"], params=data.get("params")
                )
            return JsonRPCNotification(method=method, jsonrpc=data["jsonrpc"], params=data.get("params"))
        if method is None and "id" in data and "error" not in data and data["id"] not in self._result_types:
            # A response to one of our own custom requests (e.g. sidecar/confirmToolCall).
            return JsonRPCResponseMessage(id=data["id"], jsonrpc=data["jsonrpc"], result=data.get("result"))
        return self._structure_lsp(data)

    def _structure_lsp(self, data: dict[str, Any]) -> Any:
        # pygls structures bottom-up through json's object_hook; re-run that on a copy of the message.
        return json.loads(json.dumps(data), object_hook=self.structure_message)

    def _send_handler_result(self, future: Future[Any], *, msg_id: Any) -> None:
        """Answer a handler's result; expected errors (bad params, model errors) are logged briefly, not as crashes."""
        if not future.cancelled() and isinstance(future.exception(), errors.SidecarError):
            self._request_futures.pop(msg_id, None)
            exc = future.exception()
            assert isinstance(exc, errors.SidecarError)
            log.info("request %s answered with error %d: %s", msg_id, exc.code, exc.message)
            data = msgspec.to_builtins(exc.data)
            self._send_response(msg_id, error=lsp.ResponseError(code=exc.code, message=exc.message, data=data))
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _run_generator(self, future: Any, *, gen: Any, result_future: Any) -> None:
        """pygls' built-in handlers resume after the user's handler; a cancelled one just cancels them too."""
        if future is not None and future.cancelled():
            result_future.cancel()
            return
        super()._run_generator(future, gen=gen, result_future=result_future)

    def structure(self, value: Any, kind: type[T]) -> T:
        """An lsprotocol object from its JSON form (e.g. the WorkspaceEdit of workspace/applyEdit)."""
        return self._converter.structure(value, kind)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer a request with a JSON-RPC error."""
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _classify(data: Any) -> tuple[Any, str | None]:
    """(id, problem) for a decoded JSON value; problem is None when it is a well-formed JSON-RPC message."""
    if not isinstance(data, dict):
        return None, "a JSON-RPC message must be an object"
    msg_id = data.get("id")
    if msg_id is not None and not isinstance(msg_id, str | int):
        return None, "id must be a string or a number"
    if data.get("jsonrpc") != "2.0":
        return msg_id, 'jsonrpc must be "2.0"'
    if "method" in data:
        if not isinstance(data["method"], str):
            return msg_id, "method must be a string"
        return msg_id, None
    if "id" not in data:
        return None, "a message needs a method or an id"
    return msg_id, None


_LENGTH = re.compile(rb"content-length:[ \t]*(-?\d+)[ \t]*\r?$", re.IGNORECASE)
_LENGTH_ANYWHERE = re.compile(rb"content-length:", re.IGNORECASE)
_HEADER = re.compile(rb"[!-9;-~]+:[ \t]*[ -~]*\r?\n?$")  # `Name: value`, printable ASCII


class FrameReader:
    """Reads LSP frames from stdin and finds its footing again after garbage.

    A `Content-Length` header is recognised anywhere in a line (the rest of a broken body may precede it),
    and a body that does not parse is searched for the start of the next frame, which is read again.
    """

    def __init__(self, reader: StdinAsyncReader) -> None:
        self._reader = reader
        self._pushback = b""

    async def readline(self) -> bytes:
        """One line, the pushed-back bytes first."""
        if self._pushback:
            line, sep, rest = self._pushback.partition(b"\n")
            if sep:
                self._pushback = rest
                return line + sep
            self._pushback = b""
            return line + await self._reader.readline()
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        """Exactly `n` bytes, the pushed-back bytes first."""
        head, self._pushback = self._pushback[:n], self._pushback[n:]
        if len(head) < n:
            head += await self._reader.readexactly(n - len(head))
        return head

    def push_back(self, data: bytes) -> None:
        """Return bytes to the front of the stream (read too far while resynchronising)."""
        self._pushback = data + self._pushback

    async def headers(self) -> tuple[int | None, bool, bool]:
        """Read one header block: (content length or None when missing/bad, eof, skipped garbage)."""
        length: int | None = None
        garbage = False
        for _ in range(MAX_HEADER_LINES):
            line = await self.readline()
            if not line:
                return None, True, garbage
            if not line.strip():
                return length, False, garbage
            found = _LENGTH_ANYWHERE.search(line)
            garbage = garbage or not _HEADER.match(line) or (found is not None and found.start() > 0)
            if found is not None:
                match = _LENGTH.match(line, found.start())
                length = int(match.group(1)) if match else None
        return None, False, True


async def serve(stop: threading.Event, reader: StdinAsyncReader, protocol: SidecarProtocol) -> None:
    """Read framed messages until EOF. Bad frames and bodies are answered with JSON-RPC errors, never fatal."""
    frames = FrameReader(reader)
    while not stop.is_set():
        length, eof, garbage = await frames.headers()
        if eof:
            log.info("stdin closed; stopping")
            return
        if garbage and length is not None:
            log.warning("skipped bytes that were not a JSON-RPC frame before the next one")
            protocol.send_error(None, errors.PARSE_ERROR, "Parse error: skipped bytes that were not a JSON-RPC frame")
        if length is None or length < 0:
            log.warning("skipping a header block without a valid Content-Length")
            protocol.send_error(None, errors.PARSE_ERROR, "Parse error: missing or invalid Content-Length header")
            continue
        if length > MAX_MESSAGE_BYTES:
            log.error("message of %d bytes exceeds the %d byte limit; stopping", length, MAX_MESSAGE_BYTES)
            protocol.send_error(None, errors.INVALID_REQUEST, f"Message too large ({length} bytes)")
            return
        body = await frames.readexactly(length) if length else b""
        if len(body) < length:
            log.info("stdin closed in the middle of a message; stopping")
            return
        if not _dispatch(protocol, body):
            # The length was wrong: the next frame may start inside this body. Read it again from there.
            found = _LENGTH_ANYWHERE.search(body, 1)
            if found is not None:
                frames.push_back(body[found.start() :])


def _dispatch(protocol: SidecarProtocol, body: bytes) -> bool:
    """Handle one body; False when it is not JSON at all (the framing may be off)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("unparsable message body: %s", exc)
        protocol.send_error(None, errors.PARSE_ERROR, f"Parse error: the body is not valid JSON ({exc})")
        return False
    except RecursionError:
        log.warning("a message body nested too deeply")
        protocol.send_error(None, errors.PARSE_ERROR, "Parse error: the JSON is nested too deeply")
        return True
    msg_id, problem = _classify(data)
    if problem is not None:
        log.warning("invalid JSON-RPC message: %s", problem)
        protocol.send_error(msg_id, errors.INVALID_REQUEST, f"Invalid request: {problem}")
        return True
    if not _lifecycle_allows(protocol, data, msg_id):
        return True
    try:
        message = protocol.structure_raw(data)
    except JsonRpcException as exc:
        cause = exc.__cause__ or exc
        log.warning("could not decode %s: %s", data.get("method"), cause)
        if "method" in data and "id" in data:
            protocol.send_error(msg_id, errors.INVALID_PARAMS, f"Invalid params for {data['method']}: {cause}")
        return True
    except Exception:
        log.exception("could not decode a message")
        if "method" in data and "id" in data:
            protocol.send_error(msg_id, errors.INVALID_PARAMS, f"Invalid params for {data['method']}")
        return True
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("handler dispatch failed for %s", data.get("method"))
        if "method" in data and "id" in data:
            protocol.send_error(msg_id, errors.INVALID_REQUEST, f"Could not handle {data['method']}")
    return True


def _lifecycle_allows(protocol: SidecarProtocol, data: dict[str, Any], msg_id: Any) -> bool:
    """LSP's lifecycle: before `initialize` a request is answered -32002 and a notification dropped; after
    `shutdown` a request is answered -32600 and a notification other than `exit` dropped. True: handle it."""
    method = data.get("method")
    if method is None or method == "exit":
        return True  # responses to our own requests, and exit, always go through
    is_request = "id" in data
    if not protocol.lifecycle_started:
        if method == "initialize" and is_request:
            protocol.lifecycle_started = True
            return True
        if is_request:
            log.warning("%s before initialize; answered ServerNotInitialized", method)
            protocol.send_error(
                msg_id, SERVER_NOT_INITIALIZED, f"Server not initialized: send initialize before {method}."
            )
        else:
            log.info("dropped the notification %s: it came before initialize", method)
        return False
    if protocol.lifecycle_ended:
        if is_request:
            log.warning("%s after shutdown; answered InvalidRequest", method)
            protocol.send_error(
                msg_id,
                errors.INVALID_REQUEST,
                f"Invalid request: the server is shutting down (shutdown was received), so {method} is not "
                "handled; only the exit notification is accepted now.",
            )
        else:
            log.info("dropped the notification %s: it came after shutdown", method)
        return False
    if method == "shutdown" and is_request:
        protocol.lifecycle_ended = True
    return True


async def _drain(timeout: float = 5.0) -> None:
    """Let work already started (start-up imports, the watcher, a running turn) finish before the loop closes."""
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and not t.done()]
    if pending:
        _done, still = await asyncio.wait(pending, timeout=timeout)
        for task in still:
            task.cancel()
        if still:
            await asyncio.wait(still, timeout=1.0)


class EditorWriter:
    """stdout to the editor. An editor that quits closes it first: what is still to be sent (replies to its last
    requests, progress, the watcher's news) is dropped, and the log says so once, in one line."""

    def __init__(self, stdout: Any) -> None:
        self._stdout = stdout
        self.closed = False

    def close(self) -> None:
        """Close stdout (already closed by the editor: nothing to do)."""
        with contextlib.suppress(OSError, ValueError):
            self._stdout.close()

    def write(self, data: bytes) -> None:
        """Send one framed message, or drop it once the editor has closed the connection."""
        if self.closed:
            return
        try:
            self._stdout.write(data)
            self._stdout.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):  # ValueError: the stream is closed
            self.closed = True
            log.info("the editor closed the connection (it quit or stopped the server); nothing more is sent to it")
            with contextlib.suppress(OSError, ValueError, AttributeError):  # no flush error at interpreter exit
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, self._stdout.fileno())
                os.close(null)


def run_stdio(server: Any, stdin: Any, stdout: Any) -> None:
    """Run the server's protocol on binary stdio streams until EOF or exit."""
    stop = threading.Event()
    server._stop_event = stop
    reader = StdinAsyncReader(stdin, server.thread_pool)
    server.protocol.set_writer(EditorWriter(stdout))

    async def main() -> None:
        await serve(stop, reader, server.protocol)
        await _drain()

    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
