"""Raw garbage on stdin, damaged or future session files, and settings of the wrong types.

Garbage: the server reports it and recovers, or exits cleanly (exit code 0) — it never hangs and never crashes.
Files: a clear error naming the file and the problem, and nothing is overwritten.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from sidecar.core.recording import FORMAT_VERSION
from sidecar.protocol import errors
from tests.reliability.conftest import Spawn
from tests.reliability.proc import RpcError, Sidecar, records

WARNING = 2
PING = json.dumps({"jsonrpc": "2.0", "id": "ping-after-garbage", "method": "sidecar/getTokenUsage", "params": {}})


def frame(body: bytes | str) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def deep(depth: int) -> bytes:
    head = b'{"jsonrpc":"2.0","id":77,"method":"sidecar/sendMessage","params":{"text":'
    return head + b"[" * depth + b"]" * depth + b"}}"


def reports(side: Sidecar) -> list[dict[str, Any]]:
    """Error responses the server sent for input that was not a usable request (ours all succeed)."""
    return [m for m in side.client.received if "error" in m]


#: Bad frames the documented reader recovers from: the next frame is read normally (docs/protocol.md).
RECOVERABLE = {
    "body-not-json": b"Content-Length: 5\r\n\r\nnot j",
    "body-not-utf8": frame(b"\xff\xfe\x00garbage\x80"),
    "not-json-rpc": frame("[]") + frame('{"jsonrpc":"1.0","id":"x"}') + frame('{"id":{"a":1},"method":5}'),
    "negative-length": b"Content-Length: -5\r\n\r\n",
    "no-content-length": b"X-Nonsense: 1\r\n\r\n",
    "header-line-of-10-MB": b"X" * 10_000_000 + b"\r\n\r\n",
}


async def test_bad_frames_are_reported_and_reading_goes_on(spawn: Spawn) -> None:
    side = await spawn(log_level="INFO")
    await side.watching()
    for name, garbage in RECOVERABLE.items():
        count = len(reports(side))
        side.write_raw(garbage)
        await side.ping()
        new = reports(side)[count:]
        assert new, f"{name}: not reported"
        assert {m["error"]["code"] for m in new} <= {errors.PARSE_ERROR, errors.INVALID_REQUEST}, name
    assert "still fine" in (await side.say("still fine after the garbage?"))["text"]


#: Garbage after which the reader cannot know where the next frame starts (or cannot parse at all).
LOST_FRAMING = [
    pytest.param(b"Content-Length: abc\r\n\r\n" + PING.encode(), id="non-numeric-length-with-body"),
    pytest.param(b"Content-Type: x\r\n\r\n" + PING.encode(), id="missing-length-with-body"),
    pytest.param(b"Content-Length: 400\r\n\r\n" + PING.encode()[:40], id="truncated-body"),
    pytest.param(b"Content-Length: 10\r\n\r\n" + PING.encode(), id="length-too-small"),
    pytest.param(bytes(range(256)) * 8, id="binary"),
    pytest.param(frame(deep(5_000)), id="nested-5000-deep"),
    pytest.param(frame(deep(100_000)), id="nested-100000-deep"),
    pytest.param(b"Content-Length: 999999999999\r\n\r\n", id="length-over-the-limit"),
]


async def outcome_after_garbage(side: Sidecar, garbage: bytes, timeout: float = 3) -> str:
    """ "recovered" when a request sent after the garbage is answered, "exited" when the process ends, else "hung".

    Several requests follow the garbage, so a reader may drop a frame or two while it finds its footing again.
    """
    side.write_raw(garbage)
    pings = [asyncio.ensure_future(side.request("sidecar/getTokenUsage", {}, timeout=timeout)) for _ in range(5)]
    exit_code = asyncio.ensure_future(side.wait_exit(timeout))
    waiting: set[asyncio.Future[Any]] = {*pings, exit_code}
    result = "hung"
    while waiting and result == "hung":
        done, waiting = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        if any(not task.cancelled() and task.exception() is None for task in done if task is not exit_code):
            result = "recovered"
        elif exit_code in done and exit_code.exception() is None:
            result = "exited"
    for task in waiting:
        task.cancel()
    await asyncio.gather(*pings, exit_code, return_exceptions=True)
    return result


@pytest.mark.parametrize("garbage", LOST_FRAMING)
async def test_lost_framing_is_reported_and_recovered_or_a_clean_exit(spawn: Spawn, garbage: bytes) -> None:
    side = await spawn(log_level="INFO")
    await side.watching()
    outcome = await outcome_after_garbage(side, garbage)
    if outcome == "hung":
        side.kill()  # it would not answer shutdown either
    assert outcome != "hung", "the server neither answered a later request nor exited: every later message is lost"
    if outcome == "exited":
        assert side.returncode == 0, f"crashed: {[line for line in side.stderr if 'Error' in line][-2:]}"
    else:
        assert reports(side), "the garbage was reported with a JSON-RPC error"
        assert "still fine" in (await side.say("still fine after the garbage?"))["text"]
    assert not [line for line in side.stderr if line.startswith("Traceback")], "no uncaught exception"


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(b"Content-Length: 100\r\n\r\n" + PING.encode()[:30], id="eof-inside-a-body"),
        pytest.param(b"Content-Length: 12\r\n", id="eof-inside-the-headers"),
        pytest.param(b"", id="eof-between-messages"),
    ],
)
async def test_end_of_input_ends_the_server_cleanly(spawn: Spawn, tail: bytes) -> None:
    side = await spawn(log_level="INFO")
    await side.watching()
    side.write_raw(tail)
    side.client.close_stdin()
    assert await side.wait_exit(10) == 0
    assert not [line for line in side.stderr if "Traceback" in line or "ERROR" in line]


async def test_an_editor_that_quits_right_after_starting_leaves_a_clean_exit(spawn: Spawn) -> None:
    """Closing stdin while start-up work (imports, the watcher) still runs must not log errors."""
    side = await spawn(log_level="INFO")
    side.client.close_stdin()
    assert await side.wait_exit(10) == 0
    assert not [line for line in side.stderr if "Traceback" in line or "ERROR" in line], side.stderr[-12:]


# -- files ----------------------------------------------------------------------------------------------------


DAMAGES = ["garbage-line", "header", "cut-line-in-the-middle", "contradiction", "wrong-type", "future-format"]


def damage(path: Path, how: str) -> None:
    lines = path.read_bytes().split(b"\n")
    first_message = next(i for i, line in enumerate(lines) if b'"type":"message"' in line)
    if how == "garbage-line":
        lines[first_message] = b'{"type": "message", broken'
    elif how == "header":
        lines[0] = b'{"type":"sesion"}'
    elif how == "cut-line-in-the-middle":
        lines[first_message] = lines[first_message][: len(lines[first_message]) // 2]
    elif how == "contradiction":
        record = {"type": "undoCompaction", "compactionId": "c-never-happened", "time": "2026-01-01T00:00:00.000Z"}
        lines.insert(first_message + 1, json.dumps(record).encode())
    elif how == "wrong-type":
        record = json.loads(lines[first_message])
        record["content"] = {"role": "user", "parts": "not a list"}
        lines[first_message] = json.dumps(record).encode()
    elif how == "future-format":
        header = json.loads(lines[0])
        header["version"] = FORMAT_VERSION + 1
        lines[0] = json.dumps(header).encode()
        lines.insert(2, b'{"type":"brandNewRecord","time":"2030-01-01T00:00:00.000Z","meaning":"a future format"}')
    path.write_bytes(b"\n".join(lines))


async def test_damaged_and_future_session_files_are_refused_by_name_and_never_written(
    spawn: Spawn, dirs: tuple[Path, Path]
) -> None:
    side = await spawn()
    paths: dict[str, tuple[str, Path]] = {}
    for how in DAMAGES:
        await side.request("sidecar/newSession", {})
        for i in range(2):
            await side.say(f"{how} message {i} for lib/file_{i}.py")
        paths[how] = (side.session_id(), side.session_path())
    await side.request("sidecar/newSession", {})
    for how, (_, path) in paths.items():
        damage(path, how)
    damaged = {path: path.read_bytes() for _, path in paths.values()}

    for how, (session_id, path) in paths.items():
        err = await side.error("sidecar/resumeSession", {"sessionId": session_id})
        assert err.code == errors.SESSION_ERROR, how
        assert str(path) in err.message and "not changed" in err.message, (how, err.message)
        if how == "future-format":
            future, ours = f"recording format {FORMAT_VERSION + 1}", f"reads format {FORMAT_VERSION} at most"
            assert future in err.message and ours in err.message, err.message
        else:
            assert "damaged at line" in err.message, (how, err.message)
        try:
            await side.request("sidecar/getTranscript", {"sessionId": session_id})  # salvage: the readable part
        except RpcError as exc:
            assert exc.code == errors.SESSION_ERROR and str(path) in exc.message, how
    listed = {s["sessionId"] for s in await side.request("sidecar/listSessions", {})}
    assert paths["future-format"][0] not in listed, "listing skips a file it cannot read"

    reply = await side.say("the current session is not affected")
    assert reply["text"]
    current = side.session_path()
    assert current not in damaged
    assert any(
        r["content"]["parts"][0].get("text") == "the current session is not affected"
        for r in records(current)
        if r["type"] == "message" and r.get("content")
    ), "new turns go to the current session's own file"
    await side.stop()
    for path, data in damaged.items():
        assert path.read_bytes() == data, f"{path.name} was written to"
    assert not list(dirs[0].rglob("*.torn"))


# -- settings -------------------------------------------------------------------------------------------------

WRONG_TYPES = {
    "tokenLimit": "big",
    "compressionThreshold": [0.5],
    "retryAttempts": -5,
    "requestTimeoutMs": {"ms": 10},
    "model": 7,
    "hooks": "run everything",
}


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(json.dumps({"sidecar": WRONG_TYPES}), id="wrong-types"),
        pytest.param('{"tokenLimit": 1000,', id="not-json"),
        pytest.param(json.dumps([1, 2, 3]), id="not-an-object"),
        pytest.param(b"\xff\xfe not utf-8", id="not-utf8"),
    ],
)
async def test_a_bad_workspace_settings_file_is_reported_and_left_alone(
    spawn: Spawn, dirs: tuple[Path, Path], content: str | bytes
) -> None:
    _, workspace = dirs
    settings = workspace / ".sidecar" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(content.encode() if isinstance(content, str) else content)
    stamp = (settings.read_bytes(), settings.stat().st_mtime_ns)

    side = await spawn()
    usage = await side.ping()
    assert (usage["tokenLimit"], usage["compressionThreshold"], usage["model"]) == (1_048_576, 0.5, "gemini-2.5-flash")
    warnings = side.messages(WARNING)
    if isinstance(content, str) and content.startswith('{"sidecar"'):
        for key in set(WRONG_TYPES) - {"hooks"}:  # hooks of an untrusted workspace are dropped unread
            assert any(f"sidecar.{key} is invalid" in m and "using the default" in m for m in warnings), key
    else:
        assert any(str(settings) in m and "ignored" in m for m in warnings), warnings
    assert (await side.say("settings fell back to defaults"))["text"]
    await side.stop()
    assert (settings.read_bytes(), settings.stat().st_mtime_ns) == stamp, "the settings file was not rewritten"


async def test_wrong_types_from_the_editor_fall_back_field_by_field(spawn: Spawn) -> None:
    side = await spawn()
    await side.watching()  # start-up is over: its re-read of the settings file changed nothing, so pushed nothing
    seen = (await side.ping())["seq"]  # the usage state as of now
    side.notify(
        "workspace/didChangeConfiguration", {"settings": {"sidecar": {**WRONG_TYPES, "compressionThreshold": 0.7}}}
    )
    # The next state change is this configuration's: the only thing that changed the state since `seen`.
    usage = await side.wait_note("sidecar/tokenUsage", lambda u: u["seq"] > seen)
    assert usage["compressionThreshold"] == 0.7, "the good field still applies"
    assert usage["tokenLimit"] == 1_048_576
    for key in set(WRONG_TYPES) - {"compressionThreshold"}:
        assert any(f"sidecar.{key} is invalid" in m for m in side.messages(WARNING)), key
    side.notify("workspace/didChangeConfiguration", {"settings": "not an object"})
    side.notify("workspace/didChangeConfiguration", {"settings": {"sidecar": [1, 2]}})
    assert (await side.say("still configured"))["text"]
