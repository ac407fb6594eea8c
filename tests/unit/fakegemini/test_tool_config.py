"""The fake checks toolConfig as the API does, and with function calling off answers in text, never with a call."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from sidecar.core.prompts import COMPRESSION_SYSTEM_PROMPT
from sidecar.fakegemini import FakeGemini
from sidecar.fakegemini.validate import InvalidRequest, check_tool_config

TOOLS = [{"functionDeclarations": [{"name": "read_file", "parameters": {"type": "OBJECT"}}]}]
PATH = "/v1beta/models/gemini-2.5-flash:generateContent"


def ask(fake: FakeGemini, **extra: Any) -> Any:
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], "tools": TOOLS, **extra}
    return fake.plan("POST", PATH, {}, "key", msgspec.json.encode(body))


@pytest.mark.parametrize("mode", ["AUTO", "ANY", "NONE", "VALIDATED", "MODE_UNSPECIFIED"])
def test_known_modes_are_taken(mode: str) -> None:
    check_tool_config({"functionCallingConfig": {"mode": mode}}, TOOLS)


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"functionCallingConfig": {"mode": "OFF"}}, "Invalid value at 'tool_config.function_calling_config.mode'"),
        ({"functionCalling": {"mode": "NONE"}}, 'Unknown name "functionCalling"'),
        ({"functionCallingConfig": {"mode": "NONE", "allowedFunctionNames": ["read_file"]}}, "only be set when"),
        ({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["rm"]}}, "'rm' is not declared"),
        ("NONE", "expected a ToolConfig"),
    ],
)
def test_what_the_api_refuses_is_refused(config: Any, words: str) -> None:
    with pytest.raises(InvalidRequest, match=words):
        check_tool_config(config, TOOLS)


def test_a_bad_tool_config_is_a_400() -> None:
    plan = ask(FakeGemini(), toolConfig={"functionCallingConfig": {"mode": "never"}})
    assert plan.status == 400


def test_with_function_calling_off_a_scripted_call_is_answered_in_text() -> None:
    fake = FakeGemini(steps=[{"kind": "function_call", "name": "read_file", "args": {"path": "a"}}])
    plan = ask(fake, toolConfig={"functionCallingConfig": {"mode": "NONE"}})
    parts = plan.body["candidates"][0]["content"]["parts"]
    assert parts and not any("functionCall" in p for p in parts)


def test_a_request_whose_last_turn_asks_for_the_snapshot_is_a_summary() -> None:
    fake = FakeGemini()
    turn = {"role": "user", "parts": [{"text": COMPRESSION_SYSTEM_PROMPT}, {"text": "Generate a new snapshot."}]}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Edit src/a.py"}]},
            {"role": "model", "parts": [{"text": "ok"}]},
            turn,
        ]
    }
    fake.plan("POST", PATH, {}, "key", msgspec.json.encode(body))
    (record,) = fake.requests()
    assert record.summary
    text = fake.plan("POST", PATH, {}, "key", msgspec.json.encode(body)).body["candidates"][0]["content"]["parts"]
    reply = "".join(p.get("text", "") for p in text)
    assert "src/a.py" in reply and "memory component" not in reply, "the instruction turn is not summarised"
