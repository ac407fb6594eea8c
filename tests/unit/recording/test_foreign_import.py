"""Claude Code sessions and Codex rollouts imported as sidecar sessions that continue with valid requests; and
`sidecar import --list`."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from sidecar.core.history import content_text, text_content
from sidecar.fakegemini import validate
from sidecar.recording.cli import main_import
from sidecar.recording.foreign_import import candidates, claude_project_dir, detect_format
from sidecar.recording.store import SessionStore

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "5b1f0c3e-8d2a-4c6e-b7f1-0e9a2d4c6b81.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2026-03-02T09-00-00-0199a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b.jsonl"
MODELS = ("gemini-2.5-flash", "gemini-3.5-flash", "an-unknown-model")


def _import(path: Path, tmp_path: Path, *extra: str) -> tuple[SessionStore, dict[str, object]]:
    out = io.StringIO()
    args = argparse.Namespace(path=str(path), project="/srv/app", json=True, model=None, list=False)
    assert main_import(args, out) == 0
    return SessionStore("/srv/app"), json.loads(out.getvalue())


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def test_detects_each_format() -> None:
    assert detect_format(CLAUDE) == "claude" and detect_format(CODEX) == "codex"
    assert detect_format(FIXTURES / "gemini-cli" / "session-2026-05-10T14-00-b2d4e6f8.jsonl") == "gemini"


def _sendable(history: list) -> None:  # type: ignore[type-arg]
    request = [*history, text_content("user", "Go on.")]
    for model in MODELS:
        validate.check_contents(request, model)


def test_claude_code_session_imports_maps_tools_and_continues(tmp_path: Path) -> None:
    store, result = _import(CLAUDE, tmp_path)
    loaded = store.load(str(result["sessionId"]))
    history = loaded.history
    _sendable(history)
    assert loaded.title == "Pin the CI Python version"
    assert content_text(history[0]) == "Why does CI fail on the lint step?"  # the caveat and /clear are display-only
    read = history[1]
    assert content_text(read) == "Let me read the workflow."  # text and call of one streamed message: one content
    call = next(p.function_call for p in read.parts if p.function_call)
    assert call.name == "read_file" and call.args == {
        "path": "/srv/app/.github/workflows/ci.yml",
        "start_line": 1,
        "end_line": 40,
    }
    # Bash maps onto run_shell_command; TodoWrite (no such tool here) is kept as text, with its result
    parallel = history[3]
    assert [p.function_call.name for p in parallel.parts if p.function_call] == ["run_shell_command"]
    assert "[Claude Code tool call TodoWrite" in content_text(parallel)
    assert history[4].parts[0].function_response.response == {"error": "command not found: ruff"}  # type: ignore[union-attr]
    assert "Todos have been modified" in content_text(history[5])
    texts = [content_text(c) for c in history]
    assert "Delete the lint job." not in texts and "sidechain task prompt" not in texts  # rewound, sidechain
    image_turn = next(c for c in history if "Pin ruff instead" in content_text(c))
    assert image_turn.parts[1].inline_data is not None
    last_call = history[-2]
    assert [p.function_call.name for p in last_call.parts if p.function_call] == ["replace"]
    assert "No result was recorded" in json.dumps(history[-1].parts[0].function_response.response)  # type: ignore[union-attr]
    assert any("TodoWrite" in w for w in result["warnings"])  # type: ignore[union-attr]


def test_codex_rollout_imports_maps_shell_and_continues(tmp_path: Path) -> None:
    store, result = _import(CODEX, tmp_path)
    loaded = store.load(str(result["sessionId"]))
    history = loaded.history
    _sendable(history)
    assert content_text(history[0]) == "Which Python does the Dockerfile use?"  # environment context: display-only
    shell = history[1].parts[0].function_call
    assert shell is not None and shell.name == "run_shell_command"
    assert shell.args == {"command": "grep -n FROM Dockerfile", "directory": "/srv/app"}
    assert history[2].parts[0].function_response.response == {  # type: ignore[union-attr]
        "output": "1:FROM python:3.11-slim\n",
        "exitCode": 0,
    }
    assert content_text(history[3]) == "It uses python:3.11-slim."
    assert "[Codex tool call apply_patch" in content_text(history[5])  # a tool the sidecar lacks: text
    assert "Success. Updated" in content_text(history[6])
    docker = history[7].parts[0].function_call
    assert docker is not None and docker.args == {"command": "docker build -t app .", "directory": "/srv/app"}
    assert history[8].parts[0].function_response.response == {  # type: ignore[union-attr]
        "error": "error: docker daemon not running"
    }
    assert "No result was recorded" in json.dumps(history[-1].parts[0].function_response.response)  # type: ignore[union-attr]
    assert loaded.metadata.imported_from["model"] == "gpt-5-codex"  # type: ignore[index]
    assert any(e.text and "Codex compacted" in e.text for e in loaded.transcript if hasattr(e, "text"))


def test_import_list_finds_the_projects_sessions_of_each_agent(home: Path) -> None:
    import hashlib
    import shutil

    gemini = home / ".gemini" / "tmp" / hashlib.sha256(b"/srv/app").hexdigest() / "chats"
    gemini.mkdir(parents=True)
    shutil.copy(FIXTURES / "gemini-cli" / "split-model-turns.jsonl", gemini / "session-1.jsonl")
    claude = home / ".claude" / "projects" / claude_project_dir("/srv/app")
    claude.mkdir(parents=True)
    shutil.copy(CLAUDE, claude / CLAUDE.name)
    other = home / ".claude" / "projects" / claude_project_dir("/srv/other")
    other.mkdir(parents=True)
    shutil.copy(CLAUDE, other / CLAUDE.name)
    codex = home / ".codex" / "sessions" / "2026" / "03" / "02"
    codex.mkdir(parents=True)
    shutil.copy(CODEX, codex / CODEX.name)
    found = candidates("/srv/app", home)
    assert sorted(c.tool for c in found) == ["claude-code", "codex", "gemini-cli"]
    assert all("/srv/other" not in str(c.path) and "-srv-other" not in str(c.path) for c in found)
    out = io.StringIO()
    assert main_import(argparse.Namespace(path=None, project="/srv/app", json=False, model=None, list=True), out) == 0
    assert "claude-code" in out.getvalue() and "sidecar import PATH" in out.getvalue()
