"""`sidecar doctor` in-process: where each value came from, the settings files and their problems, --online against
the fake Gemini (Gemini API and Vertex AI's token endpoint), exit codes, never a key in the output."""

from __future__ import annotations

import argparse
import io
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sidecar.config.settings import Settings
from sidecar.doctor import main_doctor
from sidecar.doctor.online import valid_until
from sidecar.fakegemini import FakeGemini
from sidecar.gemini.routes import resolve
from tests.adc_files import external_authorized_user, service_account

KEY = "AIzaUnitDoctorCanary0123456789abcdefgh"
CLEARED = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_VERTEX_BASE_URL",
    "SIDECAR_SETTINGS",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    gcloud = tmp_path / "gcloud"
    gcloud.mkdir()
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(gcloud))
    monkeypatch.setenv("GCE_METADATA_HOST", "127.0.0.1:9")
    monkeypatch.setenv("GCE_METADATA_IP", "127.0.0.1:9")
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "home"))
    yield


def run(
    project: Path,
    *,
    editor: dict[str, Any] | None = None,
    online: bool = False,
    trusted: bool = False,
    user_file: Path | None = None,
    tmp: Path | None = None,
) -> tuple[int, dict[str, Any], dict[str, list[Any]]]:
    """main_doctor --json; (exit code, the report, the checks by name)."""
    editor_file = None
    if editor is not None:
        editor_file = project.parent / "editor-settings.json"
        editor_file.write_text(json.dumps(editor))
    args = argparse.Namespace(
        project=str(project),
        json=True,
        online=online,
        trusted=trusted,
        editor_settings=str(editor_file) if editor_file else None,
        settings=str(user_file or project.parent / "no-user-settings.json"),
    )
    out = io.StringIO()
    code = main_doctor(args, out)
    text = out.getvalue()
    assert KEY not in text, "never a key"
    report = json.loads(text)
    checks: dict[str, list[Any]] = {}
    for check in report["checks"]:
        checks.setdefault(check["name"], []).append(check)
    return code, report, checks


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def workspace_file(project: Path, content: str) -> Path:
    path = project / ".sidecar" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(content)
    return path


# -- origins --------------------------------------------------------------------------------------------------------


def test_the_resolution_says_where_each_value_came_from() -> None:
    env = {"GOOGLE_GENAI_USE_VERTEXAI": "1", "GOOGLE_CLOUD_PROJECT": "p", "GOOGLE_CLOUD_LOCATION": "global"}
    endpoint = resolve(Settings(), env)
    assert endpoint is not None
    assert dict(endpoint.origins) == {
        "backend": "GOOGLE_GENAI_USE_VERTEXAI",
        "project": "GOOGLE_CLOUD_PROJECT",
        "location": "GOOGLE_CLOUD_LOCATION",
    }
    endpoint = resolve(Settings(backend="vertex", vertex_project="s", base_url="http://x"), env)
    assert endpoint is not None and endpoint.origin("project") == "sidecar.vertexProject"
    assert endpoint.origin("backend") == "sidecar.backend" and endpoint.origin("url") == "sidecar.baseUrl"
    express = resolve(Settings(), {"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_API_KEY": "k"})
    assert express is not None and express.express and express.origin("key") == "GOOGLE_API_KEY"
    # origins are not part of the endpoint's identity: the server does not rebuild its client for them
    assert resolve(Settings(vertex_project="p", backend="vertex"), {}) == endpoint.__class__(
        **{
            **endpoint.__dict__,
            "project": "p",
            "base_url": "https://us-central1-aiplatform.googleapis.com",
            "custom_url": False,
            "location": "us-central1",
            "origins": (),
        }
    )


def test_vertex_ai_project_location_and_adc_are_named_with_their_sources(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sa = service_account(tmp_path, "http://127.0.0.1:9")
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(sa))
    code, report, checks = run(project, editor={"vertexLocation": "europe-west4"})
    assert code == 0
    assert checks["project"][0]["detail"] == f"sa-project (from the credentials, GOOGLE_APPLICATION_CREDENTIALS={sa})"
    assert checks["location"][0]["detail"] == "europe-west4 (from sidecar.vertexLocation in the editor's settings)"
    adc = checks["adc"][0]["detail"]
    assert "a service-account key (google.oauth2.service_account.Credentials" in adc and str(sa) in adc
    assert "sidecar-test@sa-project.iam.gserviceaccount.com" in adc and "PRIVATE KEY" not in json.dumps(report)
    assert report["backend"]["label"] == "Vertex AI (sa-project, europe-west4)"


@pytest.mark.process
def test_no_adc_is_a_problem_with_the_next_step_and_exit_code_1(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    code, report, checks = run(project)
    assert code == 1 and report["ok"] is False
    (adc,) = checks["adc"]
    assert adc["ok"] is False and "Application Default Credentials" in adc["detail"]
    assert "gcloud auth application-default login" in adc["hint"]
    assert report["backend"]["errorKind"] == "credentials"


# -- settings files -------------------------------------------------------------------------------------------------


def test_acp_reads_the_user_file_and_names_its_problems(project: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"apiKey": KEY, "baseUrl": "http://proxy.example", "compressionThreshold": "high"}))
    code, report, checks = run(project, user_file=user)
    assert code == 1
    assert report["frontEnd"] == "acp" and report["backend"]["label"] == "Gemini API at http://proxy.example"
    assert f'from "apiKey" in {user}' in checks["credentials"][0]["detail"]
    bad = [c for c in checks["settings"] if not c["ok"]]
    assert len(bad) == 1 and "sidecar.compressionThreshold is invalid" in bad[0]["detail"]
    assert str(user) in bad[0]["detail"] and "correct the value" in bad[0]["hint"]


