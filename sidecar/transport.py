"""JSON-RPC framing on stdio: a reader that survives garbage, and a protocol that keeps sidecar/* params as dicts."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from concurrent.futures import Future
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdinAsyncReader
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

from sidecar import errors

log = logging.getLogger(__name__)

CUSTOM_PREFIX = "sidecar/"
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_HEADER_LINES = 32


class SidecarProtocol(LanguageServerProtocol):
    """LSP protocol whose custom messages keep their params (and results) as plain JSON values.

    pygls turns unknown-method params into namedtuples, renaming keys that are not identifiers;
    we validate with msgspec instead, so we hand the handlers the JSON exactly as it arrived.
    """

    _custom_result_ids: set[Any]

    def structure_raw(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if isinstance(method, str) and method.startswith(CUSTOM_PREFIX):
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
            self._send_response(msg_id, error=exc.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        self._send_data(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        )


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


async def _read_headers(reader: StdinAsyncReader) -> tuple[int | None, bool]:
    """Read one header block. Returns (content length or None when missing/bad, eof)."""
    length: int | None = None
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readline()
        if not line:
            return None, True
        stripped = line.strip()
        if not stripped:
            return length, False
        name, sep, value = stripped.partition(b":")
        if sep and name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                length = None
    return None, False


async def serve(stop: threading.Event, reader: StdinAsyncReader, protocol: SidecarProtocol) -> None:
    """Read framed messages until EOF. Bad frames and bodies are answered with JSON-RPC errors, never fatal."""
    while not stop.is_set():
        length, eof = await _read_headers(reader)
        if eof:
            log.info("stdin closed; stopping")
            return
        if length is None or length < 0:
            log.warning("skipping a header block without a valid Content-Length")
            protocol.send_error(None, errors.PARSE_ERROR, "Parse error: missing or invalid Content-Length header")
            continue
        if length > MAX_MESSAGE_BYTES:
            log.error("message of %d bytes exceeds the %d byte limit; stopping", length, MAX_MESSAGE_BYTES)
            protocol.send_error(None, errors.INVALID_REQUEST, f"Message too large ({length} bytes)")
            return
        body = await reader.readexactly(length) if length else b""
        if len(body) < length:
            log.info("stdin closed in the middle of a message; stopping")
            return
        _dispatch(protocol, body)


def _dispatch(protocol: SidecarProtocol, body: bytes) -> None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        log.warning("unparsable message body: %s", exc)
        protocol.send_error(None, errors.PARSE_ERROR, f"Parse error: the body is not valid JSON ({exc})")
        return
    msg_id, problem = _classify(data)
    if problem is not None:
        log.warning("invalid JSON-RPC message: %s", problem)
        protocol.send_error(msg_id, errors.INVALID_REQUEST, f"Invalid request: {problem}")
        return
    try:
        message = protocol.structure_raw(data)
    except JsonRpcException as exc:
        cause = exc.__cause__ or exc
        log.warning("could not decode %s: %s", data.get("method"), cause)
        if "method" in data and "id" in data:
            protocol.send_error(msg_id, errors.INVALID_PARAMS, f"Invalid params for {data['method']}: {cause}")
        return
    except Exception:
        log.exception("could not decode a message")
        if "method" in data and "id" in data:
            protocol.send_error(msg_id, errors.INVALID_PARAMS, f"Invalid params for {data['method']}")
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("handler dispatch failed for %s", data.get("method"))
        if "method" in data and "id" in data:
            protocol.send_error(msg_id, errors.INVALID_REQUEST, f"Could not handle {data['method']}")


def lsp_message_type(method: str) -> Any:
    """The lsprotocol type of an LSP method's params (used by tests and the dispatcher)."""
    return lsp.METHOD_TO_TYPES.get(method, (None,))[0]


def run_stdio(server: Any, stdin: Any, stdout: Any) -> None:
    """Run the server's protocol on binary stdio streams until EOF or exit."""
    from pygls.io_ import StdoutWriter

    stop = threading.Event()
    server._stop_event = stop
    reader = StdinAsyncReader(stdin, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(serve(stop, reader, server.protocol))
    except BrokenPipeError:
        log.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
