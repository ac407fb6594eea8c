"""The ACP mode's pure parts: stop reasons, prompt reading, replay of a compacted history, wire checks, settings."""

from __future__ import annotations

import acp
import pytest
from pydantic import BaseModel, ValidationError

from sidecar.acp import commands
from sidecar.acp.replay import COMPACTION_MARKER, replay_updates
from sidecar.acp.rpc import _decode, explain
from sidecar.acp.session import read_prompt
from sidecar.acp.updates import stop_reason
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content


@pytest.mark.parametrize(
    ("finish", "expected"),
    [
        ("STOP", "end_turn"),
        (None, "end_turn"),
        ("MAX_TOKENS", "max_tokens"),
        ("MAX_TOOL_ROUNDS", "max_turn_requests"),
        ("SAFETY", "refusal"),
        ("PROHIBITED_CONTENT", "refusal"),
        ("PROMPT_BLOCKED_SAFETY", "refusal"),
    ],
)
def test_stop_reasons(finish: str | None, expected: str) -> None:
    assert stop_reason(finish) == expected


def test_prompt_blocks_become_text_with_mentions_and_attached_files() -> None:
    blocks = [
        acp.text_block("compare"),
        acp.resource_block(acp.embedded_text_resource("file:///ws/a%20b.py", "x = 1")),
        acp.text_block(" with "),
        acp.resource_link_block(name="c.py", uri="file:///ws/c.py"),
        acp.image_block("AAAA", "image/png"),
    ]
    text, files = read_prompt(blocks)
    assert files == ["/ws/a b.py", "/ws/c.py"]
    assert text.startswith("compare @/ws/a b.py with @/ws/c.py [image attachment: not supported")
    attached = "--- Content from referenced files ---\nContent from @/ws/a b.py:\nx = 1\n--- End of content ---"
    assert text.endswith(attached)


def test_slash_commands_parse_and_unknown_ones_go_to_the_model() -> None:
    assert commands.parse("/compress keep the file names ") == commands.Command("compress", "keep the file names")
    assert commands.parse("  /undo-compaction") == commands.Command("undo-compaction", "")
    assert commands.parse("/unknown thing") is None
    assert commands.parse("not /compress") is None


def dump(update: BaseModel) -> dict[str, object]:
    return update.model_dump(by_alias=True, exclude_none=True)


def test_replay_shows_the_compacted_view_with_a_marker_and_pairs_tool_results() -> None:
    history = [
        text_content("user", "<session_context>env</session_context>"),
        text_content("user", "<state_snapshot>the summary</state_snapshot>"),
        text_content("model", "Got it. Thanks for the additional context!"),
        text_content("user", "Here is the user's editor context as a JSON object. This is for your information only."),
        text_content("user", "kept request"),
        Content(
            role="model",
            parts=[
                Part(text="thinking", thought=True),
                Part(text="I will read it."),
                Part(function_call=FunctionCall(name="read_file", args={"path": "a.py"})),
            ],
        ),
        Content(
            role="user",
            parts=[Part(function_response=FunctionResponse(name="read_file", response={"output": "x = 1"}))],
        ),
    ]
    ids = ["c1.env", "c1.summary", "c1.ack", "m5", "m6", "m7", "m8"]
    updates = [dump(u) for u in replay_updates(history, ids)]
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds == [
        "agent_message_chunk",
        "user_message_chunk",
        "agent_thought_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
    ]
    marker = updates[0]["content"]["text"]  # type: ignore[index]
    assert marker.startswith(COMPACTION_MARKER) and "the summary" in marker
    assert updates[4]["toolCallId"] == updates[5]["toolCallId"]
    assert updates[4]["kind"] == "read" and updates[5]["status"] == "completed"


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (b"{", "not valid JSON"),
        (b"42", "must be an object"),
        (b'{"jsonrpc":"2.0","id":true,"method":"x"}', "`id` must be"),
        (b'{"jsonrpc":"2.0"}', "neither `method` nor `id`"),
        (b'{"jsonrpc":"2.0","id":3}', "needs `result` or `error`"),
    ],
)
def test_bad_lines_are_named(line: bytes, problem: str) -> None:
    _message, found, _id = _decode(line)
    assert found is not None and problem in found


def test_validation_errors_are_explained_field_by_field() -> None:
    class Params(BaseModel):
        cwd: str
        count: int

    with pytest.raises(ValidationError) as caught:
        Params.model_validate({"count": "many"})
    assert (
        explain(caught.value) == "cwd: Field required; count: Input should be a valid integer, unable to parse "
        "string as an integer"
    )
