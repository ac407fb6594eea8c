"""The Conversation holds each content as its JSON bytes, with incremental measures equal to a fresh measurement."""

from __future__ import annotations

import msgspec

from sidecar.core.compaction import measure_content
from sidecar.core.content_json import encode_content
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.tokens import estimate_history_tokens


def contents() -> list[Content]:
    return [
        text_content("user", "hello 🙂 你好"),
        Content(role="model", parts=[Part(function_call=FunctionCall(name="glob", args={"pattern": "*"}, id="1"))]),
        Content(role="user", parts=[Part(function_response=FunctionResponse(name="glob", response={"output": "a"}))]),
        text_content("model", "two files"),
    ]


def test_wire_is_each_contents_json_and_history_decodes_back() -> None:
    conv = Conversation("s", contents(), ["a", "b", "c", "d"])
    assert conv.wire() == [msgspec.json.encode(c) for c in contents()]
    assert conv.history == contents()
    assert conv.last() == contents()[-1]
    assert conv.ids == ["a", "b", "c", "d"]


def test_measures_match_a_fresh_measurement_through_every_change() -> None:
    conv = Conversation("s")
    for index, content in enumerate(contents()):
        conv.append(content, f"m{index}")
        assert conv.json_sizes() == [measure_content(c).json_length for c in conv.history]
        assert conv.estimated_tokens() == estimate_history_tokens(conv.history)
    conv.truncate(2)
    assert conv.history == contents()[:2] and conv.ids == ["m0", "m1"]
    assert conv.estimated_tokens() == estimate_history_tokens(contents()[:2])
    assert conv.tool_call_pending()


def test_from_wire_keeps_the_recorded_bytes_and_measures_them() -> None:
    recorded = [msgspec.json.encode(c) for c in contents()]
    conv = Conversation.from_wire("s", recorded, ["a", "b", "c", "d"])
    assert all(mine is theirs for mine, theirs in zip(conv.wire(), recorded, strict=True))
    assert conv.json_sizes() == Conversation("t", contents()).json_sizes()
    assert conv.estimated_tokens() == estimate_history_tokens(contents())
    assert conv.force_full_ide_context and conv.usage_source == "estimate"


def test_replace_gives_a_new_list_and_sets_the_full_context_flag() -> None:
    conv = Conversation("s", contents())
    conv.force_full_ide_context = False
    before = conv.wire()
    conv.replace(contents()[2:])
    assert conv.wire() is not before and conv.history == contents()[2:]
    assert conv.force_full_ide_context


def test_a_lone_surrogate_becomes_a_replacement_character_instead_of_failing() -> None:
    content = text_content("user", "bad \ud800 text")
    assert msgspec.json.decode(encode_content(content)) == {"role": "user", "parts": [{"text": "bad \ufffd text"}]}
