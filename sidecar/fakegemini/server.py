"""The HTTP layer of the fake Gemini: a ThreadingHTTPServer, API and /_control/* endpoints."""

from __future__ import annotations

import contextlib
import logging
import socket
import socketserver
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Protocol
from urllib.parse import parse_qsl, urlsplit

import msgspec

from . import faults, metadata

log = logging.getLogger("sidecar.fakegemini")


@dataclass
class Plan:
    """What the HTTP layer should do: wait, then send JSON, SSE events, or drop the connection."""

    action: Literal["json", "stream", "close"]
    status: int = 200
    body: Any = None
    events: list[dict[str, Any]] = field(default_factory=list)
    cut_after: int | None = None  # stream: drop the connection after this many events
    wait: float = 0.0
    chunk_delay: float = 0.0
    hold: bool = False  # wait for FakeGemini.release() first


class Fake(Protocol):
    """What the HTTP layer asks of the fake (sidecar.fakegemini.fake.FakeGemini)."""

    stopping: threading.Event
    token_multiplier: float
    token_limit: int | None

    def plan(
        self,
        method: str,
        path: str,
        query: dict[str, str],
        api_key: str | None,
        raw: bytes,
        authorization: str | None = None,
    ) -> Plan: ...
    def metadata_token(self, path: str) -> dict[str, Any]: ...
    def set_token_lifetime(self, seconds: int) -> None: ...
    @property
    def token_lifetime(self) -> int: ...
    def log_json(self) -> bytes: ...
    def pending(self) -> list[dict[str, Any]]: ...
    def script(self, steps: Any) -> None: ...
    def reset_script(self) -> None: ...
    def reset(self) -> None: ...
    def set_token_multiplier(self, multiplier: float) -> None: ...
    def set_token_limit(self, limit: int | None) -> None: ...
    def await_release(self) -> None: ...


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, fake: Fake, host: str, port: int) -> None:
        self.fake = fake
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        super().__init__((host, port), _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can take seconds.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Close every open client connection (handler threads then end)."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection error from %s", client_address, exc_info=True)


def make_server(fake: Fake, host: str, port: int) -> _Server:
    return _Server(fake, host, port)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeGemini/1.0"
    timeout = 120  # idle keep-alive connections end after this many seconds
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_GET(self) -> None:
        self._dispatch("GET")

    # ---- plumbing -----------------------------------------------------------------------------
    def _dispatch(self, method: str) -> None:
        fake = self.server.fake
        try:
            url = urlsplit(self.path)
            query = dict(parse_qsl(url.query))
            raw = self._read_body()
            if url.path.startswith("/_control/"):
                self._control(method, url.path, raw)
                return
            if method == "GET" and metadata.is_metadata_path(url.path):
                status, body, kind = metadata.answer(fake, url.path, self.headers.get("Metadata-Flavor"))
                self._send(status, body, kind, {"Metadata-Flavor": "Google"})
                return
            key = self.headers.get("x-goog-api-key") or query.get("key")
            self._execute(fake.plan(method, url.path, query, key, raw, self.headers.get("Authorization")))
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception as exc:
            log.exception("fake Gemini failed on %s %s", method, self.path)
            self.close_connection = True
            with contextlib.suppress(OSError):
                self._send_json(500, faults.error_body(500, f"fake Gemini internal error: {exc!r}"))

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, msgspec.json.encode(obj), "application/json; charset=UTF-8")

    def _send(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _execute(self, plan: Plan) -> None:
        stopping = self.server.fake.stopping
        if plan.hold:
            self.server.fake.await_release()
        if (plan.hold or plan.wait > 0) and stopping.wait(plan.wait):
            self.close_connection = True
            return
        if plan.action == "close":
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if plan.action == "json":
            self._send_json(plan.status, plan.body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i, event in enumerate(plan.events):
            if plan.cut_after is not None and i >= plan.cut_after:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if i and plan.chunk_delay > 0 and stopping.wait(plan.chunk_delay):
                self.close_connection = True
                return
            self._chunk(b"data: " + msgspec.json.encode(event) + b"\r\n\r\n")
        self._chunk(b"")

    # ---- /_control/* ----------------------------------------------------------------------------
    def _control(self, method: str, path: str, raw: bytes) -> None:
        fake = self.server.fake
        name = path.removeprefix("/_control/").strip("/")
        try:
            body = msgspec.json.decode(raw) if raw else {}
        except msgspec.DecodeError as exc:
            self._send_json(400, faults.error_body(400, f"Invalid JSON payload received: {exc}"))
            return
        if name == "requests" and method == "GET":
            data = fake.log_json()
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif name == "script" and method == "GET":
            self._send_json(200, {"pending": fake.pending()})
        elif name == "script" and method == "POST":
            try:
                steps = faults.parse_steps(body)
            except (msgspec.ValidationError, TypeError) as exc:
                self._send_json(400, faults.error_body(400, f"Invalid script step: {exc}"))
                return
            if isinstance(body, dict) and body.get("replace"):
                fake.reset_script()
            fake.script(steps)
            self._send_json(200, {"queued": len(steps), "pending": len(fake.pending())})
        elif name == "reset" and method == "POST":
            fake.reset()
            self._send_json(200, {"ok": True})
        elif name == "config" and method == "POST":
            if not isinstance(body, dict):
                self._send_json(400, faults.error_body(400, "config must be a JSON object"))
                return
            try:
                if "tokenMultiplier" in body:
                    fake.set_token_multiplier(body["tokenMultiplier"])
                if "tokenLimit" in body:
                    fake.set_token_limit(body["tokenLimit"])
                if "tokenLifetime" in body:
                    fake.set_token_lifetime(body["tokenLifetime"])
            except (TypeError, ValueError) as exc:
                self._send_json(400, faults.error_body(400, f"Invalid config: {exc}"))
                return
            self._send_json(
                200,
                {
                    "tokenMultiplier": fake.token_multiplier,
                    "tokenLimit": fake.token_limit,
                    "tokenLifetime": fake.token_lifetime,
                },
            )
        else:
            self._send_json(404, faults.error_body(404, f"Unknown control endpoint {method} {path}"))
