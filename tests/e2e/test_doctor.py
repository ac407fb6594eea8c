"""`sidecar doctor` as a user runs it: a real process, its text and JSON; and its verdict against the real server's
behaviour, started in the same environment with the same settings, for every combination docs/settings.md lists."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
import pytest

from sidecar.fakegemini import FakeGemini
from tests.acp_agent.harness import Agent
from tests.adc_files import external_authorized_user, service_account
from tests.e2e.harness import server_env
from tests.reliability.conftest import make_dirs
from tests.reliability.proc import RpcError, Sidecar

SECRET = "AIzaDoctorCanary0123456789abcdefghijklm"


def doctor(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar", "doctor", *args],
        env=server_env(**env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_doctor_reports_python_backend_credentials_and_a_writable_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    settings = tmp_path / "user-settings.json"
    run = doctor("--project", str(tmp_path), "--settings", str(settings), SIDECAR_HOME=str(home), GEMINI_API_KEY=SECRET)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert SECRET not in out and SECRET[-6:] not in out and SECRET not in run.stderr  # never the key
    assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in out and sys.executable in out
    assert "an API key (from the environment variable GEMINI_API_KEY)" in out and "Gemini API" in out
    assert f"{settings} (does not exist)" in out
    assert f"{home} (SIDECAR_HOME)" in out
    assert f"{home}/sessions/" in out and "writable" in out and out.rstrip().endswith("All good.")

    data = json.loads(doctor("--json", "--project", str(tmp_path), SIDECAR_HOME=str(home)).stdout)
    checks = {c["name"]: c for c in data["checks"]}
    assert data["ok"] is True and set(checks) >= {"python", "packages", "settings", "backend", "recordings"}
    assert data["backend"] == {
        "kind": "fake",
        "label": "embedded fake Gemini",
        "ok": True,
        "errorKind": None,
        "message": None,
    }
    assert "apiKey" in checks["backend"]["hint"] and "api_key" not in checks["backend"]["hint"]

    editor = doctor("--json", "--editor-settings", "-", "--project", str(tmp_path), stdin="{}", SIDECAR_HOME=str(home))
    hint = {c["name"]: c for c in json.loads(editor.stdout)["checks"]}["backend"]["hint"]
    assert "Sidecar: Set API Key" in hint and "GEMINI_API_KEY in the environment" in hint and "api_key" not in hint
    assert "apiKey = " not in hint  # Neovim's health check advises against a key in a config file


def test_doctor_names_a_recording_folder_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data home should be")
    run = doctor("--project", str(tmp_path), SIDECAR_HOME=str(blocker))
    assert run.returncode == 1
    assert "BAD recordings" in run.stdout and "not writable" in run.stdout and "SIDECAR_HOME" in run.stdout
    assert run.stdout.rstrip().endswith("Problems found (BAD above).")


def test_version_and_doctor_in_help() -> None:
    run = subprocess.run([sys.executable, "-m", "sidecar", "--help"], capture_output=True, text=True, timeout=60)
    assert "doctor" in run.stdout
    version = subprocess.run([sys.executable, "-m", "sidecar", "--version"], capture_output=True, text=True, timeout=60)
    assert version.stdout.startswith("sidecar ")


# -- the doctor's verdict is the server's behaviour ------------------------------------------------------------------


@dataclass
class Case:
    """One combination: environment and editor settings (built from the fake's URL and the ADC files), an optional
    workspace settings file, and what the server is expected to do with one message."""

    env: Callable[[Fixtures], dict[str, str]] = lambda _: {}
    settings: Callable[[Fixtures], dict[str, Any]] = lambda _: {}
    workspace_file: dict[str, Any] | None = None
    #: (ok, the error kind when not ok, the backend label with {url} for the fake's URL)
    expected: tuple[bool, str | None, str] = (True, None, "")
    #: The doctor also reports a settings problem (exit code 1 though the backend works).
    settings_problem: bool = False


@dataclass
class Fixtures:
    url: str
    sa_file: str
    user_file: str
    no_such_file: str
    extra: dict[str, str] = field(default_factory=dict)


VERTEX = {"GOOGLE_GENAI_USE_VERTEXAI": "true"}

CASES: dict[str, Case] = {
    "nothing configured": Case(expected=(True, None, "embedded fake Gemini")),
    "Gemini API key and base URL from the environment": Case(
        env=lambda f: {"GEMINI_API_KEY": SECRET, "GOOGLE_GEMINI_BASE_URL": f.url},
        expected=(True, None, "Gemini API at {url}"),
    ),
    "Gemini API key and base URL from settings": Case(
        settings=lambda f: {"apiKey": SECRET, "baseUrl": f.url},
        expected=(True, None, "Gemini API at {url}"),
    ),
    "GOOGLE_API_KEY from the environment, base URL from settings": Case(
        env=lambda f: {"GOOGLE_API_KEY": SECRET},
        settings=lambda f: {"baseUrl": f.url},
        expected=(True, None, "Gemini API at {url}"),
    ),
    "base URL alone (a keyless proxy)": Case(
        env=lambda f: {"GOOGLE_GEMINI_BASE_URL": f.url},
        expected=(True, None, "Gemini API at {url}"),
    ),
    "backend gemini without a key": Case(
        settings=lambda f: {"backend": "gemini"},
        expected=(False, "config", "Gemini API"),
    ),
    "Vertex AI with ADC, all from the environment": Case(
        env=lambda f: {
            **VERTEX,
            "GOOGLE_CLOUD_PROJECT": "env-proj",
            "GOOGLE_CLOUD_LOCATION": "global",
            "GOOGLE_VERTEX_BASE_URL": f.url,
            "GOOGLE_APPLICATION_CREDENTIALS": f.sa_file,
        },
        expected=(True, None, "Vertex AI (env-proj, global) at {url}"),
    ),
    "Vertex AI with ADC, project and location from settings": Case(
        env=lambda f: {"GOOGLE_APPLICATION_CREDENTIALS": f.sa_file, "GOOGLE_CLOUD_PROJECT": "loses"},
        settings=lambda f: {
            "backend": "vertex",
            "vertexProject": "set-proj",
            "vertexLocation": "europe-west4",
            "baseUrl": f.url,
        },
        expected=(True, None, "Vertex AI (set-proj, europe-west4) at {url}"),
    ),
    "Vertex AI with ADC, the project from the service-account key": Case(
        env=lambda f: {**VERTEX, "GOOGLE_VERTEX_BASE_URL": f.url, "GOOGLE_APPLICATION_CREDENTIALS": f.sa_file},
        expected=(True, None, "Vertex AI (sa-project, us-central1) at {url}"),
    ),
    "Vertex AI with a user login and a project": Case(
        env=lambda f: {
            **VERTEX,
            "GOOGLE_VERTEX_BASE_URL": f.url,
            "GOOGLE_APPLICATION_CREDENTIALS": f.user_file,
            "GOOGLE_CLOUD_PROJECT": "user-proj",
        },
        expected=(True, None, "Vertex AI (user-proj, us-central1) at {url}"),
    ),
    "Vertex AI with a user login and no project anywhere": Case(
        env=lambda f: {**VERTEX, "GOOGLE_VERTEX_BASE_URL": f.url, "GOOGLE_APPLICATION_CREDENTIALS": f.user_file},
        expected=(False, "config", "Vertex AI (project from the credentials, us-central1) at {url}"),
    ),
    "Vertex AI, GOOGLE_APPLICATION_CREDENTIALS names a missing file": Case(
        env=lambda f: {
            **VERTEX,
            "GOOGLE_CLOUD_PROJECT": "p",
            "GOOGLE_VERTEX_BASE_URL": f.url,
            "GOOGLE_APPLICATION_CREDENTIALS": f.no_such_file,
        },
        expected=(False, "credentials", "Vertex AI (p, us-central1) at {url}"),
    ),
    "Vertex AI chosen and nothing else (the issue's report)": Case(
        env=lambda f: dict(VERTEX),
        expected=(False, "credentials", "Vertex AI (project from the credentials, us-central1)"),
    ),
    "Vertex AI express mode from the environment": Case(
        env=lambda f: {**VERTEX, "GOOGLE_API_KEY": SECRET, "GOOGLE_VERTEX_BASE_URL": f.url},
        expected=(True, None, "Vertex AI (express mode, API key) at {url}"),
    ),
    "Vertex AI express mode from settings, over a project in the environment": Case(
        env=lambda f: {"GOOGLE_CLOUD_PROJECT": "env-proj"},
        settings=lambda f: {"backend": "vertex", "apiKey": SECRET, "baseUrl": f.url},
        expected=(True, None, "Vertex AI (express mode, API key) at {url}"),
    ),
    "settings choose the Gemini API over GOOGLE_GENAI_USE_VERTEXAI": Case(
        env=lambda f: dict(VERTEX),
        settings=lambda f: {"backend": "gemini", "apiKey": SECRET, "baseUrl": f.url},
        expected=(True, None, "Gemini API at {url}"),
    ),
    "a workspace file cannot switch to Vertex AI": Case(
        env=lambda f: {"GEMINI_API_KEY": SECRET, "GOOGLE_GEMINI_BASE_URL": f.url},
        workspace_file={"backend": "vertex", "vertexProject": "repo-proj", "model": "gemini-2.5-flash"},
        expected=(True, None, "Gemini API at {url}"),
        settings_problem=True,
    ),
}


@pytest.fixture
def fixtures(fake: FakeGemini, tmp_path: Path) -> Iterator[Fixtures]:
    gcloud = tmp_path / "empty-gcloud-config"  # no developer's own gcloud login leaks in
    gcloud.mkdir()
    yield Fixtures(
        url=fake.url,
        sa_file=str(service_account(tmp_path, fake.url)),
        user_file=str(external_authorized_user(tmp_path, fake.url)),
        no_such_file=str(tmp_path / "missing-adc.json"),
        extra={"CLOUDSDK_CONFIG": str(gcloud), "GCE_METADATA_HOST": "127.0.0.1:9", "GCE_METADATA_IP": "127.0.0.1:9"},
    )


async def _server_outcome(
    home: Path, workspace: Path, url: str, env: dict[str, str], settings: dict[str, Any]
) -> tuple[bool, str | None, str]:
    """Start the real server, send one message: (it worked, the error kind, the backend it names)."""
    side = Sidecar(home, workspace, url, env=env)
    try:
        await side.start(**settings)
        try:
            await side.say("hello, which backend answers?")
            ok, kind = True, None
        except RpcError as exc:
            ok, kind = False, (exc.data or {}).get("kind")
        label = (await side.ping())["backend"]
    finally:
        await side.stop()
    return ok, kind, label


async def _doctor_json(workspace: Path, env: dict[str, str], settings: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "sidecar",
        "doctor",
        "--json",
        "--project",
        str(workspace),
        "--editor-settings",
        "-",
        env=server_env(**env),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(json.dumps(settings).encode()), 60)
    assert SECRET not in out.decode() and SECRET not in err.decode(), "the doctor never shows a key"
    assert proc.returncode is not None
    return proc.returncode, json.loads(out)


@pytest.mark.parametrize("name", list(CASES))
async def test_the_doctors_verdict_is_what_the_server_does(name: str, fixtures: Fixtures) -> None:
    case = CASES[name]
    home, workspace = make_dirs()
    try:
        env = {**fixtures.extra, **case.env(fixtures)}
        settings = {
            "apiKey": None,
            "baseUrl": None,
            "retryAttempts": 0,
            "requestTimeoutMs": 10_000,
            **case.settings(fixtures),
        }
        if case.workspace_file is not None:
            (workspace / ".sidecar").mkdir()
            (workspace / ".sidecar" / "settings.json").write_text(json.dumps(case.workspace_file))
        doctor_run, server_run = await asyncio.gather(
            _doctor_json(workspace, {**env, "SIDECAR_HOME": str(home)}, settings),
            _server_outcome(home, workspace, fixtures.url, env, settings),
            return_exceptions=True,
        )
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)
    for outcome in (doctor_run, server_run):
        if isinstance(outcome, BaseException):
            raise outcome
    assert not isinstance(doctor_run, BaseException) and not isinstance(server_run, BaseException)
    (code, report), server = doctor_run, server_run
    ok, kind, label = case.expected
    assert server == (ok, kind, label.format(url=fixtures.url)), "the case exercises what it names"
    verdict = report["backend"]
    assert (verdict["ok"], verdict["errorKind"], verdict["label"]) == server
    assert report["ok"] is (ok and not case.settings_problem)
    assert code == (0 if report["ok"] else 1)
    failing = [c for c in report["checks"] if not c["ok"]]
    assert all(c["hint"] for c in failing), "every problem comes with the next step"
    if not ok:
        assert verdict["message"] and any(verdict["message"] in c["detail"] for c in failing)


# -- the same for `sidecar acp` (settings from the user file; no backend label on the wire: which API answered) ----


async def _acp_outcome(agent: Agent, workspace: Path, fake: FakeGemini) -> tuple[bool, str | None, str]:
    """Start `sidecar acp`, one prompt: (it worked, the error kind, which API answered: fake | gemini | vertex)."""
    await agent.start()
    try:
        await agent.initialize()
        session = await agent.new_session(str(workspace))
        try:
            await agent.prompt(session, "hello, which backend answers?")
            ok, kind = True, None
        except acp.RequestError as exc:
            ok, kind = False, (exc.data or {}).get("kind")
    finally:
        await agent.close()
    apis = {r.api for r in fake.requests() if r.kind != "token"}
    answered = "fake" if not apis else ("vertex" if apis & {"vertex", "express"} else "gemini")
    return ok, kind, answered


#: `sidecar acp` resolves the backend with the same code once the settings are layered: one case of each kind here.
ACP_CASES = [
    "nothing configured",
    "Gemini API key and base URL from settings",
    "backend gemini without a key",
    "Vertex AI with ADC, project and location from settings",
    "Vertex AI with a user login and no project anywhere",
    "Vertex AI chosen and nothing else (the issue's report)",
    "Vertex AI express mode from settings, over a project in the environment",
    "a workspace file cannot switch to Vertex AI",
]


@pytest.mark.parametrize("name", ACP_CASES)
async def test_the_doctors_verdict_is_what_sidecar_acp_does(name: str, fixtures: Fixtures, fake: FakeGemini) -> None:
    case = CASES[name]
    home, workspace = make_dirs()
    try:
        agent = Agent(fixtures.url, str(home), settings={"retryAttempts": 0, **case.settings(fixtures)})
        for name_ in ("GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"):  # the harness's defaults: only the case's env
            agent.env.pop(name_)
        agent.env.update({**fixtures.extra, **case.env(fixtures)})
        if case.workspace_file is not None:
            (workspace / ".sidecar").mkdir()
            (workspace / ".sidecar" / "settings.json").write_text(json.dumps(case.workspace_file))
        run = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "sidecar", "doctor", "--json", "--project", str(workspace)],
            env=agent.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        server = await _acp_outcome(agent, workspace, fake)
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)
    assert SECRET not in run.stdout and SECRET not in run.stderr
    report = json.loads(run.stdout)
    assert report["frontEnd"] == "acp"
    ok, kind, _label = case.expected
    assert server[:2] == (ok, kind), "the case exercises what it names"
    verdict = report["backend"]
    assert (verdict["ok"], verdict["errorKind"], verdict["kind"] if verdict["ok"] else server[2]) == server
    assert run.returncode == (0 if report["ok"] else 1) and report["ok"] is (ok and not case.settings_problem)
