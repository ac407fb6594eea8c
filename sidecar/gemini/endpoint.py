"""Which Gemini the sidecar talks to: real Gemini with a key, else the embedded fake; builds ModelClients lazily."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from typing import Any

from sidecar.gemini.client import ClientConfig, ModelClient
from sidecar.session import Session

log = logging.getLogger(__name__)

PLACEHOLDER_KEY = "sidecar-no-key"
EMBEDDED_FAKE_KEY = "embedded-fake-gemini"


class Backend:
    """Resolves settings to a ModelClient, rebuilding it when the connection settings change."""

    def __init__(self, session: Session, inform: Callable[[str], None]) -> None:
        self._session = session
        self._inform = inform
        self._client: ModelClient | None = None
        self._fake: Any = None
        self._lock = asyncio.Lock()

    @property
    def embedded_fake_url(self) -> str | None:
        return None if self._fake is None else str(self._fake.url)

    def describe(self) -> str:
        """Where requests go, for logs and `sidecar --check` (never includes the key)."""
        settings = self._session.settings
        if settings.effective_api_key() is None and settings.effective_base_url() is None:
            return "the embedded fake Gemini (no API key set)"
        return settings.effective_base_url() or "Gemini (generativelanguage.googleapis.com)"

    async def client(self) -> ModelClient:
        async with self._lock:
            config = await asyncio.get_running_loop().run_in_executor(None, self._config)
            if self._client is None or self._client.config != config:
                old, self._client = self._client, None
                if old is not None:
                    await old.aclose()
                self._client = await asyncio.get_running_loop().run_in_executor(None, ModelClient, config)
                # google-genai's import (pydantic models) leaves ~100k long-lived objects: out of the collector's
                # way, so that a full collection during a turn does not rescan them all (as at start-up, cli.py).
                gc.freeze()
            return self._client

    def _config(self) -> ClientConfig:
        settings = self._session.settings
        key = settings.effective_api_key()
        base = settings.effective_base_url()
        if key is None and base is None:
            base = self._start_fake()
            key = EMBEDDED_FAKE_KEY
        elif key is None:
            key = PLACEHOLDER_KEY
        return ClientConfig(
            api_key=key,
            base_url=base,
            timeout_ms=settings.request_timeout_ms,
            retry_attempts=settings.retry_attempts,
            retry_initial_delay_ms=settings.retry_initial_delay_ms,
        )

    def _start_fake(self) -> str:
        if self._fake is None:
            from sidecar.fakegemini import FakeGemini

            self._fake = FakeGemini()
            self._fake.start()
            log.info("no API key: using the embedded fake Gemini at %s", self._fake.url)
            self._inform(
                "Sidecar: no Gemini API key is set, so replies come from the embedded offline fake Gemini. "
                "Set sidecar.apiKey or GEMINI_API_KEY to talk to Gemini."
            )
        return str(self._fake.url)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._fake is not None:
            self._fake.stop()
            self._fake = None
