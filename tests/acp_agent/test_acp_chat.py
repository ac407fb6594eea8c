"""`sidecar acp` as a real process, driven by the SDK's client: initialize, prompts, tools, permissions, cancel."""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any

import acp
import pytest

from sidecar.fakegemini import prompt_tokens
from tests.acp_agent.harness import Agent, is_update


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


async def test_initialize_advertises_load_list_resume_and_embedded_context(agent: Agent) -> None:
    result = await agent.initialize()
    assert result["protocolVersion"] == 1
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"]["embeddedContext"] is True
    assert {"list", "resume", "fork"} <= caps["sessionCapabilities"].keys()
    assert result["agentInfo"]["name"] == "sidecar"


async def test_prompt_streams_chunks_then_usage_and_ends_the_turn(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    commands = await agent.wait_for(is_update("available_commands_update"))
    names = [c["name"] for c in commands["params"]["update"]["availableCommands"]]
    assert names[:10] == [
        "compress",
        "rate",
        "undo-compaction",
        "transcript",
        "new",
        "rewind",
        "pin",
        "pins",
        "unpin",
        "memory",
    ]
    assert {"context", "plan"} <= set(names[10:])
    compress = commands["params"]["update"]["availableCommands"][0]
    assert compress["input"]["hint"]
    assert await agent.prompt(sid, "hello sidecar") == "end_turn"
    chunks = [u for u in agent.client.updates(sid) if u["sessionUpdate"] == "agent_message_chunk"]
    assert len(chunks) >= 2, "the reply arrives in several chunks"
    # two turns: the session context that opens every history, then the message
    assert agent.client.text() == 'Fake Gemini reply #1: you said "hello sidecar" (history: 2 turns)'
    request = chats(fake)[-1]
    usage = agent.client.updates(sid)[-1]
    assert usage == {"sessionUpdate": "usage_update", "used": prompt_tokens(request.body), "size": 1_048_576}
    assert agent.client.kinds(sid)[:2] == ["available_commands_update", "usage_update"], "announced after new"


async def test_thought_summaries_stream_as_thought_chunks(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    fake.script([{"kind": "text", "match": "chat", "text": "The answer is 42.", "thought": "Let me think it over."}])
    await agent.prompt(sid, "what is the answer?")
    assert agent.client.text("agent_thought_chunk") == "Let me think it over."
    assert agent.client.text() == "The answer is 42."
    kinds = agent.client.kinds(sid)
    assert kinds.index("agent_thought_chunk") < kinds.index("agent_message_chunk")


async def test_embedded_resources_and_links_become_text_and_ide_context(
    agent: Agent, fake: Any, workspace: str
) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    path = os.path.join(workspace, "notes.md")
    link = acp.resource_link_block(name="todo.py", uri=f"file://{workspace}/todo.py")
    embedded = acp.resource_block(acp.embedded_text_resource(f"file://{path}", "remember the milk"))
    await agent.prompt(sid, "look at", embedded, "and", link)
    contents = chats(fake)[-1].body["contents"]
    context, user = contents[-2]["parts"][0]["text"], contents[-1]["parts"][0]["text"]
    assert context.startswith("Here is the user's editor context")
    assert f"{workspace}/todo.py" in context and path in context
    assert user.startswith(f"look at @{path} and @{workspace}/todo.py")
    assert "Content from @" + path + ":\nremember the milk" in user


async def test_permission_round_trip_allow_reject_and_always(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    write = {"kind": "function_call", "match": "chat", "name": "write_file"}
    fake.script([{**write, "args": {"path": "a.txt", "content": "one\n"}, "id": "w1"}])
    agent.client.decisions = ["deny"]
    assert await agent.prompt(sid, "write a.txt") == "end_turn"
    asked = agent.client.permissions[-1]
    assert asked["options"] == ["allow", "allowAlways", "deny"]
    assert asked["toolCall"]["kind"] == "edit"
    assert asked["toolCall"]["content"][0] == {"type": "diff", "path": f"{workspace}/a.txt", "newText": "one\n"}
    assert not os.path.exists(os.path.join(workspace, "a.txt"))
    end = [u for u in agent.client.updates(sid) if u["sessionUpdate"] == "tool_call_update"][-1]
    assert end["status"] == "failed" and "Denied by the user" in str(end["content"])

    fake.script([{**write, "args": {"path": "a.txt", "content": "two\n"}, "id": "w2"}])
    agent.client.decisions = ["allowAlways"]
    await agent.prompt(sid, "try again")
    with open(os.path.join(workspace, "a.txt")) as handle:
        assert handle.read() == "two\n"
    start = [u for u in agent.client.updates(sid) if u["sessionUpdate"] == "tool_call"][-1]
    assert start["kind"] == "edit" and start["locations"] == [{"path": f"{workspace}/a.txt"}]
    done = [u for u in agent.client.updates(sid) if u["sessionUpdate"] == "tool_call_update"][-1]
    assert done["status"] == "completed" and done["toolCallId"] == start["toolCallId"]

    asked_before = len(agent.client.permissions)
    fake.script([{**write, "args": {"path": "a.txt", "content": "three\n"}, "id": "w3"}])
    await agent.prompt(sid, "once more")
    assert len(agent.client.permissions) == asked_before, "allow always: not asked again"
    with open(os.path.join(workspace, "a.txt")) as handle:
        assert handle.read() == "three\n"


async def test_session_modes_are_the_approval_modes(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    new = await agent.raw_request("session/new", {"cwd": workspace, "mcpServers": []})
    sid = new["sessionId"]
    assert new["modes"]["currentModeId"] == "default"
    assert [m["id"] for m in new["modes"]["availableModes"]] == ["default", "autoEdit", "yolo"]
    await agent.raw_request("session/set_mode", {"sessionId": sid, "modeId": "autoEdit"})
    await agent.wait_for(is_update("current_mode_update", currentModeId="autoEdit"))
    fake.script(
        [
            {
                "kind": "function_call",
                "match": "chat",
                "name": "write_file",
                "args": {"path": "b.txt", "content": "auto\n"},
            }
        ]
    )
    await agent.prompt(sid, "write b.txt")
    assert agent.client.permissions == [], "autoEdit: edits do not ask"
    fake.script(
        [{"kind": "function_call", "match": "chat", "name": "run_shell_command", "args": {"command": "echo hi"}}]
    )
    agent.client.decisions = ["deny"]
    await agent.prompt(sid, "run it")
    assert len(agent.client.permissions) == 1, "autoEdit: shell commands still ask"


async def test_client_fs_reads_unsaved_buffers_and_writes_through_the_editor(
    agent: Agent, fake: Any, workspace: str
) -> None:
    await agent.initialize(fs=True)
    sid = await agent.new_session(workspace)
    path = os.path.join(workspace, "main.py")
    with open(path, "w") as handle:
        handle.write("print('on disk')\n")
    agent.client.buffers[path] = "print('unsaved in the editor')\n"
    fake.script([{"kind": "function_call", "match": "chat", "name": "read_file", "args": {"path": "main.py"}}])
    await agent.prompt(sid, "read main.py")
    response = chats(fake)[-1].body["contents"][-1]["parts"][0]["functionResponse"]["response"]
    assert "unsaved in the editor" in response["output"]
    edit = {"path": "main.py", "old_string": "unsaved in the editor", "new_string": "edited"}
    fake.script([{"kind": "function_call", "match": "chat", "name": "replace", "args": edit}])
    await agent.prompt(sid, "edit it")
    assert agent.client.writes == [(path, "print('edited')\n")]
    with open(path) as handle:
        assert handle.read() == "print('on disk')\n", "the edit went through the editor, not to disk"
    told = chats(fake)[-1].body["contents"][-1]["parts"][0]["functionResponse"]["response"]["output"]
    assert told.endswith("in the editor (unsaved)."), "a client that only changed its buffer: unsaved, truly"


async def test_a_write_the_client_saves_is_reported_to_the_model_as_on_disk(
    agent: Agent, fake: Any, workspace: str
) -> None:
    """fs/write_text_file writes the file (Zed, acpx): the model is not told it is unsaved."""
    await agent.initialize(fs=True)
    agent.client.write_to_disk = True
    sid = await agent.new_session(workspace)
    path = os.path.join(workspace, "main.py")
    with open(path, "w") as handle:
        handle.write("print('before')\n")
    edit = {"path": "main.py", "old_string": "before", "new_string": "after"}
    fake.script([{"kind": "function_call", "match": "chat", "name": "replace", "args": edit}])
    await agent.prompt(sid, "edit it")
    assert agent.client.writes == [(path, "print('after')\n")]
    told = chats(fake)[-1].body["contents"][-1]["parts"][0]["functionResponse"]["response"]["output"]
    assert told == "Edited main.py (+1 −1).", told


async def test_cancel_stops_the_turn_and_the_history_stays_valid(fake: Any, home: str, workspace: str) -> None:
    # The call is held until the cancel ends the turn: the only way it can end. (With the suite's 10 s
    # requestTimeoutMs a slow machine could time the call out first and answer the retry: hence the shipped one.)
    agent = await Agent(fake.url, home, settings={"requestTimeoutMs": 120_000}).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        fake.script([{"kind": "hold", "match": "stream"}])
        running = asyncio.ensure_future(agent.prompt(sid, "a slow question"))
        await asyncio.to_thread(fake.wait_for_requests, 1, 20)
        await agent.conn.cancel(session_id=sid)
        assert await running == "cancelled"
        assert await agent.prompt(sid, "and now?") == "end_turn"
        contents = chats(fake)[-1].body["contents"]
        texts = [c["parts"][0].get("text") for c in contents if c["role"] == "user"]
        assert texts[0].startswith("<session_context>"), "the session context opens every history"
        assert texts[1:] == ["a slow question", "and now?"], "the cancelled message stays in the history"
    finally:
        await agent.close()


async def test_cancel_while_asking_permission_denies_the_call(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    fake.script(
        [{"kind": "function_call", "match": "chat", "name": "run_shell_command", "args": {"command": "echo hi"}}]
    )
    agent.client.decisions = ["cancel"]
    assert await agent.prompt(sid, "run it") == "end_turn"
    end = [u for u in agent.client.updates(sid) if u["sessionUpdate"] == "tool_call_update"][-1]
    assert end["status"] == "failed"
    assert agent.client.permissions[-1]["toolCall"]["kind"] == "execute"


async def test_model_errors_are_jsonrpc_errors_in_words(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    fake.script([{"kind": "status", "status": 400, "message": "Invalid thing in the request"}])
    await agent.wait_for(is_update("usage_update"))  # the session's announcement (sent after session/new answers)
    mark = len(agent.client.updates(sid))
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "this fails")
    assert caught.value.code == -32001
    assert "Invalid thing in the request" in str(caught.value)
    assert [u["sessionUpdate"] for u in agent.client.updates(sid)[mark:]] == ["usage_update"], "after every turn"
    assert await agent.prompt(sid, "this works") == "end_turn"
    texts = [c["parts"][0].get("text") for c in chats(fake)[-1].body["contents"] if c["role"] == "user"]
    assert texts[0].startswith("<session_context>"), "the session context opens every history"
    assert texts[1:] == ["this fails", "this works"], "nothing the user wrote is lost"


async def test_max_tool_rounds_stops_with_max_turn_requests(fake: Any, home: str, workspace: str) -> None:
    agent = await Agent(fake.url, home, settings={"maxToolRounds": 1, "approvalMode": "yolo"}).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        call = {"kind": "function_call", "match": "chat", "name": "list_directory", "args": {"path": "."}}
        fake.script([call, call])
        assert await agent.prompt(sid, "loop") == "max_turn_requests"
    finally:
        await agent.close()


async def test_a_blocked_prompt_is_a_refusal_named_in_words_and_the_next_prompt_works(
    agent: Agent, fake: Any, workspace: str
) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    fake.script([{"kind": "blocked", "match": "chat", "blockReason": "PROHIBITED_CONTENT"}])
    assert await agent.prompt(sid, "something the policy refuses") == "refusal"
    assert len(chats(fake)) == 1, "a blocked prompt is not retried: the same prompt would be blocked again"
    said = agent.client.text()
    assert "PROHIBITED_CONTENT" in said or "prohibited content" in said.lower(), said
    mark = len(agent.client.updates(sid))
    assert await agent.prompt(sid, "something else") == "end_turn"
    assert "something else" in agent.client.text(start=mark)
    contents = chats(fake)[-1].body["contents"]
    assert contents[0]["parts"][0]["text"].startswith("<session_context>")
    roles = [c["role"] for c in contents[1:]]  # after the session context turn that opens every history
    assert all(a != b for a, b in itertools.pairwise(roles)), f"roles alternate: {roles}"


async def test_a_reply_cut_by_max_tokens_keeps_its_text_and_stops_with_max_tokens(
    agent: Agent, fake: Any, workspace: str
) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    fake.script([{"kind": "finish", "match": "chat", "finishReason": "MAX_TOKENS", "text": "The first half of it"}])
    assert await agent.prompt(sid, "a long answer please") == "max_tokens"
    assert len(chats(fake)) == 1, "a reply with text cut by MAX_TOKENS is kept, not retried"
    assert agent.client.text().startswith("The first half of it")
    assert await agent.prompt(sid, "go on") == "end_turn"
    history = chats(fake)[-1].body["contents"]
    assert any(p.get("text") == "The first half of it" for c in history if c["role"] == "model" for p in c["parts"])


async def test_the_model_client_is_ready_before_the_first_prompt(fake: Any, home: str, workspace: str) -> None:
    """google-genai is imported and the model client built in the background after initialize and
    session/new, so the first prompt of a process does not pay for them."""
    from tests.waiting import until

    agent = await Agent(fake.url, home).start(log=True)
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        await until(lambda: agent.logged("built for the warm-up after initialize"), "the warm-up's model client", 60)
        mark = len(agent.log)
        assert await agent.prompt(sid, "the first prompt") == "end_turn"
        assert agent.logged("model client for", mark) == [], "the first prompt did not build a client"
    finally:
        await agent.close()
