"""`sidecar doctor` as a user runs it: a real process, its text and JSON, healthy and broken data folders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.e2e.harness import server_env

SECRET = "AIzaDoctorCanary0123456789abcdefghijklm"


def doctor(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sidecar", "doctor", *args],
        env=server_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_doctor_reports_python_backend_credentials_and_a_writable_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    run = doctor("--project", str(tmp_path), SIDECAR_HOME=str(home), GEMINI_API_KEY=SECRET)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    assert SECRET not in out and SECRET[-6:] not in out and SECRET not in run.stderr  # never the key
    assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in out and sys.executable in out
    assert "GEMINI_API_KEY is set" in out and "generativelanguage.googleapis.com" in out
    assert f"{home} (SIDECAR_HOME)" in out
    assert f"{home}/sessions/" in out and "writable" in out and out.rstrip().endswith("All good.")

    data = json.loads(doctor("--json", "--project", str(tmp_path), SIDECAR_HOME=str(home)).stdout)
    checks = {c["name"]: c for c in data["checks"]}
    assert data["ok"] is True and set(checks) >= {"python", "packages", "backend", "credentials", "recordings"}
    assert "embedded fake" in checks["backend"]["detail"] and "Set API Key" in checks["credentials"]["hint"]


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
