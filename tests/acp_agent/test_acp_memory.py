"""Context files over ACP: the /memory show|refresh|add slash commands and the memory in usage_update's `_meta`,
served by the same MemoryService as the editor protocol."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import acp
import pytest

from tests.acp_agent.harness import Agent, is_update


@pytest.fixture
def user_home() -> Iterator[Path]:
    path = Path(os.path.realpath(tempfile.mkdtemp(prefix="acp-user-home-")))
    (path / ".gemini").mkdir()
    (path / ".gemini" / "GEMINI.md").write_text("GLOBAL-RULE: be brief.")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
async def memory_agent(fake: Any, home: str, user_home: Path) -> AsyncIterator[Agent]:
    started = await Agent(fake.url, home, HOME=str(user_home)).start()
    yield started
    await started.close()


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


async def test_memory_show_refresh_and_add(memory_agent: Agent, fake: Any, workspace: str, user_home: Path) -> None:
    agent = memory_agent
    Path(workspace, "AGENTS.md").write_text("PROJECT-RULE: use tabs.")
    await agent.initialize()
    sid = await agent.new_session(workspace)
    commands = (await agent.wait_for(is_update("available_commands_update")))["params"]["update"]
    assert "memory" in [c["name"] for c in commands["availableCommands"]]

    start = len(agent.client.updates())
    assert await agent.prompt(sid, "/memory show") == "end_turn"
    shown = agent.client.text(start=start)
    assert "**Memory: 2 files" in shown and "GLOBAL-RULE" in shown and "PROJECT-RULE" in shown
    assert f"`{user_home / '.gemini' / 'GEMINI.md'}` (global" in shown and f"`{workspace}/AGENTS.md` (project" in shown
    assert chats(fake) == [], "a slash command never reaches the model"

    raw_start = len(agent.client.raw)
    await agent.prompt(sid, "hello")
    usage = (await agent.wait_for(is_update("usage_update"), start=raw_start))["params"]["update"]
    assert usage["_meta"]["sidecar"]["memoryFiles"] == 2 and usage["_meta"]["sidecar"]["memoryTokens"] > 0
    (first,) = chats(fake)
    assert "PROJECT-RULE" in first.body["contents"][0]["parts"][0]["text"]

    start = len(agent.client.updates())
    await agent.prompt(sid, "/memory add --project run make lint before committing")
    assert "Remembered in" in agent.client.text(start=start)
    assert Path(workspace, "GEMINI.md").read_text() == ("## Gemini Added Memories\n- run make lint before committing\n")
    await agent.prompt(sid, "/memory add prefers short answers")
    added = (user_home / ".gemini" / "GEMINI.md").read_text()
    assert added == "GLOBAL-RULE: be brief.\n\n## Gemini Added Memories\n- prefers short answers\n"

    Path(workspace, "AGENTS.md").write_text("PROJECT-RULE v2")
    start = len(agent.client.updates())
    await agent.prompt(sid, "/memory refresh")
    reloaded = agent.client.text(start=start)
    assert "Memory reloaded" in reloaded and "PROJECT-RULE v2" in reloaded
    await agent.prompt(sid, "again")
    last = chats(fake)[-1]
    system = "".join(p.get("text", "") for p in last.body["systemInstruction"]["parts"])
    assert "prefers short answers" in system
    told = [c["parts"][0].get("text", "") for c in last.body["contents"]]
    assert any(t.startswith("<context_file_changed>") and "PROJECT-RULE v2" in t for t in told)

    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/memory add")
    assert "needs the text to remember" in str(caught.value)
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/memory forget everything")
    assert "Unknown /memory action 'forget'" in str(caught.value)
