"""Compaction and IDE context through the real sidecar process, observed in the fake Gemini's request log."""

from __future__ import annotations

import json
import math
import os
from typing import Any

import pytest

from tests.e2e.harness import EditorClient, notes, request, wait_for

FULL = "Here is the user's editor context as a JSON object."
DELTA = "Here is a summary of changes in the user's editor context"


def editor(
    line: int = 5, character: int = 10, selected: str | None = "hello", active: str = "/ws/a.py"
) -> dict[str, Any]:
    files: list[dict[str, Any]] = [
        {"path": active, "timestamp": 2000, "isActive": True, "cursor": {"line": line, "character": character}},
        {"path": "/ws/b.py", "timestamp": 1000},
    ]
    if selected is not None:
        files[0]["selectedText"] = selected
    return {"openFiles": files, "isTrusted": True}


def context_turns(fake: Any) -> list[tuple[str, dict[str, Any]]]:
    """The IDE-context turns of the last chat request: ("full"|"delta", the JSON payload)."""
    chats = [r for r in fake.requests() if r.kind == "stream" and not r.summary]
    found = []
    for content in chats[-1].body["contents"]:
        text = content["parts"][0].get("text", "")
        if text.startswith((FULL, DELTA)):
            payload = json.loads(text.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
            found.append(("full" if text.startswith(FULL) else "delta", payload))
    return found


def latest_context(fake: Any) -> tuple[str, dict[str, Any]] | None:
    """The context turn sent right before the last user message, if there was one."""
    chats = [r for r in fake.requests() if r.kind == "stream" and not r.summary]
    contents = chats[-1].body["contents"]
    if len(contents) < 2:
        return None
    text = contents[-2]["parts"][0].get("text", "")
    if not text.startswith((FULL, DELTA)):
        return None
    payload = json.loads(text.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    return ("full" if text.startswith(FULL) else "delta", payload)


def next_prompt(reply: dict[str, Any]) -> int:
    """The size the automatic compaction check sees before the next turn: the prompt the API last
    reported plus what was added since — the model's reply (a quarter of its JSON, as the sidecar measures it)."""
    content = json.dumps({"role": "model", "parts": [{"text": reply["text"]}]}, separators=(",", ":"))
    return int(reply["usage"]["promptTokenCount"]) + math.ceil((len(content.encode()) + 1) / 4)


async def turn(client: EditorClient, text: str) -> dict[str, Any]:
    return await request(client, "sidecar/sendMessage", {"text": text})  # type: ignore[no-any-return]


async def test_first_turn_sends_the_full_context_then_only_deltas(client: EditorClient, fake: Any) -> None:
    client.notify("sidecar/ideContext", editor())
    await turn(client, "first")
    assert latest_context(fake) == (
        "full",
        {
            "activeFile": {"path": "/ws/a.py", "cursor": {"line": 5, "character": 10}, "selectedText": "hello"},
            "otherOpenFiles": ["/ws/b.py"],
        },
    )
    client.notify("sidecar/ideContext", editor(line=6))
    await turn(client, "second")
    assert latest_context(fake) == (
        "delta",
        {"changes": {"cursorMoved": {"path": "/ws/a.py", "cursor": {"line": 6, "character": 10}}}},
    )
    await turn(client, "third, nothing changed")
    assert latest_context(fake) is None


async def test_bad_ide_context_entries_are_dropped_not_fatal(client: EditorClient, fake: Any) -> None:
    bad = {"openFiles": [{"path": 7}, {"path": "relative.py", "timestamp": 1}, *editor()["openFiles"]]}
    client.notify("sidecar/ideContext", bad)
    client.notify("sidecar/ideContext", {"openFiles": "nope"})
    await turn(client, "still fine")
    kind, payload = latest_context(fake) or ("", {})
    assert kind == "full" and payload["activeFile"]["path"] == "/ws/a.py"


@pytest.mark.settings(tokenLimit=6000, compressionThreshold=0.5, backgroundCompaction=False)
async def test_auto_compaction_then_full_context_then_delta(client: EditorClient, fake: Any) -> None:
    client.notify("sidecar/ideContext", editor())
    padding = " ".join(f"word{i}" for i in range(120))
    for i in range(12):
        reply = await turn(client, f"message {i} about src/app/module_{i}.py: {padding}")
        if next_prompt(reply) >= 0.5 * reply["usage"]["tokenLimit"]:
            break  # the next turn compacts (percentUsed is rounded; the threshold check is not)
    percent_before = reply["usage"]["percentUsed"]
    assert next_prompt(reply) >= 3000 and notes(client, "sidecar/compressed") == []
    mark = len(notes(client, "sidecar/tokenUsage"))
    client.notify("sidecar/ideContext", editor(line=9))
    after = await turn(client, "and now the next step")
    notice = await wait_for(client, "sidecar/compressed", lambda n: n["trigger"] == "auto")
    assert notice["status"] == "COMPRESSED"
    assert notice["message"].startswith("Chat history compressed from ")
    summaries = [r for r in fake.requests() if r.summary]
    assert len(summaries) == 2
    assert all("<state_snapshot>" in str(r.body["contents"][-3:]) for r in summaries)  # asked in the last turns
    usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["percentUsed"] < percent_before, start=mark)
    assert usage["percentUsed"] < percent_before
    assert after["text"]
    kind, payload = latest_context(fake) or ("", {})
    assert kind == "full" and payload["activeFile"]["cursor"] == {"line": 9, "character": 10}
    client.notify("sidecar/ideContext", editor(line=10))
    await turn(client, "one more")
    assert latest_context(fake) == (
        "delta",
        {"changes": {"cursorMoved": {"path": "/ws/a.py", "cursor": {"line": 10, "character": 10}}}},
    )


@pytest.mark.settings(tokenLimit=20_000)
async def test_manual_compaction_from_the_command_then_full_context(client: EditorClient, fake: Any) -> None:
    client.notify("sidecar/ideContext", editor(selected="the selected text"))
    for i in range(6):
        await turn(client, f"working on lib/part_{i}.py " + "details " * 60)
    before = (await request(client, "sidecar/getTokenUsage", {}))["percentUsed"]
    result = await request(
        client,
        "workspace/executeCommand",
        {"command": "sidecar.compressConversation", "arguments": ["focus on lib/part_2.py"]},
    )
    assert result["status"] == "COMPRESSED"
    assert result["message"].startswith("Chat history compressed from ")
    notice = await wait_for(client, "sidecar/compressed", lambda n: n["trigger"] == "manual")
    assert notice["status"] == "COMPRESSED"
    first_pass = next(r for r in fake.requests() if r.summary)
    assert "focus on lib/part_2.py" in first_pass.body["contents"][-1]["parts"][-1]["text"]
    usage = await request(client, "sidecar/getTokenUsage", {})
    assert usage["percentUsed"] < before
    await turn(client, "after the compaction")
    kind, payload = latest_context(fake) or ("", {})
    assert kind == "full" and payload["activeFile"]["selectedText"] == "the selected text"
    if client.supports_progress():
        reports = [r for rs in client.progress().values() for r in rs]
        assert any(r.get("title") == "Compressing conversation" for r in reports)


async def test_compress_request_on_empty_history_is_noop_and_silent(client: EditorClient) -> None:
    result = await request(client, "sidecar/compress", {})
    assert (result["status"], result["message"]) == ("NOOP", "Nothing to compress.")
    assert notes(client, "sidecar/compressed") == []


async def test_workspace_settings_file_is_hot_reloaded_into_token_usage(client: EditorClient) -> None:
    root = client.workspace_root
    await wait_for(client, "sidecar/tokenUsage")
    os.makedirs(os.path.join(root, ".sidecar"))
    with open(os.path.join(root, ".sidecar", "settings.json"), "w") as handle:
        json.dump({"compressionThreshold": 0.3, "baseUrl": "http://127.0.0.1:9"}, handle)
    usage = await wait_for(client, "sidecar/tokenUsage", lambda u: u["compressionThreshold"] == 0.3)
    assert usage["compressionThreshold"] == 0.3
    assert any("baseUrl" in m and "workspace file" in m for m in client.messages())
    reply = await turn(client, "the workspace could not redirect my key")
    assert reply["text"]
