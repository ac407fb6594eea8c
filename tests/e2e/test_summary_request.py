"""The summary request is the chat's own request plus one turn (its cached prefix reused), through the real sidecar
process, observed in the fake Gemini's request log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sidecar.core.request_prefix import prefix_share
from tests.e2e.harness import EditorClient, request

PADDING = " ".join(f"word{i}" for i in range(150))


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def summaries(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.summary]


def read(path: str, call_id: str) -> dict[str, Any]:
    return {"kind": "function_call", "name": "read_file", "args": {"path": path}, "id": call_id, "match": "chat"}


async def working_session(client: EditorClient, fake: Any, files: int = 3) -> Any:
    """A few turns that read workspace files; the last chat request."""
    root = Path(client.workspace_root)
    for i in range(files):
        (root / f"mod_{i}.py").write_text("".join(f"def f{i}_{n}():\n    return {n}\n" for n in range(300)))
    for i in range(files):
        fake.script([read(f"mod_{i}.py", f"r{i}")])
        reply = await request(client, "sidecar/sendMessage", {"text": f"Look at mod_{i}.py please. {PADDING}"})
        assert reply["text"]
    return chats(fake)[-1]


@pytest.mark.settings(tokenLimit=200_000, backgroundCompaction=False)
async def test_the_summary_request_is_the_chat_request_plus_one_turn(client: EditorClient, fake: Any) -> None:
    chat = await working_session(client, fake)
    assert chat.body.get("tools"), "the chat offers tools"
    result = await request(client, "sidecar/compress", {})
    assert result["status"] == "COMPRESSED"
    first, second = summaries(fake)
    assert first.kind == "stream" and first.model == chat.model
    assert first.body["systemInstruction"] == chat.body["systemInstruction"], "the chat's system instruction"
    assert first.body["tools"] == chat.body["tools"], "the chat's tool declarations"
    kept = len(first.body["contents"]) - 1  # the summarised part (here all: the history ends with a plain reply) ...
    shared = min(kept, len(chat.body["contents"]))
    assert shared >= len(chat.body["contents"]) - 1
    assert first.body["contents"][:shared] == chat.body["contents"][:shared], "... is the chat's history prefix"
    assert first.body["contents"][-1]["parts"][0]["text"].startswith("You are the memory component")
    assert prefix_share(first.body, chat.body) >= 0.9
    # the verify pass continues the first one: its prefix is the whole first request
    assert second.body["contents"][: kept + 1] == first.body["contents"]
    assert second.body["contents"][-2]["role"] == "model" and "<state_snapshot>" in str(second.body["contents"][-2])
    assert prefix_share(second.body, first.body) >= 0.9


@pytest.mark.settings(tokenLimit=200_000, backgroundCompaction=False)
async def test_a_tool_call_instead_of_the_summary_runs_nothing_and_is_asked_again_without_tools(
    client: EditorClient, fake: Any
) -> None:
    await working_session(client, fake, files=2)
    root = Path(client.workspace_root)
    fake.script(
        [
            {
                "kind": "function_call",
                "name": "write_file",
                "args": {"path": "evil.txt", "content": "x"},
                "match": "summary",
            }
        ]
    )
    result = await request(client, "sidecar/compress", {})
    assert result["status"] == "COMPRESSED"
    asked = summaries(fake)
    assert len(asked) == 3, "pass 1, pass 1 again with function calling off, pass 2"
    assert "toolConfig" not in asked[0].body
    assert asked[1].body["contents"] == asked[0].body["contents"]
    assert asked[1].body["toolConfig"] == {"functionCallingConfig": {"mode": "NONE"}}
    assert not (root / "evil.txt").exists(), "no tool ran"
    assert client.confirmations == [] or all(c.get("name") != "write_file" for c in client.confirmations)
