"""The repair before sending: any history, however broken, becomes contents the strict fake accepts; a healthy
history is sent as it is, without being decoded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sidecar.core.content_json import encode_content
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.request_repair import (
    SKIP_SIGNATURE,
    may_break_rules,
    repair_contents,
    repair_wire,
    shape_hint,
)
from sidecar.fakegemini import validate

MODELS = ("gemini-2.5-flash", "gemini-3.1-pro-preview", "gemini-3.5-flash", "unknown-model")


def call(name: str, cid: str | None = None, sig: str | None = None) -> Part:
    return Part(function_call=FunctionCall(name=name, args={}, id=cid), thought_signature=sig)


def result(name: str, cid: str | None = None) -> Part:
    return Part(function_response=FunctionResponse(name=name, id=cid, response={"output": "ok"}))


def test_the_recorded_shapes_that_real_imports_broke_on() -> None:
    history = [
        text_content("user", "fix it"),
        Content(role="model", parts=[Part(text="Let me look.")]),
        Content(role="model", parts=[Part(text=""), call("read_file", "a")]),
        Content(role="user", parts=[result("read_file", "a")]),
        Content(role="model", parts=[call("glob", "b"), call("grep", "c")]),
        Content(role="user", parts=[result("grep", "c"), result("stray", "z")]),
        Content(role="assistant", parts=[Part(text="done")]),
    ]
    fixed, fixes = repair_contents(history, "gemini-3.5-flash")
    validate.check_contents(fixed, "gemini-3.5-flash")
    assert fixed[1].parts[0].text == "Let me look." and fixed[1].parts[1].function_call is not None
    assert [p.function_response.name for p in fixed[4].parts if p.function_response] == ["glob", "grep"]
    assert "[Result of the tool call stray" in (fixed[4].parts[2].text or "")
    assert fixed[-1].parts[0].text == "Continue."  # a Gemini 3.5 request may not end with a model turn
    assert "merged consecutive model turns into one" in fixes


def test_current_turn_calls_get_gemini_clis_skip_signature_only_on_gemini_3() -> None:
    history = [
        text_content("user", "old"),
        Content(role="model", parts=[call("a")]),
        Content(role="user", parts=[result("a")]),
        text_content("model", "done"),
        text_content("user", "new"),
        Content(role="model", parts=[call("b"), call("c")]),
        Content(role="user", parts=[result("b"), result("c")]),
    ]
    fixed, _ = repair_contents(history, "gemini-3-flash-preview")
    signatures = [p.thought_signature for c in fixed for p in c.parts if p.function_call is not None]
    assert signatures == [None, SKIP_SIGNATURE, None]  # older turn untouched; the first call of the step only
    assert repair_contents(history, "gemini-2.5-pro")[1] == []


def test_a_healthy_history_is_sent_as_it_is() -> None:
    wire = [
        encode_content(c)
        for c in [
            text_content("user", "hi"),
            Content(role="model", parts=[Part(text="Let me look."), call("read_file", "a", sig="s")]),
            Content(role="user", parts=[result("read_file", "a")]),
            Content(role="model", parts=[Part(text="", thought=True), Part(text="It says ok.")]),
            text_content("user", "thanks"),
        ]
    ]
    for model in MODELS:
        assert repair_wire(wire, model) == (wire, [])


@pytest.mark.parametrize(
    ("message", "fix"),
    [
        ("Please ensure that function call turn comes immediately after a user turn", "Rewind"),
        ("Function call is missing a thought_signature in functionCall parts.", "new message"),
        ("* GenerateContentRequest.contents[1].parts[0].data: required oneof field 'data' must have one", "empty"),
        ("Request payload size exceeds the limit: 20971520 bytes.", "attachments"),
    ],
)
def test_shape_400s_name_the_fix(message: str, fix: str) -> None:
    assert fix in (shape_hint(message) or "")
    assert shape_hint("API key not valid.") is None


# ---- any history --------------------------------------------------------------------------------------------------

_PART = st.one_of(
    st.builds(lambda t: Part(text=t), st.sampled_from(["", "text", " "])),
    st.just(Part(text="", thought=True)),
    st.builds(
        lambda n, i, s: call(n, i, s),
        st.sampled_from(["a", "b"]),
        st.sampled_from([None, "1", "2"]),
        st.sampled_from([None, "sig"]),
    ),
    st.builds(lambda n, i: result(n, i), st.sampled_from(["a", "b", "c"]), st.sampled_from([None, "1", "2"])),
    st.just(Part()),
    st.just(Part(text="both", function_call=FunctionCall(name="a"))),
)
_CONTENT = st.builds(
    lambda role, parts: Content(role=role, parts=parts),
    st.sampled_from(["user", "model", "model", "assistant", None]),
    st.lists(_PART, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_CONTENT, min_size=1, max_size=10), st.sampled_from(MODELS))
def test_any_history_is_repaired_into_one_the_strict_fake_accepts(history: list[Content], model: str) -> None:
    wire = [encode_content(c) for c in history]
    if not may_break_rules(wire, model):  # the fast look says fine: it must be
        validate.check_contents(history, model)
    fixed, _ = repair_contents(history, model)
    if fixed:
        validate.check_contents(fixed, model)
        assert repair_contents(fixed, model)[1] == []  # a repaired history needs nothing more
