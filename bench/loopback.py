"""The loopback floor of target 2: a bare socket in its own process POSTs the same body to the same fake.

Run as `python -m bench.loopback PORT PATH BODY_FILE`. For every line read on stdin it sends one request
(headers + body with one `sendall`, `Connection: close`), reads the reply to its end, and prints the
`time.perf_counter()` taken just before connecting. perf_counter is CLOCK_MONOTONIC on Linux, so the bench
compares it with the fake's stamps: (body read by the fake) - (this stamp) is what moving the bytes costs
without any HTTP client or sidecar work.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    port, path, body_file = int(argv[0]), argv[1], Path(argv[2])
    body = body_file.read_bytes()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"x-goog-api-key: bench-key\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    for _ in sys.stdin:
        start = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.sendall(head)
            sock.sendall(body)
            while sock.recv(1 << 16):
                pass
        print(repr(start), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
