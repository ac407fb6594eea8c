"""What the real API sends, through the real sidecar process over stdio: the retry notification, a blocked prompt
named, and Vertex AI with Application Default Credentials."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from sidecar.core.reply_check import THINKING_NUDGE
from sidecar.protocol import errors
from tests.adc_files import service_account
from tests.e2e.harness import EditorClient, notes, request, request_error, wait_for
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import Sidecar

ERROR = 1


async def test_the_editor_is_told_to_discard_a_failed_attempt_and_why(client: EditorClient, fake: Any) -> None:
    fake.script([{"kind": "finish", "text": "", "thought": "Let me think about this.", "match": "chat"}])
    result = await request(client, "sidecar/sendMessage", {"text": "think, then answer"})
    (retry,) = [n for n in notes(client, "sidecar/retry") if n["turnId"] == result["turnId"]]
    assert retry == {
        "turnId": result["turnId"],
        "attempt": 2,
        "maxAttempts": 4,
        "reason": "THINKING_ONLY_RESPONSE",
        "message": "the reply held only the model's thoughts, no answer",
        "delayMs": 20,
        "text": "",
    }
    assert result["text"].startswith("Fake Gemini reply") and "think, then answer" in result["text"]
    first, second = [r for r in fake.requests() if r.kind == "stream"][-2:]
    assert second.body["contents"][-1]["parts"][-1] == {"text": THINKING_NUDGE}
    assert THINKING_NUDGE not in str(first.body)


async def test_a_blocked_prompt_is_named_to_the_user(client: EditorClient, fake: Any) -> None:
    fake.script([{"kind": "blocked", "blockReason": "SAFETY", "match": "chat"}])
    err = await request_error(client, "sidecar/sendMessage", {"text": "something blocked"})
    assert err.code == errors.MODEL_ERROR
    assert err.data["kind"] == "blocked" and err.data["blockReason"] == "SAFETY"
    assert "blockReason SAFETY" in err.message and "safety filters" in err.message
    assert len([r for r in fake.requests() if r.kind == "stream"]) == 1
    assert client.messages(ERROR)[-1] == f"Sidecar: {err.message}"
    after = await request(client, "sidecar/sendMessage", {"text": "something fine"})
    contents = [r for r in fake.requests() if r.kind == "stream"][-1].body["contents"]
    assert "something blocked" not in str(contents), "the refused prompt left the model-facing history"
    assert "something fine" in after["text"]


# -- Vertex AI (environment as google-genai reads it) ----------------------------------------------------


@pytest_asyncio.fixture
async def vertex_env(fake: Any) -> AsyncIterator[tuple[Path, Path, dict[str, str]]]:
    home, workspace = make_dirs()
    env = {
        "GOOGLE_GENAI_USE_VERTEXAI": "true",
        "GOOGLE_CLOUD_PROJECT": "e2e-proj",
        "GOOGLE_CLOUD_LOCATION": "global",
        "GOOGLE_VERTEX_BASE_URL": fake.url,
        "GOOGLE_APPLICATION_CREDENTIALS": str(service_account(home.parent, fake.url)),
        "GCE_METADATA_HOST": "127.0.0.1:9",  # never wait for a metadata server
        "GCE_METADATA_IP": "127.0.0.1:9",
    }
    yield home, workspace, env
    shutil.rmtree(home.parent, ignore_errors=True)


NO_KEY = {"apiKey": None, "baseUrl": None, "tokenLimit": 40_000, "retryInitialDelayMs": 10}


async def test_vertex_ai_with_adc_chats_compacts_and_names_the_backend(
    fake: Any, vertex_env: tuple[Path, Path, dict[str, str]]
) -> None:
    home, workspace, env = vertex_env
    side = Sidecar(home, workspace, fake.url, env=env)
    try:
        await side.start(**NO_KEY)
        usage = side.notes("sidecar/tokenUsage")[-1]
        assert usage["backend"] == f"Vertex AI (e2e-proj, global) at {fake.url}"
        for i in range(3):
            reply = await side.say(f"step {i}: please change lib/mod_{i}.py " + "context " * 60)
            assert f"step {i}" in reply["text"], "a Vertex AI reply, not an error"
        result = await side.request("sidecar/compress", {})
        assert result["status"] == "COMPRESSED"
    finally:
        await side.stop()
    api = [r for r in fake.requests() if r.kind != "token"]
    assert {r.kind for r in api} == {"stream", "count"}  # summaries stream on the chat's path
    assert any(r.summary for r in api), "the compaction's summary went to Vertex AI too"
    for r in api:
        assert r.path.startswith("/v1beta1/projects/e2e-proj/locations/global/publishers/google/models/")
        assert r.auth == "bearer" and not r.has_key and r.status == 200, "no API key is ever sent with ADC"
    assert fake.requests()[0].kind == "token"


async def test_vertex_ai_with_the_metadata_servers_credentials_and_project(
    fake: Any, vertex_env: tuple[Path, Path, dict[str, str]]
) -> None:
    home, workspace, env = vertex_env
    gcloud = home.parent / "empty-gcloud-config"
    gcloud.mkdir()
    host = fake.url.removeprefix("http://")
    env = {k: v for k, v in env.items() if k not in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT")}
    env.update({"CLOUDSDK_CONFIG": str(gcloud), "GCE_METADATA_HOST": host, "GCE_METADATA_IP": host})
    side = Sidecar(home, workspace, fake.url, env=env)
    try:
        await side.start(**NO_KEY)
        reply = await side.say("hello from a VM")
        assert "hello from a VM" in reply["text"]
        usage = await side.wait_note("sidecar/tokenUsage", lambda u: "metadata-project" in u["backend"])
        assert usage["backend"] == f"Vertex AI (metadata-project, global) at {fake.url}"
    finally:
        await side.stop()
    token = next(r for r in fake.requests() if r.kind == "token")
    assert token.body == {"grant_type": "metadata-server"}
    (stream,) = [r for r in fake.requests() if r.kind == "stream"]
    assert stream.path.startswith("/v1beta1/projects/metadata-project/locations/global/") and stream.auth == "bearer"


async def test_broken_credentials_are_a_clear_error_never_the_fake(
    fake: Any, vertex_env: tuple[Path, Path, dict[str, str]]
) -> None:
    home, workspace, env = vertex_env
    env = {**env, "GOOGLE_APPLICATION_CREDENTIALS": str(home.parent / "missing-adc.json")}
    side = Sidecar(home, workspace, fake.url, env=env)
    try:
        await side.start(**NO_KEY)
        err = await side.error("sidecar/sendMessage", {"text": "hello?"})
        assert err.code == errors.MODEL_ERROR and err.data["kind"] == "credentials"
        assert "gcloud auth application-default login" in err.message and "missing-adc.json" in err.message
        assert side.messages(ERROR)[-1] == f"Sidecar: {err.message}"
        assert not [m for m in side.messages() if "embedded" in m], "no fall-back to the embedded fake"
    finally:
        await side.stop()
    assert fake.requests() == []


@pytest.mark.settings(apiKey=None, baseUrl=None)
async def test_nothing_configured_is_the_embedded_fake_and_says_so(client: EditorClient) -> None:
    usage = await wait_for(client, "sidecar/tokenUsage")
    assert usage["backend"] == "embedded fake Gemini"
    result = await request(client, "sidecar/sendMessage", {"text": "who answers?"})
    assert "who answers?" in result["text"]
