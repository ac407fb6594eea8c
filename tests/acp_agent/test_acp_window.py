"""The context window over ACP: `/context` answers the breakdown as a table; the model is a config option (category
"model") and Gemini CLI's unstable `models` state with `session/set_model`; every answer is the SDK's schema."""

from __future__ import annotations

import asyncio
from typing import Any

import acp
from acp.schema import NewSessionResponse, SessionConfigOptionSelect, SetSessionConfigOptionResponse

from tests.acp_agent.harness import Agent, is_update


def chats(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "stream" and not r.summary]


async def test_context_answers_the_breakdown_as_a_table(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    sid = await agent.new_session(workspace)
    commands = (await agent.wait_for(is_update("available_commands_update")))["params"]["update"]
    assert "context" in [c["name"] for c in commands["availableCommands"]]
    await agent.prompt(sid, "hello")
    start = len(agent.client.updates())
    assert await agent.prompt(sid, "/context") == "end_turn"
    shown = agent.client.text(start=start)
    assert "**Context window**" in shown and "counted by the API" in shown
    assert "| what | tokens | % of window | source |" in shown
    for label in ("System prompt", "Built-in tools", "Session context", "Messages", "Free until compaction"):
        assert f"| {label} |" in shown, label
    assert len(chats(fake)) == 1, "a slash command never reaches the model"


async def test_the_model_is_a_config_option_and_gemini_clis_set_model(agent: Agent, fake: Any, workspace: str) -> None:
    await agent.initialize()
    raw = await agent.raw_request("session/new", {"cwd": workspace, "mcpServers": []})
    opened = NewSessionResponse.model_validate(raw)
    (model,) = opened.config_options or []
    assert isinstance(model, SessionConfigOptionSelect)
    assert model.id == "model" and model.category == "model" and model.current_value == "gemini-2.5-flash"
    assert "gemini-2.5-pro" in [o.value for o in model.options]  # type: ignore[union-attr]
    state = raw["models"]
    assert state["currentModelId"] == "gemini-2.5-flash"
    assert {"modelId": "gemini-2.5-pro", "name": "Gemini 2.5 Pro"}.items() <= state["availableModels"][0].items()

    sid = opened.session_id
    answer = await asyncio.wait_for(
        agent.conn.set_config_option(config_id="model", session_id=sid, value="gemini-2.5-pro"), 60
    )
    assert isinstance(answer, SetSessionConfigOptionResponse)
    (chosen,) = answer.config_options
    assert isinstance(chosen, SessionConfigOptionSelect) and chosen.current_value == "gemini-2.5-pro"
    await agent.prompt(sid, "hello")
    assert chats(fake)[-1].model == "gemini-2.5-pro"

    assert await agent.raw_request("session/set_model", {"sessionId": sid, "modelId": "gemma-4-31b-it"}) == {}
    usage = (await agent.wait_for(is_update("usage_update", size=256_000)))["params"]["update"]
    assert usage["size"] == 256_000
    await agent.prompt(sid, "again")
    assert chats(fake)[-1].model == "gemma-4-31b-it"
    try:
        await agent.raw_request("session/set_model", {"sessionId": sid, "modelId": "../x"})
    except acp.RequestError as exc:
        assert exc.code == -32602 and "session/set_model" in str(exc) and "not a model name" in str(exc)
    else:
        raise AssertionError("a bad model name was accepted")
