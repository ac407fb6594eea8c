"""The notice that the embedded fake answers: said once per process, and short."""

from __future__ import annotations

import pytest

from sidecar.config.settings import Settings
from sidecar.gemini.backend import Backend
from sidecar.session import Session


@pytest.mark.process
async def test_the_no_backend_notice_is_short_and_said_once(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    told: list[str] = []
    backend = Backend(Session(settings=Settings(), workspace_folders=[]), told.append)
    try:
        await backend.client()
        await backend.client()
    finally:
        await backend.aclose()
    assert len(told) == 1, told
    (notice,) = told
    # ~260 characters raised a Press-ENTER prompt in Neovim 0.11: two short sentences, with what to set
    assert len(notice) <= 160, len(notice)
    assert "embedded offline fake Gemini" in notice and "GEMINI_API_KEY" in notice and "vertex" in notice