def test_workspace_file_problems_forbidden_keys_and_untrusted_hooks(project: Path) -> None:
    path = workspace_file(
        project,
        json.dumps(
            {
                "apiKey": KEY,
                "tokenLimit": -5,
                "hooks": {"PreCompress": [{"command": "echo hi"}]},
            }
        ),
    )
    code, _report, checks = run(project, editor={})
    assert code == 1
    details = {c["detail"]: c for c in checks["settings"] if not c["ok"]}
    forbidden = details[f"{path}: `apiKey` cannot be set from a workspace file (use your editor settings); ignored."]
    assert "editor's settings" in forbidden["hint"]
    (limit,) = [c for text, c in details.items() if "sidecar.tokenLimit is invalid" in text]
    assert str(path) in limit["hint"]
    (hooks,) = checks["hooks"]
    assert hooks["ok"] is True and "stay off" in hooks["detail"] and "trust the workspace" in hooks["hint"]
    _code, _report, trusted = run(project, editor={}, trusted=True)
    assert "hooks" not in trusted and f"{path} (trusted)" in trusted["settings"][0]["detail"]


def test_a_workspace_file_that_is_not_json_and_editor_settings_that_are_not_json(project: Path) -> None:
    workspace_file(project, "{ not json")
    code, _report, checks = run(project, editor={})
    assert code == 1
    (bad,) = [c for c in checks["settings"] if not c["ok"]]
    assert "is not valid JSON" in bad["detail"] and "fix the JSON" in bad["hint"]
    broken = project.parent / "broken.json"
    broken.write_text(f'{{"apiKey": "{KEY}", ')
    args = argparse.Namespace(
        project=str(project), json=False, online=False, trusted=False, editor_settings=str(broken), settings=None
    )
    out = io.StringIO()
    assert main_doctor(args, out) == 1
    assert "not valid JSON (line 1, column" in out.getvalue() and KEY not in out.getvalue()


# -- --online -------------------------------------------------------------------------------------------------------


@pytest.mark.process
def test_online_counts_tokens_once_and_says_the_status(project: Path) -> None:
    with FakeGemini(api_keys={KEY}) as fake:
        code, _report, checks = run(project, editor={"apiKey": KEY, "baseUrl": fake.url}, online=True)
        assert code == 0
        (count,) = checks["countTokens"]
        assert count["ok"] and "HTTP 200 OK" in count["detail"] and ":countTokens" in count["detail"]
        assert [r.kind for r in fake.requests()] == ["count"]
        fake.reset()
        code, _report, checks = run(project, editor={"apiKey": "AIzaWrongKey123456", "baseUrl": fake.url}, online=True)
        assert code == 1
        (count,) = checks["countTokens"]
        assert "HTTP 400 Bad Request" in count["detail"] and "API key not valid" in count["detail"]
        assert "AIzaWrongKey123456" not in count["detail"] and "API key" in count["hint"]
        fake.script({"kind": "status", "status": 503, "match": "count"})
        code, _report, checks = run(project, editor={"apiKey": KEY, "baseUrl": fake.url}, online=True)
        assert code == 1 and "HTTP 503 Service Unavailable" in checks["countTokens"][0]["detail"]
        assert len([r for r in fake.requests() if r.kind == "count"]) == 2, "one call per run, no retries"


@pytest.mark.process
def test_online_obtains_a_vertex_token_then_counts(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeGemini() as fake:
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(external_authorized_user(tmp_path, fake.url)))
        editor = {"backend": "vertex", "vertexProject": "proj-1", "baseUrl": fake.url}
        code, _report, checks = run(project, editor=editor, online=True)
        assert code == 0, checks
        assert checks["token"][0]["ok"] and "access token was obtained" in checks["token"][0]["detail"]
        assert "UTC" not in checks["token"][0]["detail"], "local time, as the product shows times"
        assert "fake-access-token" not in json.dumps(checks)
        (count,) = checks["countTokens"]
        assert "HTTP 200 OK" in count["detail"] and "/projects/proj-1/locations/us-central1/" in count["detail"]
        fake.reset()
        fake.script({"kind": "status", "status": 401, "match": "token"})
        code, _report, checks = run(project, editor=editor, online=True)
        assert code == 1 and checks["token"][0]["ok"] is False and "countTokens" not in checks
        assert "refused" in checks["token"][0]["detail"] and "gcloud auth" in checks["token"][0]["hint"]


def test_online_with_nothing_configured_reaches_nothing(project: Path) -> None:
    code, _report, checks = run(project, online=True)
    assert code == 0 and "embedded fake" in checks["online"][0]["detail"]


def test_the_token_expiry_is_shown_in_local_time_as_the_product_shows_times(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Kolkata")  # UTC+05:30, no daylight saving
    time.tzset()
    try:
        # google-auth's expiry is a naive UTC time
        assert valid_until(datetime(2026, 11, 25, 3, 36, 22)) == ", valid until 2026-11-25 09:06"
        assert valid_until(datetime(2026, 11, 25, 3, 36, tzinfo=UTC)) == ", valid until 2026-11-25 09:06"
        assert valid_until(None) == ""
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
