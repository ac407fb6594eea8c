"""The chat hot path's request body is the one google-genai sends, for the Gemini API and for Vertex AI.

Both requests go to the fake; the comparison is between the two bodies it logged, not SDK internals.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import types

from sidecar.core.conversation import Conversation
from sidecar.core.history import Blob, Content, FileData, FunctionCall, FunctionResponse, Part, dump_contents
from sidecar.core.history import text_content as text
from sidecar.core.prompts import AGENT_SYSTEM_PROMPT
from sidecar.gemini.client import ClientConfig, ModelClient
from sidecar.gemini.routes import GEMINI_API_VERSION, VERTEX_API_VERSION, Endpoint
from sidecar.tools import DECLARATIONS
from tests.adc_files import service_account

MODEL = "gemini-2.5-pro"
TOOLS: list[dict[str, Any]] = [{"functionDeclarations": list(DECLARATIONS.values())}]
#: The REST (camelCase) form the hot path sends, and the same config as google-genai takes it.
GENERATION = {
    "temperature": 0.25,
    "topP": 0.9,
    "topK": 40,
    "maxOutputTokens": 4096,
    "candidateCount": 1,
    "stopSequences": ["<END>"],
    "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 2048},
}
SDK_GENERATION = types.GenerateContentConfig(
    temperature=0.25,
    top_p=0.9,
    top_k=40,
    max_output_tokens=4096,
    candidate_count=1,
    stop_sequences=["<END>"],
    thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=2048),
)
#: google-genai 3.4 writes these fields under their proto (snake_case) names, which the API reads exactly like the
#: JSON (camelCase) names the hot path sends. Only these keys are renamed, never user data (args, schemas).
PROTO_NAMES = {
    "mime_type": "mimeType",
    "file_uri": "fileUri",
    "display_name": "displayName",
    "parameters_json_schema": "parametersJsonSchema",
    "include_thoughts": "includeThoughts",
    "thinking_budget": "thinkingBudget",
}
#: Values that are user data (call arguments, tool results, JSON schemas): compared as they are.
USER_DATA = {"args", "response", "parametersJsonSchema"}


def json_names(value: Any) -> Any:
    if isinstance(value, dict):
        renamed = {PROTO_NAMES.get(k, k): v for k, v in value.items()}
        return {k: v if k in USER_DATA else json_names(v) for k, v in renamed.items()}
    if isinstance(value, list):
        return [json_names(v) for v in value]
    return value


def rich_history() -> list[Content]:
    """A coding-agent history with every part kind: thoughts and their signatures, parallel calls and responses,
    inline and file data, CJK, emoji (astral plane), control characters, nulls, floats, nested args."""
    return [
        text("user", "Fix the parser 🙂 — 修复解析器, and 👩‍💻 check tests/测试.py\u0000 please."),
        Content(
            role="model",
            parts=[
                Part(text="I will look at the parser first.", thought=True, thought_signature="dGhvdWdodC0x"),
                Part(
                    function_call=FunctionCall(
                        name="read_file", args={"path": "src/解析.py", "start_line": 1}, id="c1"
                    ),
                    thought_signature="c2lnbmF0dXJlLTE=",
                ),
                Part(
                    function_call=FunctionCall(
                        name="grep",
                        args={"pattern": "def parse", "n": 1.5, "z": None, "opts": {"deep": [1, {"x": "ü"}]}},
                        id="c2",
                    )
                ),
            ],
        ),
        Content(
            role="user",
            parts=[
                Part(
                    function_response=FunctionResponse(
                        name="read_file", id="c1", response={"output": "def parse(s):\n\treturn s  # 🙂"}
                    )
                ),
                Part(function_response=FunctionResponse(name="grep", id="c2", response={"error": "no match: 「def」"})),
            ],
        ),
        Content(role="model", parts=[Part(text="Here is a screenshot description.", thought_signature="c2ln")]),
        Content(
            role="user",
            parts=[
                Part(text="See the image and the log:"),
                Part(inline_data=Blob(mime_type="image/png", data="iVBORw0KGgoAAAANSUhEUg==")),
                Part(file_data=FileData(mime_type="text/plain", file_uri="gs://bucket/build.log")),
            ],
        ),
        text("model", "Done.\n\n```py\nprint('\\u0000 ok')\n```\n— 完成 ✅"),
        text("user", "Thanks! ありがとう 🎉"),
    ]


async def ours(fake: Any, endpoint: Endpoint) -> None:
    client = ModelClient(ClientConfig(endpoint.api_key, fake.url, 10_000, 0, 1, endpoint=endpoint))
    try:
        async for _ in client.stream(
            MODEL,
            Conversation("s", rich_history()).wire(),
            system_instruction=AGENT_SYSTEM_PROMPT,
            tools=TOOLS,
            generation_config=GENERATION,
        ):
            pass
    finally:
        await client.aclose()


async def theirs(sdk: genai.Client) -> None:
    config = SDK_GENERATION.model_copy(
        update={
            "system_instruction": AGENT_SYSTEM_PROMPT,
            "tools": TOOLS,
            "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
        }
    )
    try:
        async for _ in await sdk.aio.models.generate_content_stream(
            model=MODEL,
            contents=dump_contents(rich_history()),
            config=config,  # type: ignore[arg-type]
        ):
            pass
    finally:
        await sdk.aio.aclose()


def compare(fake: Any) -> None:
    sdk_request, our_request = [r for r in fake.requests() if r.kind == "stream"]
    assert (our_request.path, our_request.query, our_request.auth) == (
        sdk_request.path,
        sdk_request.query,
        sdk_request.auth,
    )
    assert our_request.status == sdk_request.status == 200
    assert our_request.body == json_names(sdk_request.body)
    assert set(our_request.body) == {"contents", "systemInstruction", "tools", "generationConfig"}


async def test_gemini_api_bodies_are_json_equal(fake: Any) -> None:
    options = types.HttpOptions(base_url=fake.url, api_version=GEMINI_API_VERSION)
    await theirs(genai.Client(vertexai=False, api_key="parity-key", http_options=options))
    await ours(fake, Endpoint("gemini", fake.url, GEMINI_API_VERSION, api_key="parity-key", custom_url=True))
    compare(fake)
    assert fake.requests()[-1].path == f"/v1beta/models/{MODEL}:streamGenerateContent"


async def test_vertex_ai_bodies_are_json_equal(fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth

    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account(tmp_path, fake.url)))
    credentials, _ = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    options = types.HttpOptions(base_url=fake.url)  # google-genai's Vertex AI default version: v1beta1
    sdk = genai.Client(
        vertexai=True, project="proj-p", location="europe-west4", credentials=credentials, http_options=options
    )
    await theirs(sdk)
    await ours(
        fake,
        Endpoint("vertex", fake.url, VERTEX_API_VERSION, project="proj-p", location="europe-west4", custom_url=True),
    )
    compare(fake)
    path = f"/v1beta1/projects/proj-p/locations/europe-west4/publishers/google/models/{MODEL}:streamGenerateContent"
    assert fake.requests()[-1].path == path
    assert os.environ["GOOGLE_APPLICATION_CREDENTIALS"].endswith("adc-sa.json")


def test_the_comparison_would_see_a_difference() -> None:
    body = {"contents": dump_contents(rich_history()), "generationConfig": {"thinkingConfig": {"thinking_budget": 1}}}
    assert json_names(body)["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 1}}
    changed = dump_contents(rich_history())
    changed[1]["parts"][0]["thoughtSignature"] = "other"
    assert json_names({"contents": changed}) != {"contents": dump_contents(rich_history())}
    schema = {"parametersJsonSchema": {"properties": {"mime_type": {"type": "string"}}}}
    assert json_names(schema) == schema, "names inside a schema are user data, never renamed"
