"""Sessions through real sidecar processes: chat → compact → chat → SIGKILL → resume; transcript; undo; list."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.rpc.client import RpcClient, RpcError, sidecar_command
from tests.e2e.harness import CANARY_KEY, EditorClient, notes, request, server_env, wait_for
from tests.waiting import until

FULL = "Here is the user's editor context as a JSON object."


class Sidecar:
    """A real sidecar process driven by the project's own JSON-RPC client (so it can be SIGKILLed)."""

    def __init__(self, home: str, fake_url: str, workspace: str) -> None:
        self.client = RpcClient(sidecar_command(), env=server_env(SIDECAR_HOME=home))
        self.fake_url = fake_url
        self.workspace = workspace
        self.usage: list[dict[str, Any]] = []
        self.compressed: list[dict[str, Any]] = []

    async def start(self, **settings: Any) -> None:
        self.client.on("sidecar/tokenUsage", self.usage.append)
        self.client.on("sidecar/compressed", self.compressed.append)
        await self.client.start()
        options = {"baseUrl": self.fake_url, "apiKey": CANARY_KEY, "retryInitialDelayMs": 10, **settings}
        await self.client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "capabilities": {},
                "rootUri": f"file://{self.workspace}",
                "initializationOptions": options,
            },
        )
        self.client.notify("initialized", {})

    async def say(self, text: str) -> dict[str, Any]:
        return await self.client.request("sidecar/sendMessage", {"text": text})  # type: ignore[no-any-return]

    def kill(self) -> None:
        self.client.kill()


@pytest.fixture
def dirs() -> Iterator[tuple[str, str]]:
    """(SIDECAR_HOME, workspace folder) for one test."""
    with tempfile.TemporaryDirectory(prefix="home-") as home, tempfile.TemporaryDirectory(prefix="proj-") as proj:
        yield home, proj


def chat_contents(fake: Any) -> list[dict[str, Any]]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary][-1].body["contents"]  # type: ignore[no-any-return]


def without_context(contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        c for c in contents if not c["parts"][0].get("text", "").startswith(("Here is the user", "Here is a summary"))
    ]


