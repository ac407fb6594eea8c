"""ACP: tool calls replayed as they were shown live, a shell call's output in its card, one usage_update per event."""

from __future__ import annotations

import os
from typing import Any

import acp
import pytest

from tests.acp_agent.harness import Agent
from tests.waiting import until


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"kind": "function_call", "match": "chat", "name": name, "args": args}


def of(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


async def test_replayed_tool_calls_keep_their_ids_diffs_and_locations_and_shell_output_is_shown(
    fake: Any, home: str, workspace: str
) -> None:
    first = await Agent(fake.url, home).start()
    try:
        await first.initialize()
        sid = await first.new_session(workspace)
        await first.raw_request("session/set_mode", {"sessionId": sid, "modeId": "yolo"})
        fake.script(
            [
                call("write_file", path="a.txt", content="one\n"),
                call("replace", path="a.txt", old_string="one", new_string="two"),
                call("run_shell_command", command="echo OUT-$((6*7))"),
            ]
        )
        await first.prompt(sid, "write, edit, run")
        live = of(first.client.updates(sid), "tool_call")
        assert len(live) == 3
        shell_end = [
            u
            for u in of(first.client.updates(sid), "tool_call_update")
            if u["toolCallId"] == live[2]["toolCallId"] and u.get("status") == "completed"
        ]
        shown = " ".join(c["content"]["text"] for c in shell_end[-1]["content"] if c["type"] == "content")
        assert "OUT-42" in shown, "the command's output, not only its exit code"
    finally:
        await first.close()

    second = await Agent(fake.url, home).start()
    try:
        await second.initialize()
        await second.raw_request("session/load", {"sessionId": sid, "cwd": workspace, "mcpServers": []})
        replayed = of(second.client.updates(sid), "tool_call")
        assert [c["toolCallId"] for c in replayed] == [c["toolCallId"] for c in live], "the live calls' ids"
        assert [c["title"] for c in replayed] == [c["title"] for c in live], "the live calls' titles"
        path = os.path.join(workspace, "a.txt")
        assert replayed[0]["locations"] == [{"path": path}] and replayed[1]["locations"] == [{"path": path}]
        assert replayed[0]["content"] == [{"type": "diff", "path": path, "newText": "one\n"}]
        assert replayed[1]["content"] == [{"type": "diff", "path": path, "oldText": "one", "newText": "two"}]
    finally:
        await second.close()


async def test_replayed_tool_calls_have_the_titles_the_live_calls_had(fake: Any, home: str, workspace: str) -> None:
    with open(os.path.join(workspace, "notes.txt"), "w") as f:
        f.write("alpha\nbeta\ngamma\n")
    first = await Agent(fake.url, home).start()
    try:
        await first.initialize()
        sid = await first.new_session(workspace)
        fake.script(
            [call("read_file", path="notes.txt", start_line=2, end_line=3), call("search_text", pattern="beta")]
        )
        await first.prompt(sid, "read and search")
        live = [c["title"] for c in of(first.client.updates(sid), "tool_call")]
        assert len(live) == 2 and live[0] != "Read notes.txt", live  # the plan says more than the arguments
    finally:
        await first.close()

    second = await Agent(fake.url, home).start()
    try:
        await second.initialize()
        await second.raw_request("session/load", {"sessionId": sid, "cwd": workspace, "mcpServers": []})
        assert [c["title"] for c in of(second.client.updates(sid), "tool_call")] == live
    finally:
        await second.close()


def usages(agent: Agent, sid: str, start: int = 0) -> int:
    return len(of(agent.client.updates(sid)[start:], "usage_update"))


async def test_load_resume_and_fork_send_one_usage_update_and_pin_sends_it_after_its_reply(
    fake: Any, home: str, workspace: str
) -> None:
    first = await Agent(fake.url, home).start()
    await first.initialize()
    sid = await first.new_session(workspace)
    await first.prompt(sid, "remember this")
    await first.close()
    agent = await Agent(fake.url, home).start()
    try:
        await agent.initialize()
        for method in ("session/load", "session/resume"):
            start = len(agent.client.updates(sid))
            await agent.raw_request(method, {"sessionId": sid, "cwd": workspace, "mcpServers": []})
            await agent.prompt(sid, "/pins")  # after what the load or resume sent; itself one usage_update
            assert usages(agent, sid, start) == 2, f"{method}: one usage_update, then the /pins prompt's"
        parent_before = usages(agent, sid)
        forked = await agent.raw_request("session/fork", {"sessionId": sid, "cwd": workspace, "mcpServers": []})
        fork_id = forked["sessionId"]
        await agent.prompt(fork_id, "/pins")
        assert usages(agent, sid) == parent_before, "nothing for the parent"
        told = {m["params"]["sessionId"] for m in agent.client.raw if m.get("method") == "session/update"}
        assert told == {sid, fork_id}, "no update for a session the client was never given"
        assert usages(agent, fork_id) == 2, "one for the fork, then the /pins prompt's"
        start = len(agent.client.updates(sid))
        await agent.prompt(sid, "/pin the API is v2 only")
        kinds = [u["sessionUpdate"] for u in agent.client.updates(sid)[start:]]
        assert "usage_update" in kinds and kinds.index("agent_message_chunk") < kinds.index("usage_update")
    finally:
        await agent.close()


async def test_a_session_never_prompted_says_why_it_cannot_be_loaded(fake: Any, home: str, workspace: str) -> None:
    first = await Agent(fake.url, home).start()
    await first.initialize()
    sid = await first.new_session(workspace)
    await first.close()
    agent = await Agent(fake.url, home).start()
    try:
        await agent.initialize()
        with pytest.raises(acp.RequestError) as caught:
            await agent.raw_request("session/load", {"sessionId": sid, "cwd": workspace, "mcpServers": []})
        assert caught.value.code == -32002 and "recorded from its first prompt" in str(caught.value)
    finally:
        await agent.close()


async def test_a_prompt_sent_at_once_after_session_new_finds_the_model_client_built(
    fake: Any, home: str, workspace: str
) -> None:
    agent = await Agent(fake.url, home).start(log=True)
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        assert await agent.prompt(sid, "at once") == "end_turn"

        async def both_logged() -> bool:
            return bool(agent.logged("built for the warm-up")) and bool(agent.logged("prompt for session"))

        await until(both_logged, "the warm-up and the prompt in the log")
        built = next(i for i, line in enumerate(agent.log) if "built for the warm-up" in line)
        prompted = next(i for i, line in enumerate(agent.log) if "prompt for session" in line)
        assert built < prompted, "session/new answered before the model client was ready"
    finally:
        await agent.close()
