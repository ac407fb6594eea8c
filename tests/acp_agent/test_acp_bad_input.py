"""Bad input to `sidecar acp`: every problem is answered in words (-32700 / -32600 / -32602 / -32601 / -32002),
and the process stays up and keeps serving."""

from __future__ import annotations

import json
import os
from typing import Any

import acp
import pytest

from tests.acp_agent.harness import Agent


async def error_of(agent: Agent, method: str, params: Any) -> acp.RequestError:
    with pytest.raises(acp.RequestError) as caught:
        await agent.raw_request(method, params)
    return caught.value


async def test_lines_that_are_not_json_rpc_are_answered_and_survived(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    for line, code, words in [
        (b"this is not json\n", -32700, "not valid JSON"),
        (b"[1, 2, 3]\n", -32600, "must be an object"),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "session/new"}\n', -32600, "`id` must be"),
        (b'{"jsonrpc": "2.0", "id": 77, "method": 5}\n', -32600, "`method` must be a string"),
        (b"\xff\xfe\n", -32700, "not valid JSON"),
    ]:
        before = len(agent.client.raw)
        agent.write_line(line)
        answer = await agent.wait_for(lambda m: m.get("error") is not None, start=before)
        assert answer["error"]["code"] == code and words in answer["error"]["message"], line
    sid = await agent.new_session(workspace)
    assert await agent.prompt(sid, "still here") == "end_turn"


async def test_bad_params_are_invalid_params_naming_the_field(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    missing = await error_of(agent, "session/new", {"mcpServers": []})
    assert missing.code == -32602 and "session/new" in str(missing) and "cwd" in str(missing)
    relative = await error_of(agent, "session/new", {"cwd": "relative/path", "mcpServers": []})
    assert relative.code == -32602 and "absolute path" in str(relative)
    not_object = await error_of(agent, "session/prompt", [1, 2])
    assert not_object.code == -32602 and "must be an object" in str(not_object)
    sid = await agent.new_session(workspace)
    wrong_type = await error_of(agent, "session/prompt", {"sessionId": sid, "prompt": "just a string"})
    assert wrong_type.code == -32602 and "prompt" in str(wrong_type)
    lone = [{"type": "text", "text": "\ud800"}]
    surrogate = await error_of(agent, "session/prompt", {"sessionId": sid, "prompt": lone})
    assert surrogate.code == -32602 and "surrogate" in str(surrogate)
    empty = await error_of(agent, "session/prompt", {"sessionId": sid, "prompt": []})
    assert empty.code == -32602 and "no text" in str(empty)
    mode = await error_of(agent, "session/set_mode", {"sessionId": sid, "modeId": "reckless"})
    assert mode.code == -32602 and "reckless" in str(mode)
    unknown = await error_of(agent, "session/prompt", {"sessionId": "nope", "prompt": [{"type": "text", "text": "x"}]})
    assert unknown.code == -32002 and "Unknown session 'nope'" in str(unknown)
    method = await error_of(agent, "session/teleport", {})
    assert method.code == -32601 and "session/teleport" in str(method)
    bad_cancel = {"jsonrpc": "2.0", "method": "session/cancel", "params": {"bad": True}}
    agent.write_line(json.dumps(bad_cancel).encode() + b"\n")
    assert await agent.prompt(sid, "all of that, and still serving") == "end_turn"


async def test_settings_file_problems_are_told_in_words(fake: Any, home: str, workspace: str) -> None:
    os.makedirs(os.path.join(workspace, ".sidecar"))
    with open(os.path.join(workspace, ".sidecar", "settings.json"), "w") as handle:
        json.dump({"compressionThreshold": 7, "apiKey": "from-the-repo", "tokenLimit": 50_000}, handle)
    agent = await Agent(fake.url, home).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        await agent.prompt(sid, "hi")
        said = agent.client.text()
        assert "compressionThreshold is invalid" in said
        assert "`apiKey` cannot be set from a workspace file" in said
        assert agent.client.updates(sid)[-1]["size"] == 50_000, "the good values still apply"
        assert all(r.has_key for r in fake.requests())
    finally:
        await agent.close()


async def test_the_process_exits_cleanly_when_the_client_closes_stdin(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    await agent.prompt(sid, "bye")
    assert await agent.close() == 0


async def test_deep_nesting_is_a_parse_error_and_the_agent_keeps_serving(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    before = len(agent.client.raw)
    agent.write_line(b"[" * 100_000 + b"\n")
    answer = await agent.wait_for(lambda m: m.get("error") is not None, start=before)
    assert answer["error"]["code"] == -32700 and "nested too deeply" in answer["error"]["message"]
    sid = await agent.new_session(workspace)
    assert await agent.prompt(sid, "still here") == "end_turn"


async def test_a_line_over_the_size_limit_is_skipped_unread_and_answered(agent: Agent, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    text = "a" * (65 * 1024 * 1024)  # a well-formed request, over the 64 MiB limit of one message
    request = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "session/prompt",
        "params": {"sessionId": sid, "prompt": [{"type": "text", "text": text}]},
    }
    before = len(agent.client.raw)
    agent.write_line(json.dumps(request).encode() + b"\n")
    answer = await agent.wait_for(lambda m: m.get("error") is not None or m.get("id") == 41, timeout=60, start=before)
    assert answer.get("error", {}).get("code") == -32600, answer
    assert "byte limit" in answer["error"]["message"]
    assert await agent.prompt(sid, "the next line is read as before") == "end_turn"
