"""`/compress --upto N`, `/compress --preview` / `--apply` and `/rate` over ACP, served by the same compaction
control as the editor protocol."""

from __future__ import annotations

import json
from typing import Any

import acp
import pytest

from tests.acp_agent.harness import Agent


def summaries(fake: Any) -> str:
    return json.dumps([r.body["contents"] for r in fake.requests() if r.summary])


def last_chat(fake: Any) -> Any:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary][-1]


async def test_compress_upto_keeps_the_last_messages_verbatim(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    for word in ("ALPHA", "BRAVO", "CHARLIE", "DELTA"):
        await agent.prompt(sid, f"{word}: step" + " of the plan" * 60)
    mark = len(agent.client.updates())
    assert await agent.prompt(sid, "/compress --upto 2 keep the step names") == "end_turn"
    assert "Chat history compressed" in agent.client.text(start=mark)
    assert "BRAVO" in summaries(fake) and "CHARLIE" not in summaries(fake)
    assert "keep the step names" in summaries(fake)
    await agent.prompt(sid, "next")
    verbatim = [c["parts"][0].get("text", "")[:8] for c in last_chat(fake).body["contents"] if c["role"] == "user"]
    assert verbatim[-3:] == ["CHARLIE:", "DELTA: s", "next"]
    assert "ALPHA: s" not in verbatim and "BRAVO: s" not in verbatim

    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/compress --upto 9")
    assert "Cannot summarise up to your message 9 back" in str(caught.value)
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/compress --upto many")
    assert "--upto takes a number" in str(caught.value)


async def test_compress_preview_shows_the_summary_and_apply_applies_it(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    for word in ("ALPHA", "BRAVO", "CHARLIE", "DELTA"):
        await agent.prompt(sid, f"{word}: step" + " of the plan" * 60)
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/compress --apply")
    assert "no preview to apply" in str(caught.value)
    mark = len(agent.client.updates())
    assert await agent.prompt(sid, "/compress --preview --upto 1") == "end_turn"
    said = agent.client.text(start=mark)
    assert "**Proposed summary**" in said and "<state_snapshot>" in said and "/compress --apply" in said
    assert "Chat history compressed" not in said
    await agent.prompt(sid, "still the whole history")
    verbatim = [c["parts"][0].get("text", "")[:8] for c in last_chat(fake).body["contents"] if c["role"] == "user"]
    assert "ALPHA: s" in verbatim  # the preview changed nothing
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/compress --apply")
    assert "changed since this summary was previewed" in str(caught.value)

    await agent.prompt(sid, "/compress --preview")
    mark = len(agent.client.updates())
    assert await agent.prompt(sid, "/compress --apply") == "end_turn"
    assert "Chat history compressed" in agent.client.text(start=mark)
    mark = len(agent.client.updates())
    await agent.prompt(sid, "/rate lost the step names")
    assert "lost something (the step names)" in agent.client.text(start=mark)
    mark = len(agent.client.updates())
    await agent.prompt(sid, "/transcript")
    assert "rated lost something: the step names" in agent.client.text(start=mark)
    with pytest.raises(acp.RequestError) as caught:
        await agent.prompt(sid, "/rate meh")
    assert "Usage: `/rate good`" in str(caught.value)
