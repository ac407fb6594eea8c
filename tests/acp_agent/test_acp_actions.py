"""Fork, rewind and pins over ACP: session/fork (unstable) and the /rewind, /pin, /pins, /unpin slash commands, served
by the same SessionActions as the editor protocol."""

from __future__ import annotations

import os
import re
from typing import Any

import acp
import pytest

from tests.acp_agent.harness import Agent


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


def user_texts(request: Any) -> list[str]:
    """The user turns' texts, after the <session_context> turn that opens every history (checked here)."""
    texts = [c["parts"][0].get("text", "") for c in request.body["contents"] if c["role"] == "user"]
    assert texts and texts[0].startswith("<session_context>"), texts[:1]
    return texts[1:]


def system_text(request: Any) -> str:
    system = request.body.get("systemInstruction") or {}
    return "".join(p.get("text", "") for p in system.get("parts", []))


async def test_fork_copies_the_history_and_leaves_the_parent_unchanged(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    parent = await agent.new_session(workspace)
    await agent.prompt(parent, "the parent's first message")
    await agent.prompt(parent, "the parent's second message")

    forked = await agent.raw_request("session/fork", {"sessionId": parent, "cwd": workspace, "mcpServers": []})
    child = forked["sessionId"]
    assert child != parent and forked["modes"]["currentModeId"] == "default"
    assert await agent.prompt(child, "only in the fork") == "end_turn"
    assert user_texts(chats(fake)[-1]) == [
        "the parent's first message",
        "the parent's second message",
        "only in the fork",
    ]
    await agent.prompt(parent, "only in the parent")
    assert user_texts(chats(fake)[-1]) == [
        "the parent's first message",
        "the parent's second message",
        "only in the parent",
    ]
    listed = await agent.raw_request("session/list", {"cwd": workspace})
    assert {s["sessionId"] for s in listed["sessions"]} == {parent, child}


async def test_fork_of_an_unknown_session_is_resource_not_found(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    missing = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(acp.RequestError) as caught:
        await agent.raw_request("session/fork", {"sessionId": missing, "cwd": workspace, "mcpServers": []})
    assert caught.value.code == -32002 and missing in str(caught.value)


async def test_rewind_takes_back_messages_and_shows_the_text(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    for text in ("first", "second", "third", "fourth"):
        await agent.prompt(sid, text)
    mark = len(agent.client.updates())
    assert await agent.prompt(sid, "/rewind") == "end_turn"
    said = agent.client.text(start=mark)
    assert "Rewound to before your message" in said and "> fourth" in said
    await agent.prompt(sid, "/rewind 2")
    await agent.prompt(sid, "after the rewinds")
    assert user_texts(chats(fake)[-1]) == ["first", "after the rewinds"]

    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/rewind 9")
    assert "Cannot rewind 9 messages" in str(caught.value)
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/rewind lots")
    assert "not 'lots'" in str(caught.value)


async def test_rewind_files_puts_back_what_the_agent_changed(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    path = os.path.join(workspace, "notes.txt")
    with open(path, "w") as handle:
        handle.write("before the agent\n")
    await agent.raw_request("session/set_mode", {"sessionId": sid, "modeId": "yolo"})
    write = {"kind": "function_call", "match": "chat", "name": "write_file"}
    fake.script([{**write, "args": {"path": "notes.txt", "content": "the agent's\n"}}])
    await agent.prompt(sid, "rewrite the notes")
    fake.script([{**write, "args": {"path": "made.txt", "content": "new\n"}}])
    await agent.prompt(sid, "make a file")
    with open(path) as handle:
        assert handle.read() == "the agent's\n"
    mark = len(agent.client.updates())
    assert await agent.prompt(sid, "/rewind --files 2") == "end_turn"
    said = agent.client.text(start=mark)
    assert f"restored `{path}`" in said and f"removed `{os.path.join(workspace, 'made.txt')}`" in said, said
    with open(path) as handle:
        assert handle.read() == "before the agent\n"
    assert not os.path.exists(os.path.join(workspace, "made.txt"))
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/rewind --files lots")
    assert "not '--files lots'" in str(caught.value)


async def test_pin_pins_and_unpin(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    mark = len(agent.client.updates())
    await agent.prompt(sid, "/pin the API is v2 only")
    found = re.search(r"Pinned `([^`]+)`", agent.client.text(start=mark))
    assert found is not None
    pin_id = found.group(1)
    mark = len(agent.client.updates())
    await agent.prompt(sid, "/pins")
    assert f"`{pin_id}`: the API is v2 only" in agent.client.text(start=mark)
    await agent.prompt(sid, "a question")
    assert "the API is v2 only" in system_text(chats(fake)[-1])

    await agent.prompt(sid, f"/unpin {pin_id}")
    mark = len(agent.client.updates())
    await agent.prompt(sid, "/pins")
    assert "No pinned facts in this session" in agent.client.text(start=mark)
    await agent.prompt(sid, "another question")
    assert "the API is v2 only" not in system_text(chats(fake)[-1])
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/pin")
    assert "/pin needs the fact to pin" in str(caught.value)
