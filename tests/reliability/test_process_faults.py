"""SIGKILL of the real server — while the model is thinking, mid-stream, during a compaction and during a burst of
recording writes — then a new server and sidecar/resumeSession: every message recorded before the kill is there,
once, in order; nothing recorded is rewritten; a torn last record is never accepted; the next turn works."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import time
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.checks import last_chat_contents, message_ids, recorded_history, text
from tests.reliability.conftest import Spawn
from tests.reliability.proc import Sidecar, records

WARNING = 2


async def wait_for_request(fake: Any, predicate: Any, timeout: float = 10) -> Any:
    """The first request in the fake's log matching `predicate` (waits for it to arrive)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        found = next((r for r in fake.requests() if predicate(r)), None)
        if found is not None:
            return found
        assert asyncio.get_running_loop().time() < deadline, "the fake Gemini never got the request"
        with contextlib.suppress(TimeoutError):  # no new request within 0.5 s: look again until the deadline
            await asyncio.to_thread(fake.wait_for_requests, len(fake.requests()) + 1, 0.5)


async def kill(side: Sidecar, *pending: asyncio.Future[Any]) -> None:
    side.kill()
    assert await side.wait_exit() == -9
    for outcome in await asyncio.gather(*pending, return_exceptions=True):
        assert isinstance(outcome, ConnectionError | dict), outcome


async def resume(spawn: Spawn, session_id: str, path: Path) -> tuple[Sidecar, dict[str, Any]]:
    """A new server on the same home: the session is listed, resumes, and its recording was not touched."""
    before = path.read_bytes()
    side = await spawn()
    listed = await side.request("sidecar/listSessions", {})
    assert session_id in [s["sessionId"] for s in listed]
    resumed = await side.request("sidecar/resumeSession", {"sessionId": session_id})
    assert resumed["sessionId"] == session_id
    assert path.read_bytes()[: len(before)] == before, "resuming never rewrites what was recorded"
    assert not [m for m in side.messages(WARNING) if "another sidecar process" in m], "the kill released the lock"
    return side, resumed


async def assert_everything_recorded_is_back(side: Sidecar, path: Path, recorded: list[dict[str, Any]]) -> None:
    """The transcript of the resumed session holds each message record of the killed process once, in order."""
    transcript = await side.request("sidecar/getTranscript", {})
    messages = [e for e in transcript["entries"] if e["type"] == "message"]
    ids = [e["id"] for e in messages]
    assert len(ids) == len(set(ids)), "no message is duplicated"
    assert ids == [r["id"] for r in recorded if r["type"] == "message"]


async def assert_next_turn_continues(side: Sidecar, fake: Any, path: Path, history: list[dict[str, Any]]) -> None:
    """The model sees exactly the history that was recorded before the kill; ids continue without collisions."""
    count = len(message_ids(path))
    reply = await side.say("after the restart")
    assert last_chat_contents(fake) == [*history, text("user", "after the restart")]
    ids = message_ids(path)
    assert len(ids) == len(set(ids)), f"duplicate message ids after the resume: {ids}"
    assert ids[count:] == [f"m{count + 1}", f"m{count + 2}"]
    assert recorded_history(path) == [*history, text("user", "after the restart"), text("model", reply["text"])]


@pytest.mark.parametrize("where", ["waiting-for-the-model", "mid-stream"])
async def test_sigkill_during_a_turn_then_resume(spawn: Spawn, fake: Any, where: str) -> None:
    first = await spawn()
    for i in range(3):
        await first.say(f"turn {i} before the kill")
    session_id = first.session_id()
    step = {"kind": "delay", "match": "chat", "seconds": 30}
    if where == "mid-stream":
        step = {"kind": "delay", "match": "chat", "seconds": 0, "chunkDelay": 30}
    fake.script([step])
    turn = asyncio.ensure_future(first.say("the turn that gets killed"))
    await wait_for_request(fake, lambda r: "the turn that gets killed" in json.dumps(r.body))
    if where == "mid-stream":
        await first.wait_note("sidecar/messageDelta", lambda d: d["text"].startswith("Fake Gemini reply #4"))
    await kill(first, turn)
    fake.reset()

    path = first.session_path(session_id)
    recorded = records(path)
    history = recorded_history(path)
    assert history[-1] == text("user", "the turn that gets killed"), "the user's message was recorded before the call"
    second, resumed = await resume(spawn, session_id, path)
    shown = len(history) - (1 if "<session_context>" in history[0]["parts"][0].get("text", "") else 0)
    assert resumed["messageCount"] == shown, "the count the user is told leaves out the hidden session context"
    await assert_everything_recorded_is_back(second, path, recorded)
    await assert_next_turn_continues(second, fake, path, history)


