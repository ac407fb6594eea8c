"""The ACP wire on stdio: newline-delimited JSON-RPC that answers bad lines, and errors in words for bad params."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from acp import RequestError
from pydantic import ValidationError

from sidecar.protocol import edge
from sidecar.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR

log = logging.getLogger(__name__)

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "RESOURCE_NOT_FOUND",
    "ClientOffers",
    "Handler",
    "NdjsonStdio",
    "explain",
    "in_words",
]

#: ACP's own code for an unknown session (JSON-RPC's standard codes are the editor protocol's too).
RESOURCE_NOT_FOUND = -32002

Handler = Callable[[str, Any, bool], Awaitable[Any]]

#: The longest line (one JSON-RPC message) read; a longer one is skipped unread and answered -32600, as the editor
#: protocol answers a frame over its limit (sidecar.rpc.transport.MAX_MESSAGE_BYTES, the same size).
MAX_LINE_BYTES = 64 * 1024 * 1024


class ClientOffers:
    """What the client advertised at initialize."""

    def __init__(self) -> None:
        self.read_text_file = False
        self.write_text_file = False
        self.compaction = False


class NdjsonStdio:
    """An acp Transport over asyncio streams: one JSON message per line.

    Unlike the SDK's own transport, a line that is not JSON, or not a JSON-RPC message, is answered with a
    JSON-RPC error that says what was wrong (id null), instead of being dropped in silence.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False
        self._announced: dict[str, Callable[[], None]] = {}

    def announce(self, session_id: str, callback: Callable[[], None]) -> None:
        """Call `callback` once the response that names `session_id` (session/new's) has been written."""
        self._announced[session_id] = callback

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        async with self._lock:
            self.write_nowait(message)
            if self._announced:
                result = message.get("result")
                session_id = result.get("sessionId") if isinstance(result, dict) else None
                callback = self._announced.pop(session_id, None) if isinstance(session_id, str) else None
                if callback is not None:
                    callback()  # the session's first updates follow the response that names it
            await self._writer.drain()

    def write_nowait(self, message: dict[str, Any]) -> None:
        """Write one message now (order = call order); drain() waits until the client has taken it."""
        try:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=_builtins)
            data = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate somewhere: escaped JSON is still valid JSON
            data = json.dumps(message, separators=(",", ":"), default=_builtins).encode("ascii")
        if self._closed or self._writer.is_closing():
            raise ConnectionError("the client closed the connection")
        self._writer.write(data + b"\n")

    async def drain(self) -> None:
        """Wait until what was written has gone out."""
        if not self._closed and not self._writer.is_closing():
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next message (a bad line is answered and skipped); None at the end of input."""
        while True:
            line, skipped = await self._read_line()
            if skipped:
                log.warning("bad input: a line of %d bytes or more was skipped", skipped)
                await self._answer_error(
                    None,
                    INVALID_REQUEST,
                    f"Invalid request: the message is longer than the "
                    f"{MAX_LINE_BYTES} byte limit ({skipped} bytes or more); it was skipped.",
                )
                continue
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            message, problem, request_id = _decode(line)
            if problem is None:
                return message  # type: ignore[no-any-return]
            log.warning("bad input: %s", problem)
            code = PARSE_ERROR if message is None else INVALID_REQUEST
            await self._answer_error(request_id, code, problem)

    async def close(self) -> None:
        """Stop reading and writing."""
        async with self._lock:
            self._closed = True
            with contextlib.suppress(Exception):  # already gone
                self._writer.close()

    async def _answer_error(self, request_id: Any, code: int, message: str) -> None:
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
        except Exception as exc:
            log.info("could not answer a bad message: %s", exc)

    async def _read_line(self) -> tuple[bytes, int]:
        """(one line, 0), or (b"", its size so far) for a line over MAX_LINE_BYTES, read to its end and dropped
        chunk by chunk (never held whole)."""
        chunks: list[bytes] = []
        size = 0
        try:
            while True:
                try:
                    chunk = await self._reader.readuntil(b"\n")
                except asyncio.LimitOverrunError as exc:
                    chunk = await self._reader.readexactly(exc.consumed)
                    ended = False
                else:
                    ended = True
                size += len(chunk)
                if size > MAX_LINE_BYTES:
                    chunks.clear()
                elif chunk:
                    chunks.append(chunk)
                if ended:
                    return (b"", size) if size > MAX_LINE_BYTES else (b"".join(chunks), 0)
        except asyncio.IncompleteReadError as exc:
            if size + len(exc.partial) > MAX_LINE_BYTES:
                return b"", size + len(exc.partial)  # the next read returns b"": end of input
            chunks.append(exc.partial)
            return b"".join(chunks), 0


def _builtins(value: Any) -> Any:
    """msgspec Structs (the protocol's error data, for instance) as JSON-ready values."""
    return msgspec.to_builtins(value)


def _valid_id(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _decode(line: bytes) -> tuple[Any, str | None, Any]:
    """(message, problem or None, id to answer with)."""
    try:
        message = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"Parse error: the line is not valid JSON ({exc}).", None
    except RecursionError:
        return None, "Parse error: the JSON is nested too deeply.", None
    if not isinstance(message, dict):
        return message, f"Invalid request: a JSON-RPC message must be an object, got {type(message).__name__}.", None
    request_id = message.get("id")
    if "id" in message and not _valid_id(request_id):
        return message, "Invalid request: `id` must be a string, an integer or null.", None
    if "method" in message and not isinstance(message["method"], str):
        return message, "Invalid request: `method` must be a string.", request_id
    if "method" not in message and "id" not in message:
        return message, "Invalid request: the message has neither `method` nor `id`.", None
    if "method" not in message and "result" not in message and "error" not in message:
        return message, "Invalid request: a response needs `result` or `error`.", None
    return message, None, request_id


def explain(exc: ValidationError) -> str:
    """A pydantic validation error in a line of words: which field, what is wrong (at most five problems)."""
    problems = []
    for error in exc.errors(include_url=False)[:5]:
        where = ".".join(str(part) for part in error.get("loc", ())) or "params"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    more = len(exc.errors()) - len(problems)
    return "; ".join(problems) + (f"; and {more} more" if more > 0 else "")


def in_words(handler: Handler) -> Handler:
    """Wrap the SDK's router: bad params become -32602 errors whose message names the method and the field, under
    the same edge policy as the editor protocol (sidecar.protocol.edge)."""

    async def wrapped(method: str, params: Any, is_notification: bool) -> Any:
        problem = edge.not_an_object(params)
        if problem is not None and is_notification:
            log.warning("dropping %s: %s", method, problem)
            return None
        if problem is None and not is_notification and params is not None:
            problem = edge.unicode_problem(params)
        if problem is not None:
            raise RequestError(INVALID_PARAMS, edge.bad_params(method, problem))
        try:
            return await handler(method, params, is_notification)
        except ValidationError as exc:
            if is_notification:
                log.warning("dropping %s: %s", method, explain(exc))
                return None
            data = {"errors": json.loads(exc.json(include_url=False))}
            raise RequestError(INVALID_PARAMS, edge.bad_params(method, explain(exc)), data) from None
        except RequestError as exc:
            if exc.code == METHOD_NOT_FOUND and str(exc) == "Method not found":
                raise RequestError(
                    METHOD_NOT_FOUND, f"Method not found: {method} is not an ACP method this agent serves.", exc.data
                ) from None
            raise
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:
            log.exception("%s failed", method)
            raise RequestError(INTERNAL_ERROR, edge.internal_error(method, exc)) from None

    return wrapped
