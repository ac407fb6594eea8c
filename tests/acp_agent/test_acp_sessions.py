"""ACP sessions and compaction through real processes: /compress, automatic compaction, list, load, resume,
a session started over the editor protocol loaded over ACP."""

from __future__ import annotations

from typing import Any

import acp
import pytest

from tests.acp_agent.harness import Agent
from tests.e2e.test_sessions import Sidecar

SNAPSHOT = "<state_snapshot>"


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


async def chat_a_while(agent: Agent, sid: str, turns: int = 6) -> None:
    for i in range(turns):
        await agent.prompt(sid, f"working on lib/part_{i}.py " + "details " * 60)


def compaction_updates(agent: Agent) -> list[dict[str, Any]]:
    return [u for u in agent.client.updates() if u["sessionUpdate"] == "compaction_update"]


@pytest.mark.parametrize("advertised", [True, False])
async def test_compress_with_focus_reports_in_words_and_compaction_update_only_when_advertised(
    fake: Any, home: str, workspace: str, advertised: bool
) -> None:
    agent = await Agent(fake.url, home, settings={"tokenLimit": 20_000}).start()
    try:
        await agent.initialize(compaction=advertised)
        sid = await agent.new_session(workspace)
        await agent.prompt(sid, "see", acp.resource_link_block(name="a.py", uri=f"file://{workspace}/a.py"))
        await chat_a_while(agent, sid, 5)
        used_before = agent.client.updates(sid)[-1]["used"]
        mark = len(agent.client.updates())
        assert await agent.prompt(sid, "/compress keep the file names") == "end_turn"
        first_pass = next(r for r in fake.requests() if r.summary)
        assert "keep the file names" in first_pass.body["contents"][-1]["parts"][-1]["text"]
        said = agent.client.text(start=mark)
        assert "Compressing the conversation…" in said
        assert "Chat history compressed from " in said
        usage = [u for u in agent.client.updates()[mark:] if u["sessionUpdate"] == "usage_update"]
        assert usage and usage[-1]["used"] < used_before
        # the outcome in words first, then the usage it led to (docs/acp.md)
        after = agent.client.updates()[mark:]
        said_at = next(i for i, u in enumerate(after) if "Chat history compressed" in str(u.get("content", "")))
        first_lower = next(
            i for i, u in enumerate(after) if u["sessionUpdate"] == "usage_update" and u["used"] < used_before
        )
        assert said_at < first_lower, [u["sessionUpdate"] for u in after]
        assert len(chats(fake)) == 6, "the command is not sent to the model"
        if advertised:
            first, last = compaction_updates(agent)
            assert first["status"] == "in_progress" and last["status"] == "completed"
            assert first["compactionId"] == last["compactionId"]
            assert SNAPSHOT in last["summary"][0]["text"]
        else:
            assert compaction_updates(agent) == []
            stable = {"available_commands_update", "usage_update", "agent_message_chunk", "agent_thought_chunk"}
            assert set(agent.client.kinds()) <= stable, "no unstable update for a client that did not ask"
        await agent.prompt(sid, "after the compaction")
        contents = chats(fake)[-1].body["contents"]
        assert any(SNAPSHOT in str(c) for c in contents)
        context = contents[-2]["parts"][0]["text"]
        assert context.startswith("Here is the user's editor context as a JSON object"), "full context after it"
        assert f"{workspace}/a.py" in context
    finally:
        await agent.close()


async def test_automatic_compaction_is_announced(fake: Any, home: str, workspace: str) -> None:
    agent = await Agent(fake.url, home, settings={"tokenLimit": 6000, "compressionThreshold": 0.5}).start()
    try:
        await agent.initialize(compaction=True)
        sid = await agent.new_session(workspace)
        padding = " ".join(f"word{i}" for i in range(120))
        for i in range(12):
            await agent.prompt(sid, f"message {i} about src/app/module_{i}.py: {padding}")
            if agent.client.updates(sid)[-1]["used"] >= 3000:
                break
        mark = len(agent.client.updates())
        await agent.prompt(sid, "and now the next step")
        said = agent.client.text(start=mark)
        assert "Compressing the conversation…" in said
        assert "Chat history compressed from " in said
        # after the mark: the loop's usage is only a proxy for "the next turn compacts" (a turn's budget check may
        # compact one turn earlier); this turn's compaction is announced once
        statuses = [u["status"] for u in agent.client.updates()[mark:] if u["sessionUpdate"] == "compaction_update"]
        assert statuses == ["in_progress", "completed"]
        assert said.index("Chat history compressed from ") < said.index("Fake Gemini reply"), "then the reply"
        assert agent.client.updates(sid)[-1]["used"] < 3000
    finally:
        await agent.close()


async def test_compress_on_an_empty_session_says_nothing_to_compress(agent: Agent, workspace: str) -> None:
    await agent.initialize(compaction=True)
    sid = await agent.new_session(workspace)
    await agent.prompt(sid, "/compress")
    assert "Nothing to compress." in agent.client.text()
    assert [u["status"] for u in compaction_updates(agent)] == ["in_progress", "failed"]


