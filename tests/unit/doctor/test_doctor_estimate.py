"""`sidecar doctor`'s token-estimate row: shown with the overall error when recordings hold both counts, else absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.core.history import text_content
from sidecar.doctor.estimate_check import estimate_check
from sidecar.doctor.report import Context, render_text
from sidecar.recording.store import SessionStore


def _context(project: Path) -> Context:
    return Context(
        project=str(project),
        front_end="acp",
        editor_settings=None,
        editor_settings_error=None,
        user_file=project / "settings.json",
        trusted=False,
        online=False,
    )


def test_the_row_shows_the_overall_error_only_when_there_is_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SIDECAR_HOME", str(tmp_path / "home"))
    assert estimate_check(_context(tmp_path)) == []  # no recordings at all
    store = SessionStore(str(tmp_path))
    writer = store.create("s1", model="m")
    writer.message(text_content("user", "hi"), kind="user")
    writer.usage(100, "api")  # recorded before the estimate was: no data yet
    writer.close()
    assert estimate_check(_context(tmp_path)) == []
    writer = store.create("s2", model="m")
    writer.message(text_content("user", "hi"), kind="user")
    writer.usage(100, "api", estimated=90)
    writer.usage(200, "api", estimated=260)
    writer.close()
    [row] = estimate_check(_context(tmp_path))
    assert row.ok and row.name == "tokenEstimate"
    assert row.detail == "median |error| 20.0%, p95 30.0%, bias +10.0% over 2 requests of this project's sessions"
    assert "tokenEstimate" in render_text("0", "acp", [row])
