"""Vertex AI with Application Default Credentials against the fake (Vertex routes + token endpoint), offline.

google-auth reads GOOGLE_APPLICATION_CREDENTIALS and fetches tokens from the file's token_uri: the fake's /token.
Nothing of google-auth or google-genai is patched.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from sidecar.config.settings import Settings
from sidecar.core.history import text_content
from sidecar.gemini.client import ClientConfig, ModelClient, ModelError
from sidecar.gemini.routes import DEFAULT_VERTEX_LOCATION, VERTEX_API_VERSION, Endpoint, resolve
from tests.adc_files import authorized_user_with_token, external_authorized_user, service_account

MODEL = "gemini-2.5-flash"
VERTEX_PATH = f"/v1beta1/projects/proj-1/locations/us-central1/publishers/google/models/{MODEL}"


def vertex(fake: Any, project: str | None = "proj-1", location: str = "us-central1") -> ModelClient:
    endpoint = Endpoint("vertex", fake.url, VERTEX_API_VERSION, project=project, location=location, custom_url=True)
    return ModelClient(ClientConfig(None, fake.url, 10_000, 0, 1, endpoint=endpoint))


@pytest.fixture
async def user_adc(fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Path]:
    path = external_authorized_user(tmp_path, fake.url)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    yield path


async def stream_text(client: ModelClient, text: str = "hello vertex") -> str:
    chunks = [c async for c in client.stream(MODEL, [_json(text)])]
    return "".join(c.text for c in chunks)


def _json(text: str) -> bytes:
    from sidecar.core.content_json import encode_content

    return encode_content(text_content("user", text))


def api_requests(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind != "token"]


def token_requests(fake: Any) -> list[Any]:
    return [r for r in fake.requests() if r.kind == "token"]


async def test_every_call_path_uses_one_bearer_token_and_never_an_api_key(fake: Any, user_adc: Path) -> None:
    client = vertex(fake)
    try:
        assert "you said" in await stream_text(client)
        reply = await client.generate(MODEL, [text_content("user", "summarize")])
        assert reply.text.startswith("Fake Gemini reply")
        assert await client.count_tokens(MODEL, [text_content("user", "count me")]) > 0
    finally:
        await client.aclose()
    (token,) = token_requests(fake)
    assert token.body == {"grant_type": "refresh_token"}
    stream, generate, count = api_requests(fake)
    assert stream.path == f"{VERTEX_PATH}:streamGenerateContent" and stream.query == {"alt": "sse"}
    assert generate.path == f"{VERTEX_PATH}:generateContent"
    assert count.path == f"{VERTEX_PATH}:countTokens"
    for request in (stream, generate, count):
        assert (request.api, request.project, request.location) == ("vertex", "proj-1", "us-central1")
        assert request.auth == "bearer" and not request.has_key and request.status == 200


async def test_a_service_account_key_signs_its_token_request(
    fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account(tmp_path, fake.url)))
    client = vertex(fake, project=None)  # the project comes from the key file
    try:
        await stream_text(client)
    finally:
        await client.aclose()
    (token,) = token_requests(fake)
    assert token.body == {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer"}
    (stream,) = api_requests(fake)
    assert stream.project == "sa-project" and stream.auth == "bearer"
    assert client.label() == f"Vertex AI (sa-project, us-central1) at {fake.url}"


async def test_gclouds_authorized_user_file_with_a_current_token_is_used_as_it_is(
    fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datetime

    expiry = (datetime.datetime.now(datetime.UTC) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = authorized_user_with_token(tmp_path, fake.issue_token(), expiry)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    client = vertex(fake)
    try:
        await stream_text(client)
        await client.count_tokens(MODEL, [text_content("user", "x")])
    finally:
        await client.aclose()
    logged = [(r.kind, r.auth, r.status) for r in fake.requests()]
    assert logged == [("stream", "bearer", 200), ("count", "bearer", 200)]


async def test_a_token_is_refreshed_before_it_expires(fake: Any, user_adc: Path) -> None:
    client = vertex(fake)
    try:
        fake.set_token_lifetime(3600)
        await stream_text(client)
        await stream_text(client)
        assert len(token_requests(fake)) == 1, "a fresh token is reused"
        # A token with 3 minutes left is still accepted by the API, but google-auth's refresh margin (3 min 45 s)
        # counts it as due: it is replaced before the next request, not after a 401.
        client._auth.invalidate()  # type: ignore[union-attr]  # (only to take the next token at once)
        fake.set_token_lifetime(180)
        await stream_text(client)
        await client.generate(MODEL, [text_content("user", "x")])
        await client.count_tokens(MODEL, [text_content("user", "x")])
    finally:
        await client.aclose()
    kinds = [r.kind for r in fake.requests()]
    assert kinds[:4] == ["token", "stream", "stream", "token"]
    later = "".join("t" if kind == "token" else "a" for kind in kinds[3:])
    assert "aa" not in later and later.endswith("a") and later.count("a") == 3, (
        "a new token was fetched before each of the three calls, while the previous one was still accepted"
    )
    assert all(r.status == 200 for r in fake.requests()), "no request ever carried a token the API refused"


async def test_a_revoked_token_is_replaced_once_after_a_401(fake: Any, user_adc: Path) -> None:
    client = vertex(fake)
    try:
        await stream_text(client)
        fake.revoke_tokens()
        assert "you said" in await stream_text(client)
        assert await client.count_tokens(MODEL, [text_content("user", "x")]) > 0
    finally:
        await client.aclose()
    statuses = [(r.kind, r.status) for r in fake.requests()]
    assert statuses == [
        ("token", 200),
        ("stream", 200),
        ("stream", 401),
        ("token", 200),
        ("stream", 200),
        ("count", 200),
    ]


async def test_a_missing_credentials_file_is_a_clear_error_not_the_fake(
    fake: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "nowhere.json"))
    client = vertex(fake)
    try:
        with pytest.raises(ModelError) as caught:
            await stream_text(client)
        with pytest.raises(ModelError) as counted:
            await client.count_tokens(MODEL, [text_content("user", "x")])
    finally:
        await client.aclose()
    for error in (caught.value, counted.value):
        assert error.kind == "credentials"
        assert "nowhere.json" in error.message and "gcloud auth application-default login" in error.message
    assert fake.requests() == [], "nothing was sent anywhere"


async def test_refused_credentials_name_the_token_endpoints_answer(fake: Any, user_adc: Path) -> None:
    fake.script([{"kind": "status", "status": 400, "match": "token", "message": "Token has been expired or revoked."}])
    client = vertex(fake)
    try:
        with pytest.raises(ModelError) as caught:
            await stream_text(client)
    finally:
        await client.aclose()
    assert caught.value.kind == "credentials"
    assert "invalid_grant" in caught.value.message and "Token has been expired or revoked" in caught.value.message
    assert "gcloud auth application-default login" in caught.value.message
    assert [r.kind for r in fake.requests()] == ["token"]


async def test_express_mode_sends_the_key_on_the_publisher_path(fake: Any) -> None:
    endpoint = Endpoint("vertex", fake.url, VERTEX_API_VERSION, api_key="vertex-express-key", custom_url=True)
    client = ModelClient(ClientConfig(None, fake.url, 10_000, 0, 1, endpoint=endpoint))
    try:
        await stream_text(client)
        await client.count_tokens(MODEL, [text_content("user", "x")])
    finally:
        await client.aclose()
    for request in fake.requests():
        assert request.path.startswith(f"/v1beta1/publishers/google/models/{MODEL}:")
        assert request.api == "express" and request.auth == "key"


async def test_a_key_on_a_project_path_is_refused_like_vertex_does(fake: Any) -> None:
    endpoint = Endpoint("vertex", fake.url, VERTEX_API_VERSION, api_key="k", project="p", location="l")
    wrong = Endpoint("gemini", fake.url, "v1beta1", api_key="k")
    assert endpoint.express and not endpoint.uses_adc
    client = ModelClient(ClientConfig(None, fake.url, 10_000, 0, 1, endpoint=wrong))
    try:
        path = f"{fake.url}/v1beta1/projects/p/locations/l/publishers/google/models/{MODEL}:countTokens"
        response = await client._stream._client.post(path, headers={"x-goog-api-key": "k"}, json={"contents": []})
    finally:
        await client.aclose()
    assert response.status_code == 401 and "API keys are not supported" in response.text


# -- configuration ------------------------------------------------------------------------------------


def test_environment_as_google_genai_reads_it() -> None:
    env = {"GOOGLE_GENAI_USE_VERTEXAI": "True", "GOOGLE_CLOUD_PROJECT": "env-proj", "GEMINI_API_KEY": "k"}
    endpoint = resolve(Settings(), env)
    assert endpoint is not None and endpoint.uses_adc and endpoint.api_key is None, "a project beats an env key"
    assert (endpoint.project, endpoint.location) == ("env-proj", DEFAULT_VERTEX_LOCATION)
    assert endpoint.base_url == "https://us-central1-aiplatform.googleapis.com"
    assert endpoint.label() == "Vertex AI (env-proj, us-central1)"
    glob = resolve(Settings(), {**env, "GOOGLE_CLOUD_LOCATION": "global"})
    assert glob is not None and glob.base_url == "https://aiplatform.googleapis.com"
    custom = resolve(Settings(), {**env, "GOOGLE_VERTEX_BASE_URL": "http://127.0.0.1:9"})
    assert custom is not None and custom.url(MODEL, "countTokens") == (
        "http://127.0.0.1:9/v1beta1/projects/env-proj/locations/us-central1/publishers/google/models/"
        f"{MODEL}:countTokens"
    )
    express = resolve(Settings(), {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_API_KEY": "k"})
    assert express is not None and express.express
    assert express.url(MODEL, "generateContent") == (
        f"https://aiplatform.googleapis.com/v1beta1/publishers/google/models/{MODEL}:generateContent"
    )


def test_settings_win_over_the_environment() -> None:
    env = {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_CLOUD_PROJECT": "env-proj", "GOOGLE_CLOUD_LOCATION": "x"}
    chosen = resolve(Settings(backend="vertex", vertex_project="mine", vertex_location="europe-west4"), env)
    assert chosen is not None and (chosen.project, chosen.location) == ("mine", "europe-west4")
    gemini = resolve(Settings(backend="gemini", api_key="k"), env)
    assert gemini is not None and gemini.kind == "gemini"
    keyless = resolve(Settings(backend="gemini"), {})
    assert keyless is not None and keyless.problem is not None and "no API key" in keyless.problem
    assert resolve(Settings(), {}) is None, "nothing configured at all: the embedded fake"


async def test_the_model_list_on_vertex_express_and_with_a_project(fake: Any, user_adc: Path) -> None:
    """google-genai lists Vertex AI's publisher models (no generation methods, no limits), as the fake answers them."""
    endpoint = Endpoint("vertex", fake.url, VERTEX_API_VERSION, api_key="vertex-express-key", custom_url=True)
    express = ModelClient(ClientConfig(None, fake.url, 10_000, 0, 1, endpoint=endpoint))
    with_project = vertex(fake)
    try:
        listed = [await express.list_models(), await with_project.list_models()]
    finally:
        await express.aclose()
        await with_project.aclose()
    for models in listed:
        assert ("gemini-2.5-pro", []) in [(name.rsplit("/", 1)[-1], methods) for name, _, _, methods in models]
    # the publisher list is one global path, with the key (express mode) or the ADC's bearer token
    routes = [(r.path, r.auth) for r in fake.requests() if r.kind == "list"]
    assert routes == [("/v1beta1/publishers/google/models", "key"), ("/v1beta1/publishers/google/models", "bearer")]
