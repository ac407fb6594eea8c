"""An editor that quits closes the server's stdout first: the server ends as usual and logs it in one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.harness import server_env

pytestmark = pytest.mark.process


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _read_message(stream: object) -> dict[str, object]:
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):  # type: ignore[attr-defined]
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(stream.read(length))  # type: ignore[attr-defined,no-any-return]


def test_a_closed_stdout_at_exit_is_one_log_line_not_tracebacks(tmp_path: Path) -> None:
    log = tmp_path / "sidecar.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sidecar", "--log-file", str(log), "--log-level", "INFO"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=server_env(SIDECAR_HOME=str(tmp_path / "home")),
    )
    assert proc.stdin is not None and proc.stdout is not None
    initialize = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}))
    proc.stdin.flush()
    while "id" not in (reply := _read_message(proc.stdout)):
        pass
    assert reply["id"] == 1
    # the editor quits: its end of the server's stdout goes first, then it still sends what it had queued
    proc.stdout.close()
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    for n in range(2, 6):
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": n, "method": "sidecar/listSessions", "params": {}}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}))
    proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
    proc.stdin.close()
    proc.wait(timeout=60)
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stderr.close()
    text = log.read_text(encoding="utf-8")
    assert "Traceback" not in text, text
    assert "BrokenPipeError" not in text, text
    assert text.count("the editor closed the connection") == 1, text
    assert b"Traceback" not in err, err.decode(errors="replace")