async def test_chat_compact_chat_kill_resume_gives_the_same_model_history(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    first = Sidecar(home, fake.url, workspace)
    await first.start(tokenLimit=20_000)
    for i in range(6):
        await first.say(f"step {i}: change lib/unit_{i}.py " + "context " * 80)
    compress = await first.client.request("sidecar/compress", {})
    assert compress["status"] == "COMPRESSED"
    await first.say("after the compaction, one more")
    live = chat_contents(fake)
    session_id = first.usage[-1]["sessionId"]
    live_percent = first.usage[-1]["percentUsed"]
    first.kill()
    await first.client.wait_exit()

    second = Sidecar(home, fake.url, workspace)
    await second.start(tokenLimit=20_000)
    sessions = await second.client.request("sidecar/listSessions", {})
    assert sessions[0]["sessionId"] == session_id
    assert sessions[0]["compactionCount"] == 1
    resumed = await second.client.request("sidecar/resumeSession", {"sessionId": session_id})
    assert resumed["sessionId"] == session_id
    hydrated = await until(
        lambda: next((u for u in second.usage if u["sessionId"] == session_id), None), "the resumed session's usage"
    )
    assert hydrated["sessionId"] == session_id and 0 < hydrated["percentUsed"] < 100
    assert hydrated["percentUsed"] == live_percent
    second.client.notify(
        "sidecar/ideContext", {"openFiles": [{"path": f"{workspace}/x.py", "timestamp": 1, "isActive": True}]}
    )
    await second.say("resumed: where were we?")
    after = chat_contents(fake)
    # The model sees exactly the compacted history it saw before the kill, then the new turn.
    assert after[: len(live)] == live
    tail = after[len(live) :]
    assert tail[0]["role"] == "model"  # the reply to the last turn before the kill
    assert tail[1]["parts"][0]["text"].startswith(FULL), "resume sends the full IDE context"
    assert tail[2]["parts"][0]["text"] == "resumed: where were we?"

    transcript = await second.client.request("sidecar/getTranscript", {})
    texts = [e.get("text", "") for e in transcript["entries"] if e["type"] == "message"]
    assert any(t.startswith("step 0: change lib/unit_0.py") for t in texts), "pre-compaction messages survive"
    assert [e["status"] for e in transcript["entries"] if e["type"] == "compaction"] == ["COMPRESSED"]
    await second.client.close()


async def test_undo_compaction_restores_the_pre_compaction_history(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    side = Sidecar(home, fake.url, workspace)
    await side.start(tokenLimit=20_000)
    for i in range(6):
        await side.say(f"message {i} " + "words " * 80)
    before = without_context(chat_contents(fake))
    await side.client.request("sidecar/compress", {})
    await side.say("after compaction")
    undone = await side.client.request("sidecar/undoCompaction", {})
    assert undone["restored"] is True
    # the usage pushed after the undo is a fresh estimate of the restored history, labelled as one, not the count
    # recorded before the compaction; it counts what the next request sends (system instruction and tools too)
    pushed = side.usage[-1]
    assert pushed["source"] == "estimate" and pushed["estimateReason"] == "undo", pushed
    polled = await side.client.request("sidecar/getTokenUsage", {})
    assert polled == pushed
    reply = await side.say("after undo")
    reported = reply["usage"]
    assert reported["source"] == "api" and reported["estimateReason"] is None
    assert abs(pushed["promptTokenCount"] - reported["promptTokenCount"]) <= 0.15 * reported["promptTokenCount"], (
        pushed,
        reported,
    )
    restored = without_context(chat_contents(fake))
    assert restored[: len(before)] == before, "the original messages are back, in order"
    assert [c["parts"][0].get("text") for c in restored[-3:] if c["role"] == "user"] == [
        "after compaction",
        "after undo",
    ]
    again = await side.client.request("sidecar/undoCompaction", {})
    assert again["restored"] is False and again["message"].startswith("Nothing to undo")
    await side.client.close()


async def test_resume_of_unknown_or_corrupt_session_is_a_clear_error(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    side = Sidecar(home, fake.url, workspace)
    await side.start()
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/resumeSession", {"sessionId": "no-such-session"})
    assert caught.value.code == -32004 and "no-such-session" in caught.value.message
    await side.say("make a session")
    sid = side.usage[-1]["sessionId"]
    path = next(Path(home).rglob(f"{sid}.jsonl"))
    original = path.read_bytes()
    lines = original.split(b"\n")
    lines[1] = b'{"type": "message", broken'
    path.write_bytes(b"\n".join(lines))
    await side.client.request("sidecar/newSession", {})
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/resumeSession", {"sessionId": sid})
    assert "damaged at line 2" in caught.value.message
    assert path.read_bytes() == b"\n".join(lines), "nothing was overwritten"
    assert (await side.say("the server is still fine"))["text"]
    await side.client.close()


async def test_session_files_are_private_and_never_hold_the_key(client: EditorClient, fake: Any) -> None:
    await request(client, "sidecar/sendMessage", {"text": "record me"})
    usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["source"] == "api")
    home = Path(server_env()["SIDECAR_HOME"])
    path = next(home.rglob(f"{usage['sessionId']}.jsonl"))
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    content = path.read_text()
    assert CANARY_KEY not in content
    assert json.loads(content.splitlines()[0])["type"] == "session"
    new = await request(client, "sidecar/newSession", {})
    assert new["sessionId"] != usage["sessionId"]
    # The new session's usage was pushed before newSession answered.
    assert notes(client, "sidecar/tokenUsage")[-1]["sessionId"] == new["sessionId"]


@pytest.mark.parametrize("fixture", ["legacy-session.json", "session-2026-05-10T14-00-b2d4e6f8.jsonl"])
async def test_gemini_cli_session_is_imported_and_can_be_continued(
    fake: Any, dirs: tuple[str, str], fixture: str
) -> None:
    home, workspace = dirs
    side = Sidecar(home, fake.url, workspace)
    await side.start()
    source = Path(__file__).parents[1] / "fixtures" / "gemini-cli" / fixture
    imported = await side.client.request("sidecar/importSession", {"path": str(source)})
    assert imported["messageCount"] > 0
    listed = await side.client.request("sidecar/listSessions", {})
    assert imported["sessionId"] in [s["sessionId"] for s in listed]
    await side.client.request("sidecar/resumeSession", {"sessionId": imported["sessionId"]})
    await side.say("continuing the imported conversation")
    contents = chat_contents(fake)
    assert len(contents) > 2 and contents[-1]["parts"][0]["text"] == "continuing the imported conversation"
    with pytest.raises(RpcError) as caught:
        await side.client.request("sidecar/importSession", {"path": str(source.with_name("missing.jsonl"))})
    assert caught.value.code == -32004
    await side.client.close()


async def test_the_listed_message_count_is_the_one_resume_gives(fake: Any, dirs: tuple[str, str]) -> None:
    home, workspace = dirs
    first = Sidecar(home, fake.url, workspace)
    await first.start()
    await first.say("hello there")
    session_id = first.usage[-1]["sessionId"]
    await first.client.close()

    second = Sidecar(home, fake.url, workspace)
    await second.start()
    (listed,) = await second.client.request("sidecar/listSessions", {})
    resumed = await second.client.request("sidecar/resumeSession", {"sessionId": session_id})
    assert listed["messageCount"] == resumed["messageCount"] == 2, "your message and the reply, no hidden context"
    await second.client.close()
