"""MCP servers in `sidecar acp`: the client's mcpServers of session/new, the user file's, never the workspace's."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import EnvVariable, McpServerStdio

from tests.acp_agent.harness import Agent
from tests.waiting import until

SERVER = str(Path(__file__).with_name("server.py"))


@pytest.fixture
def home() -> Iterator[str]:
    path = tempfile.mkdtemp(prefix="acp-mcp-home-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def workspace() -> Iterator[str]:
    path = str(Path(tempfile.mkdtemp(prefix="acp-mcp-ws-")).resolve())
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def marks() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="acp-mcp-marks-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def statuses(agent: Agent, sid: str) -> dict[str, dict[str, Any]]:
    result = await agent.raw_request("_sidecar/listMcpServers", {"sessionId": sid})
    return {row["name"]: row for row in result["servers"]}


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


async def test_session_new_with_mcp_servers_declares_asks_and_calls(
    fake: Any, home: str, workspace: str, marks: Path
) -> None:
    (Path(workspace) / ".sidecar").mkdir()
    repo_server = {"command": sys.executable, "args": [SERVER, "basic", str(marks / "repo")]}
    (Path(workspace) / ".sidecar" / "settings.json").write_text(json.dumps({"mcpServers": {"repo": repo_server}}))
    (marks / "repo").mkdir()
    (marks / "user").mkdir()
    user = {"mcpServers": {"mine": {"command": sys.executable, "args": [SERVER, "basic", str(marks / "user")]}}}
    agent = await Agent(fake.url, home, settings=user).start()
    try:
        result = await agent.initialize()
        assert result["agentCapabilities"]["mcpCapabilities"] == {"http": True, "sse": True}
        server = McpServerStdio(
            name="Calc Server",
            command=sys.executable,
            args=[SERVER, "basic", str(marks)],
            env=[EnvVariable(name="EXTRA", value="from-acp")],
        )
        response = await agent.conn.new_session(cwd=workspace, mcp_servers=[server])
        sid = str(response.session_id)

        async def both_ready() -> bool:
            rows = await statuses(agent, sid)
            return all(rows.get(n, {}).get("status") == "ready" for n in ("Calc_Server", "mine"))

        await until(both_ready, "the client's and the user file's servers", timeout=30)
        assert "repo" not in await statuses(agent, sid), "a workspace file's server never starts in ACP"
        assert list((marks / "repo").iterdir()) == []
        fake.script([{"kind": "function_call", "match": "chat", "name": "mcp_Calc_Server_add", "args": {"a": 7}}])
        agent.client.decisions = ["allowAlwaysServer"]
        assert await agent.prompt(sid, "add") == "end_turn"
        assert agent.client.permissions[-1]["options"] == ["allow", "allowAlways", "allowAlwaysServer", "deny"]
        asked = agent.client.permissions[-1]["toolCall"]
        assert "MCP server Calc_Server: add" in asked["title"] and asked["rawInput"] == {"a": 7}
        names = [d["name"] for t in chats(fake)[0].body["tools"] for d in t["functionDeclarations"]]
        assert "mcp_Calc_Server_add" in names and "mcp_mine_add" in names
        parts = [p for c in chats(fake)[-1].body["contents"] for p in c["parts"] if "functionResponse" in p]
        output = parts[-1]["functionResponse"]["response"]["output"]
        assert "sum=7" in output and "extra=from-acp" in output
        fake.script([{"kind": "function_call", "match": "chat", "name": "mcp_Calc_Server_picture", "args": {}}])
        await agent.prompt(sid, "draw")
        assert len(agent.client.permissions) == 1, "allow always for the server: its other tools do not ask"

        def offers_review(message: dict[str, Any]) -> bool:
            update = message.get("params", {}).get("update", {})
            names = [c["name"] for c in update.get("availableCommands", [])]
            return update.get("sessionUpdate") == "available_commands_update" and "review" in names

        offered = await agent.wait_for(offers_review)
        review = next(c for c in offered["params"]["update"]["availableCommands"] if c["name"] == "review")
        assert review["description"] == "Ask for a review." and "--code=" in review["input"]["hint"]
        await agent.prompt(sid, '/review --focus="speed" src/app.py')
        sent = chats(fake)[-1].body["contents"][-1]["parts"][0]["text"]
        assert sent == "Please review src/app.py focusing on speed"
        before = len(chats(fake))
        await agent.prompt(sid, "/review")
        assert "Missing required argument: --code" in agent.client.text()
        assert len(chats(fake)) == before, "nothing is sent to the model"
    finally:
        await agent.close()


async def test_a_prompt_sent_at_once_waits_for_a_server_still_starting_and_says_so(
    fake: Any, home: str, workspace: str, marks: Path
) -> None:
    slow = {"command": sys.executable, "args": [SERVER, "gated", str(marks)]}
    stuck = {"command": sys.executable, "args": [SERVER, "silent", str(marks)]}  # its timeout: 10 minutes
    agent = await Agent(fake.url, home, settings={"mcpServers": {"slow": slow, "stuck": stuck}}).start()
    try:
        await agent.initialize()
        sid = await agent.new_session(workspace)
        turn = asyncio.create_task(agent.prompt(sid, "at once"))

        def waiting(message: dict[str, Any]) -> bool:
            update = message.get("params", {}).get("update", {})
            text = update.get("content", {}).get("text", "") if isinstance(update.get("content"), dict) else ""
            return update.get("sessionUpdate") == "agent_thought_chunk" and "MCP server 'slow'" in text

        await agent.wait_for(waiting)
        (marks / "start-now").write_text("")
        assert await asyncio.wait_for(turn, 60) == "end_turn"
        names = [d["name"] for t in chats(fake)[0].body["tools"] for d in t["functionDeclarations"]]
        assert "mcp_slow_add" in names, "the first request declares the slow server's tools"
        assert not any(n.startswith("mcp_stuck_") for n in names)
        said = agent.client.text()
        assert "MCP server 'stuck' did not finish starting within 10 s" in said and "goes on without its tools" in said
    finally:
        await agent.close()