async def test_list_newest_first_with_titles_and_paging_errors(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    first = await agent.new_session(workspace)
    await agent.prompt(first, "the first session")
    second = await agent.new_session(workspace)
    await agent.prompt(second, "the second session")
    listed = await agent.raw_request("session/list", {"cwd": workspace})
    assert [(s["sessionId"], s["title"], s["cwd"]) for s in listed["sessions"]] == [
        (second, "the second session", workspace),
        (first, "the first session", workspace),
    ]
    assert "nextCursor" not in listed
    everywhere = await agent.raw_request("session/list", {})
    assert {first, second} <= {s["sessionId"] for s in everywhere["sessions"]}
    with pytest.raises(acp.RequestError) as caught:
        await agent.raw_request("session/list", {"cwd": workspace, "cursor": "nonsense"})
    assert caught.value.code == -32602 and "cursor" in str(caught.value)


async def test_load_replays_the_whole_conversation_and_the_next_request_carries_the_snapshot(
    fake: Any, home: str, workspace: str
) -> None:
    """session/load shows everything said (compacted messages too), with a marker at the compaction;
    the model still gets the compacted view."""
    first = await Agent(fake.url, home, settings={"tokenLimit": 20_000}).start()
    await first.initialize()
    sid = await first.new_session(workspace)
    await first.prompt(sid, "the very first request about lib/start.py")
    await chat_a_while(first, sid, 5)
    await first.prompt(sid, "/compress")
    await first.prompt(sid, "said after the compaction")
    await first.close()

    second = await Agent(fake.url, home, settings={"tokenLimit": 20_000}).start()
    try:
        await second.initialize()
        await second.raw_request("session/load", {"sessionId": sid, "cwd": workspace, "mcpServers": []})
        replay = second.client.updates(sid)
        shown = second.client.text("user_message_chunk")
        assert shown.startswith("the very first request about lib/start.py"), "compacted messages are replayed too"
        assert all(f"working on lib/part_{i}.py" in shown for i in range(5))
        assert "said after the compaction" in shown and "/compress" not in shown
        agent_text = second.client.text()
        assert agent_text.count("Compacted here") == 1 and SNAPSHOT in agent_text
        marker_at = agent_text.index("Compacted here")
        assert agent_text.index("Fake Gemini reply #1") < marker_at, "the marker sits where the compaction happened"
        kinds = [u["sessionUpdate"] for u in replay]
        assert kinds[-2:] == ["available_commands_update", "usage_update"]
        assert replay[-1]["used"] > 0
        await second.prompt(sid, "continuing in another process")
        contents = chats(fake)[-1].body["contents"]
        assert any(SNAPSHOT in str(c) for c in contents)
        user_texts = [c["parts"][0].get("text", "") for c in contents if c["role"] == "user"]
        assert "the very first request about lib/start.py" not in user_texts, "the model gets the compacted view"
        assert "said after the compaction" in user_texts
        assert user_texts[-1] == "continuing in another process"
        resumed = await Agent(fake.url, home).start()
        try:
            await resumed.initialize()
            with pytest.raises(acp.RequestError) as caught:
                await resumed.raw_request("session/resume", {"sessionId": "no-such-session", "cwd": workspace})
            assert caught.value.code == -32002 and "No recorded session" in str(caught.value)
        finally:
            await resumed.close()
    finally:
        await second.close()


async def test_load_replays_tool_calls_and_leaves_out_rewound_messages(fake: Any, home: str, workspace: str) -> None:
    """session/load as VS Code's resume shows it: every tool call, no rewound message, a marker per compaction."""
    with open(f"{workspace}/notes.txt", "w") as f:
        f.write("NOTES-CONTENT\n")
    editor = Sidecar(home, fake.url, workspace)
    await editor.start(tokenLimit=20_000)
    fake.script([{"kind": "function_call", "match": "chat", "name": "read_file", "args": {"path": "notes.txt"}}])
    await editor.say("read the notes please")
    for i in range(4):
        await editor.say(f"more about part {i} " + "details " * 60)
    await editor.client.request("sidecar/compress", {})
    await editor.say("TAKE-BACK: a message to rewind")
    entries = (await editor.client.request("sidecar/getTranscript", {}))["entries"]
    rewind_to = next(e["id"] for e in entries if e["type"] == "message" and e["text"].startswith("TAKE-BACK"))
    await editor.client.request("sidecar/rewind", {"messageId": rewind_to})
    await editor.say("said after the rewind")
    recorded = editor.usage[-1]["sessionId"]
    await editor.client.request("shutdown", None)
    await editor.client.close()

    agent = await Agent(fake.url, home).start()
    try:
        await agent.initialize()
        await agent.raw_request("session/load", {"sessionId": recorded, "cwd": workspace, "mcpServers": []})
        shown = agent.client.text("user_message_chunk")
        assert shown.startswith("read the notes please") and "said after the rewind" in shown
        assert "TAKE-BACK" not in shown, "a rewound message is not replayed"
        assert "Here is the user's editor context" not in shown, "editor context is not shown"
        updates = agent.client.updates(recorded)
        calls = [u for u in updates if u["sessionUpdate"] == "tool_call"]
        assert [c["title"] for c in calls] == ["Read notes.txt"]
        results = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
        assert results[0]["toolCallId"] == calls[0]["toolCallId"] and results[0]["status"] == "completed"
        assert "NOTES-CONTENT" in results[0]["content"][0]["content"]["text"]
        assert agent.client.text().count("Compacted here") == 1
    finally:
        await agent.close()


async def test_resume_does_not_replay(fake: Any, home: str, workspace: str) -> None:
    first = await Agent(fake.url, home).start()
    await first.initialize()
    sid = await first.new_session(workspace)
    await first.prompt(sid, "remember this")
    await first.close()
    second = await Agent(fake.url, home).start()
    try:
        await second.initialize()
        await second.raw_request("session/resume", {"sessionId": sid, "cwd": workspace, "mcpServers": []})
        assert "user_message_chunk" not in second.client.kinds(sid)
        await second.prompt(sid, "what did I say?")
        texts = [c["parts"][0].get("text") for c in chats(fake)[-1].body["contents"] if c["role"] == "user"]
        assert texts[0].startswith("<session_context>") and texts[1:] == ["remember this", "what did I say?"]
    finally:
        await second.close()


async def test_a_session_started_over_the_editor_protocol_loads_over_acp(fake: Any, home: str, workspace: str) -> None:
    editor = Sidecar(home, fake.url, workspace)
    await editor.start()
    await editor.say("started in VS Code")
    await editor.client.request("shutdown", None)
    await editor.client.close()
    recorded = editor.usage[-1]["sessionId"]

    agent = await Agent(fake.url, home).start()
    try:
        await agent.initialize()
        listed = await agent.raw_request("session/list", {"cwd": workspace})
        assert [s["sessionId"] for s in listed["sessions"]] == [recorded]
        await agent.raw_request("session/load", {"sessionId": recorded, "cwd": workspace, "mcpServers": []})
        assert agent.client.text("user_message_chunk") == "started in VS Code"
        assert agent.client.text().startswith("Fake Gemini reply #1")
        await agent.prompt(recorded, "continued in Zed")
        texts = [c["parts"][0].get("text") for c in chats(fake)[-1].body["contents"] if c["role"] == "user"]
        assert texts[0].startswith("<session_context>") and texts[1:] == ["started in VS Code", "continued in Zed"]
        assert agent.client.updates(recorded)[-1]["sessionUpdate"] == "usage_update"
    finally:
        await agent.close()

    back = Sidecar(home, fake.url, workspace)  # and the other way round: VS Code resumes what Zed added
    await back.start()
    await back.client.request("sidecar/resumeSession", {"sessionId": recorded})
    await back.say("back in VS Code")
    texts = [c["parts"][0].get("text") for c in chats(fake)[-1].body["contents"] if c["role"] == "user"]
    assert texts[0].startswith("<session_context>")
    assert texts[1:] == ["started in VS Code", "continued in Zed", "back in VS Code"]
    await back.client.request("shutdown", None)
    await back.client.close()


async def test_undo_compaction_transcript_and_new(fake: Any, home: str, workspace: str) -> None:
    agent = await Agent(fake.url, home, settings={"tokenLimit": 20_000}).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        await agent.prompt(sid, "the first request about lib/start.py")
        await chat_a_while(agent, sid, 5)
        await agent.prompt(sid, "/compress")
        mark = len(agent.client.updates())
        await agent.prompt(sid, "/undo-compaction")
        # 13: the session context (recorded, kind env) and the 12 messages of the six turns
        assert "Compaction undone: the history is back to 13 messages" in agent.client.text(start=mark)
        await agent.prompt(sid, "after the undo")
        contents = chats(fake)[-1].body["contents"]
        assert not any(SNAPSHOT in str(c) for c in contents)
        assert contents[0]["parts"][0]["text"].startswith("<session_context>"), "a fresh one heads the undone history"
        assert contents[1]["parts"][0]["text"] == "the first request about lib/start.py"

        mark = len(agent.client.updates())
        await agent.prompt(sid, "/transcript")
        transcript = agent.client.text(start=mark)
        assert f"Transcript of session {sid}" in transcript and ".jsonl" in transcript
        assert "— compaction (manual) COMPRESSED:" in transcript and "(undone)" in transcript
        assert "**You:** the first request about lib/start.py" in transcript

        await agent.prompt(sid, "/new")
        await agent.prompt(sid, "a fresh start")
        fresh = [c["parts"][0].get("text") for c in chats(fake)[-1].body["contents"]]
        assert fresh[0].startswith("<session_context>") and fresh[1:] == ["a fresh start"]
        listed = await agent.raw_request("session/list", {"cwd": workspace})
        assert len(listed["sessions"]) == 2 and listed["sessions"][1]["sessionId"] == sid
    finally:
        await agent.close()
