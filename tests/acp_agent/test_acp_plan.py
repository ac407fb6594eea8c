"""The model's todo list over ACP as `plan` session updates (checked by the official SDK's schema models), `/plan`
and `/plan clear`; save_memory asks through session/request_permission, showing the line and the file."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp.schema import AgentPlanUpdate, SessionNotification

from tests.acp_agent.harness import Agent, is_update

PLAN = [
    {"description": "read the parser", "status": "completed"},
    {"description": "fix the off-by-one", "status": "in_progress"},
    {"description": "try the old approach", "status": "cancelled"},
    {"description": "run the tests", "status": "pending"},
]


@pytest.fixture
def user_home() -> Iterator[Path]:
    path = Path(os.path.realpath(tempfile.mkdtemp(prefix="acp-user-home-")))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def plan_agent(fake: Any, home: str, user_home: Path) -> AsyncIterator[Agent]:
    started = await Agent(fake.url, home, HOME=str(user_home)).start()
    yield started
    await started.close()


def plans(agent: Agent, start: int = 0) -> list[dict[str, Any]]:
    """The raw `plan` session/update messages from `start`, each checked against the official schema's models."""
    found = [m for m in agent.client.raw[start:] if is_update("plan")(m)]
    for message in found:
        checked = SessionNotification.model_validate(message["params"])
        assert isinstance(checked.update, AgentPlanUpdate)
    return found


async def test_write_todos_sends_the_whole_plan_and_slash_plan_shows_and_clears_it(
    plan_agent: Agent, fake: Any, workspace: str
) -> None:
    agent = plan_agent
    await agent.initialize()
    sid = await agent.new_session(workspace)
    commands = (await agent.wait_for(is_update("available_commands_update")))["params"]["update"]
    assert "plan" in [c["name"] for c in commands["availableCommands"]]
    fake.script([{"kind": "function_call", "match": "chat", "name": "write_todos", "args": {"todos": PLAN}}])
    assert await agent.prompt(sid, "fix the tokenizer") == "end_turn"
    [message] = plans(agent)
    assert message["params"]["sessionId"] == sid
    entries = message["params"]["update"]["entries"]
    assert [(e["content"], e["status"]) for e in entries] == [
        ("read the parser", "completed"),
        ("fix the off-by-one", "in_progress"),
        ("try the old approach (cancelled)", "completed"),
        ("run the tests", "pending"),
    ]
    assert {e["priority"] for e in entries} == {"medium"}
    start = len(agent.client.updates())
    assert await agent.prompt(sid, "/plan") == "end_turn"
    shown = agent.client.text(start=start)
    assert "**Todo list** (4 items)" in shown and "fix the off-by-one (in progress)" in shown
    raw = len(agent.client.raw)
    assert await agent.prompt(sid, "/plan clear") == "end_turn"
    [cleared] = plans(agent, raw)
    assert cleared["params"]["update"]["entries"] == []
    assert "Cleared the todo list (4 items)" in agent.client.text(start=start)


async def test_save_memory_asks_with_the_line_and_the_file(
    plan_agent: Agent, fake: Any, workspace: str, user_home: Path
) -> None:
    agent = plan_agent
    await agent.initialize()
    sid = await agent.new_session(workspace)
    call = {"kind": "function_call", "match": "chat", "name": "save_memory"}
    fake.script([{**call, "args": {"fact": "The user prefers tabs"}}])
    agent.client.decisions = ["deny"]
    assert await agent.prompt(sid, "remember tabs") == "end_turn"
    [asked] = agent.client.permissions
    target = user_home / ".gemini" / "GEMINI.md"
    assert asked["options"] == ["allow", "deny"], "asks every time: no allow-always"
    assert "- The user prefers tabs" in asked["toolCall"]["title"] and str(target) in asked["toolCall"]["title"]
    assert not target.exists()
    fake.script([{**call, "args": {"fact": "The user prefers tabs"}}])
    agent.client.decisions = ["allow"]
    assert await agent.prompt(sid, "remember tabs") == "end_turn"
    assert target.read_text() == "## Gemini Added Memories\n- The user prefers tabs\n"