def pids_with(marker: str) -> list[int]:
    """Processes whose command line holds `marker` (the tool commands this test started)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if marker.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("where", ["waiting-for-the-users-confirmation", "while-the-tool-runs"])
async def test_sigkill_during_a_tool_call_then_resume(spawn: Spawn, fake: Any, where: str) -> None:
    """The recording then ends with the model's function call and no response to it. A resumed session must still
    work: every call the model sees has its response (the API refuses the request otherwise)."""
    marker = f"sidecar-reliability-{os.getpid()}-{where}"
    first = await spawn(approvalMode="yolo" if where == "while-the-tool-runs" else "default")
    first.notify("sidecar/ideContext", {"openFiles": [], "isTrusted": True})
    await first.say("before the tool call")
    session_id = first.session_id()
    asked = asyncio.Event()

    async def never_answer(_params: Any) -> None:
        asked.set()
        await asyncio.Event().wait()

    first.client.on("sidecar/confirmToolCall", never_answer)
    fake.script(
        [
            {
                "kind": "function_call",
                "match": "chat",
                "name": "run_shell_command",
                "args": {"command": f"sleep 30 # {marker}"},
            }
        ]
    )
    turn = asyncio.ensure_future(first.say("run the tool"))
    try:
        if where == "while-the-tool-runs":
            await first.wait_note("sidecar/toolCall", lambda n: n["status"] == "running")
        else:
            await asyncio.wait_for(asyncio.shield(asked.wait()), 15)
        first.kill()
        assert await first.wait_exit() == -9
        if where == "while-the-tool-runs":  # the command's guard (sidecar/tools/shell_guard.py) stops it
            deadline = time.monotonic() + 10
            while pids_with(marker) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert pids_with(marker) == [], "the shell command outlived the sidecar"
    finally:
        turn.cancel()
        for pid in pids_with(marker):  # never leave a test's command behind, whatever happened
            os.kill(pid, signal.SIGKILL)
    fake.reset()

    path = first.session_path(session_id)
    recorded = records(path)
    assert recorded_history(path)[-1]["parts"][0].get("functionCall"), "killed with the call unanswered"
    second, _ = await resume(spawn, session_id, path)
    await assert_everything_recorded_is_back(second, path, recorded)
    reply = await second.say("after the restart")
    assert "after the restart" in reply["text"]
    contents = last_chat_contents(fake)
    for index, content in enumerate(contents):
        calls = [p for p in content["parts"] if "functionCall" in p]
        if calls:
            answered = [p for p in contents[index + 1]["parts"] if "functionResponse" in p]
            assert len(answered) == len(calls), "every call the model sees has its response"


async def test_sigkill_during_a_compaction_then_resume(spawn: Spawn, fake: Any) -> None:
    first = await spawn(tokenLimit=20_000)
    for i in range(6):
        await first.say(f"step {i}: change lib/unit_{i}.py " + "context " * 80)
    session_id = first.session_id()
    path = first.session_path(session_id)
    history = recorded_history(path)
    fake.script([{"kind": "delay", "match": "summary", "seconds": 30}])
    compress = asyncio.ensure_future(first.request("sidecar/compress", {}))
    await wait_for_request(fake, lambda r: r.summary)
    await kill(first, compress)
    fake.reset()

    recorded = records(path)
    assert [r for r in recorded if r["type"] == "compaction"] == []
    assert recorded_history(path) == history, "an unfinished compaction changes nothing"
    second, _ = await resume(spawn, session_id, path)
    await assert_everything_recorded_is_back(second, path, recorded)
    await assert_next_turn_continues(second, fake, path, history)
    result = await second.request("sidecar/compress", {})
    assert result["status"] == "COMPRESSED", "nothing left over from the killed compaction blocks the next one"


async def test_sigkill_during_a_burst_of_recording_writes_then_resume(spawn: Spawn, fake: Any) -> None:
    first = await spawn()
    turns = [asyncio.ensure_future(first.say(f"burst message {i}", timeout=120)) for i in range(300)]
    for count, finished in enumerate(asyncio.as_completed(turns, timeout=60), start=1):
        await finished
        if count == 60:  # kill while the other 240 turns are still being answered and recorded
            break
    session_id = first.session_id()
    await kill(first, *turns)
    answered = [t.result() for t in turns if not t.exception()]
    assert 60 <= len(answered) < 300, "killed in the middle of the burst"

    path = first.session_path(session_id)
    recorded = records(path)
    texts = [
        part["text"] for r in recorded if r["type"] == "message" and r.get("content") for part in r["content"]["parts"]
    ]
    assert texts[0].startswith("<session_context>"), "the session context opens the recording"
    texts = texts[1:]
    for i, reply in enumerate(answered):
        assert texts.count(f"burst message {i}") == 1, f"answered turn {i} is recorded exactly once"
        assert texts.count(reply["text"]) == 1
    assert texts[: 2 * len(answered)] == [
        t for i, reply in enumerate(answered) for t in (f"burst message {i}", reply["text"])
    ], "recorded in the order the turns ran"
    history = recorded_history(path)
    second, _ = await resume(spawn, session_id, path)
    await assert_everything_recorded_is_back(second, path, recorded)
    await assert_next_turn_continues(second, fake, path, history)


@pytest.mark.parametrize("tail", ["torn", "whole-but-no-newline"])
async def test_a_torn_last_record_is_never_accepted(spawn: Spawn, fake: Any, tail: str) -> None:
    first = await spawn()
    for i in range(3):
        await first.say(f"turn {i}")
    session_id = first.session_id()
    path = first.session_path(session_id)
    await kill(first)
    good = path.read_bytes()
    history = recorded_history(path)
    count = len(message_ids(path))
    line = {
        "type": "message",
        "id": f"m{count + 1}",
        "kind": "user",
        "time": "2026-01-01T00:00:00.000Z",
        "content": {"role": "user", "parts": [{"text": "half-written message"}]},
    }
    encoded = json.dumps(line, separators=(",", ":")).encode()
    extra = encoded[: len(encoded) // 2] if tail == "torn" else encoded
    with open(path, "ab") as handle:  # what a power loss in the middle of the last write leaves behind
        handle.write(extra)

    second = await spawn()
    await second.request("sidecar/resumeSession", {"sessionId": session_id})
    transcript = await second.request("sidecar/getTranscript", {})
    texts = [e.get("text") for e in transcript["entries"] if e["type"] == "message"]
    data = path.read_bytes()
    assert data.endswith(b"\n"), "the file ends on a whole line again"
    if tail == "torn":
        assert "half-written message" not in texts, "a torn record is not accepted"
        assert any("incomplete" in m for m in second.messages(WARNING)), "and the user is told"
        assert data == good
        aside = path.with_name(path.name + ".torn")
        assert aside.read_bytes() == extra + b"\n", "the torn bytes are kept aside, not lost"
        assert stat.S_IMODE(aside.stat().st_mode) == 0o600
    else:
        assert texts[-1] == "half-written message", "a complete record that only lacks its newline is kept"
        assert data == good + encoded + b"\n"
        history = [*history, text("user", "half-written message")]
    await assert_next_turn_continues(second, fake, path, history)
