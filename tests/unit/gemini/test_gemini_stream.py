"""The chat request path (sidecar/gemini/stream.py): the same request as google-genai, SSE parsing, API errors."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import msgspec
import pytest
from google import genai
from google.genai import types

from sidecar.core.conversation import Conversation
from sidecar.core.history import Blob, Content, FunctionCall, FunctionResponse, Part, dump_contents, text_content
from sidecar.fakegemini import FakeGemini
from sidecar.gemini.routes import Endpoint
from sidecar.gemini.stream import (
    ApiError,
    GeminiStream,
    MalformedEvent,
    models_path,
    request_pieces,
    sse_events,
)
from sidecar.tools import DECLARATIONS

MODEL = "gemini-2.5-flash"


def gemini_api(url: str) -> Endpoint:
    return Endpoint("gemini", url, "v1beta", api_key="k-1", custom_url=True)


SYSTEM = "You are a careful coding agent. ✦"
TOOLS: list[dict[str, Any]] = [{"functionDeclarations": list(DECLARATIONS.values())}]


def history() -> list[Content]:
    """Every kind of part a chat history carries, with CJK, emoji, nulls, floats and a thought signature."""
    return [
        text_content("user", "Fix the parser 🙂 — 修复解析器, please."),
        Content(
            role="model",
            parts=[
                Part(text="Looking.", thought=True),
                Part(
                    function_call=FunctionCall(name="read_file", args={"path": "a.py", "n": 1.5, "z": None}, id="c1"),
                    thought_signature="c2lnbmF0dXJl",
                ),
            ],
        ),
        Content(
            role="user",
            parts=[
                Part(function_response=FunctionResponse(name="read_file", response={"output": "x\ny"}, id="c1")),
                Part(inline_data=Blob(mime_type="image/png", data="iVBORw0KGgo=")),
            ],
        ),
        text_content("model", "Done.\n\n```py\nprint('\\u0000 ok')\n```"),
    ]


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini() as running:
        yield running


@pytest.mark.process
async def test_the_request_is_the_one_google_genai_sends(fake: FakeGemini) -> None:
    contents = history()
    sdk = genai.Client(api_key="k-1", http_options=types.HttpOptions(api_version="v1beta", base_url=fake.url))
    config = types.GenerateContentConfig(
        system_instruction=SYSTEM,
        tools=TOOLS,
        automatic_function_calling={"disable": True},  # type: ignore[arg-type]
    )
    async for _ in await sdk.aio.models.generate_content_stream(
        model=MODEL, contents=dump_contents(contents), config=config
    ):
        pass
    ours = GeminiStream(gemini_api(fake.url), 5000)
    try:
        async for _ in ours.stream(MODEL, Conversation("s", contents).wire(), SYSTEM, TOOLS):
            pass
    finally:
        await ours.aclose()
    theirs, mine = fake.requests()[-2:]
    assert (mine.path, mine.query, mine.has_key) == (theirs.path, theirs.query, theirs.has_key)
    assert mine.body == camel_case_fields(theirs.body)
    assert mine.outcome == "reply"


#: google-genai 3.4 writes these two fields in their proto (snake_case) names, which the API accepts as well as the
#: JSON (camelCase) names that we send.
SDK_SNAKE_CASE = {"mime_type": "mimeType", "parameters_json_schema": "parametersJsonSchema"}


def camel_case_fields(value: Any) -> Any:
    if isinstance(value, dict):
        return {SDK_SNAKE_CASE.get(k, k): camel_case_fields(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel_case_fields(v) for v in value]
    return value


@pytest.mark.process
async def test_a_big_body_arrives_whole(fake: FakeGemini) -> None:
    big = text_content("user", "x" * 6_000_000 + " 🙂")
    wire = Conversation("s", [text_content("user", "hi"), big]).wire()
    assert msgspec.json.decode(b"".join(request_pieces(wire, None, None))) == {
        "contents": dump_contents([text_content("user", "hi"), big]),
        "generationConfig": {},
    }
    ours = GeminiStream(gemini_api(fake.url), 5000)
    try:
        events = [e async for e in ours.stream(MODEL, wire, None, None)]
    finally:
        await ours.aclose()
    assert events[-1].finish_reason == "STOP" and events[-1].usage is not None
    assert fake.requests()[-1].body["contents"][1] == dump_contents([big])[0]


def test_model_names_are_placed_as_google_genai_places_them() -> None:
    assert models_path("gemini-2.5-pro") == "models/gemini-2.5-pro"
    assert models_path("models/gemini-2.5-pro") == "models/gemini-2.5-pro"
    assert models_path("tunedModels/mine") == "tunedModels/mine"
    for bad in ("", "../x", "m?key=1", "m&x", "m#x"):
        with pytest.raises(ValueError, match="invalid model name"):
            models_path(bad)


async def chunks(*items: bytes) -> AsyncIterator[bytes]:
    for item in items:
        yield item


async def events_of(*items: bytes) -> list[Any]:
    return [event async for event in sse_events(chunks(*items))]


def event(text: str, finish: str | None = None, usage: int | None = None) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        body["usageMetadata"] = {"promptTokenCount": usage, "candidatesTokenCount": 2, "totalTokenCount": usage + 2}
    return msgspec.json.encode(body)


async def test_events_split_anywhere_across_reads_parse_the_same() -> None:
    stream = b"".join(
        [
            b": keep-alive\r\n\r\n",
            b"data: " + event("Hel") + b"\r\n\r\n",
            b"data: " + event("lo 🙂") + b"\n\n",
            b"event: message\ndata:" + event("!", "STOP", 42) + b"\n\n",
        ]
    )
    whole = await events_of(stream)
    assert [e.parts[0].text for e in whole] == ["Hel", "lo 🙂", "!"]
    assert whole[-1].finish_reason == "STOP" and whole[-1].usage.prompt_token_count == 42
    for cut in range(1, len(stream), 7):
        assert await events_of(stream[:cut], stream[cut:]) == whole
    assert await events_of(*(stream[i : i + 1] for i in range(len(stream)))) == whole


async def test_a_last_event_without_its_blank_line_still_counts() -> None:
    (only,) = await events_of(b"data: " + event("end", "STOP"))
    assert only.finish_reason == "STOP"


async def test_multi_line_data_is_one_event() -> None:
    (only,) = await events_of(b'data: {"candidates":\ndata: [{"finishReason":"STOP"}]}\n\n')
    assert only.finish_reason == "STOP" and only.parts == []


async def test_a_blocked_prompt_is_a_finish_reason_not_an_empty_reply() -> None:
    (only,) = await events_of(b'data: {"promptFeedback":{"blockReason":"SAFETY"}}\n\n')
    assert only.finish_reason == "PROMPT_BLOCKED_SAFETY" and only.parts == []


async def test_an_error_event_raises_the_api_error_with_its_details() -> None:
    error = {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE", "details": [{"a": 1}]}}
    with pytest.raises(ApiError) as caught:
        await events_of(b"data: " + event("partial") + b"\n\n", b"data: " + msgspec.json.encode(error) + b"\n\n")
    assert (caught.value.code, caught.value.status, caught.value.message) == (503, "UNAVAILABLE", "overloaded")
    assert caught.value.details == error


async def test_a_plain_json_error_body_instead_of_events_is_an_api_error() -> None:
    body = b'{\n  "error": {\n    "code": 400,\n    "message": "bad contents",\n'
    body += b'    "status": "INVALID_ARGUMENT"\n  }\n}\n'
    with pytest.raises(ApiError) as caught:
        await events_of(body)
    assert (caught.value.code, caught.value.message) == (400, "bad contents")


async def test_a_malformed_event_is_named() -> None:
    with pytest.raises(MalformedEvent, match="not a response"):
        await events_of(b'data: {"candidates": 7}\n\n')
    with pytest.raises(MalformedEvent, match="not a response"):
        await events_of(b"data: {not json\n\n")


@pytest.mark.process
async def test_an_http_error_status_carries_the_error_json(fake: FakeGemini) -> None:
    fake.script([{"kind": "status", "status": 429, "retryDelay": "1.5s"}])
    ours = GeminiStream(gemini_api(fake.url), 5000)
    try:
        with pytest.raises(ApiError) as caught:
            async for _ in ours.stream(MODEL, [msgspec.json.encode(text_content("user", "hi"))], None, None):
                pass
    finally:
        await ours.aclose()
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"
    assert any(d.get("retryDelay") == "1.5s" for d in caught.value.details["error"]["details"])


async def test_real_shaped_events_parse_block_reasons_finish_messages_and_usage_extras() -> None:
    blocked = {
        "promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "no", "safetyRatings": [{"a": 1}]},
        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
        "responseId": "r1",
    }
    rich = {
        "candidates": [
            {
                "content": {"role": "model"},  # no parts at all
                "finishReason": "MALFORMED_FUNCTION_CALL",
                "finishMessage": "Malformed function call: x(",
                "citationMetadata": {"citations": [{"startIndex": 0, "endIndex": 3, "uri": "https://e.x"}]},
                "groundingMetadata": {"webSearchQueries": ["q"], "groundingChunks": [{"web": {"uri": "u"}}]},
                "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}],
                "avgLogprobs": -0.5,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 100,
            "candidatesTokenCount": 5,
            "totalTokenCount": 130,
            "cachedContentTokenCount": 64,
            "thoughtsTokenCount": 20,
            "toolUsePromptTokenCount": 5,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 100}],
        },
        "modelVersion": "gemini-2.5-pro-002",
        "responseId": "r2",
    }
    first, second = await events_of(
        b"data: " + msgspec.json.encode(blocked) + b"\n\n", b"data: " + msgspec.json.encode(rich) + b"\n\n"
    )
    assert (first.block_reason, first.block_message, first.parts, first.response_id) == ("SAFETY", "no", [], "r1")
    assert second.parts == [] and second.finish_reason == "MALFORMED_FUNCTION_CALL"
    assert second.finish_message == "Malformed function call: x("
    assert second.usage is not None and (
        second.usage.cached_content_token_count,
        second.usage.thoughts_token_count,
        second.usage.tool_use_prompt_token_count,
    ) == (64, 20, 5)
    assert (second.model_version, second.response_id, second.block_reason) == ("gemini-2.5-pro-002", "r2", None)
