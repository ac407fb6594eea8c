"""Which Gemini the sidecar talks to — Gemini API, Vertex AI, or (nothing configured) the embedded fake; builds
ModelClients lazily."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from typing import Any

from sidecar.config.settings import Settings
from sidecar.gemini import routes
from sidecar.gemini.client import ClientConfig, ModelClient
from sidecar.gemini.routes import GEMINI_API_VERSION, Endpoint
from sidecar.session import Session

log = logging.getLogger(__name__)

EMBEDDED_FAKE_KEY = "embedded-fake-gemini"


def client_config(settings: Settings, embedded_fake_url: Callable[[], str]) -> ClientConfig:
    """How the server reaches the model with these settings and the environment; `embedded_fake_url` is called only
    when no backend is configured (then the embedded fake answers). Also what `sidecar doctor` checks."""
    endpoint = routes.resolve(settings)
    if endpoint is None:  # no backend configured at all: the embedded fake, and the user is told so
        endpoint = Endpoint("fake", embedded_fake_url(), GEMINI_API_VERSION, api_key=EMBEDDED_FAKE_KEY, custom_url=True)
    return ClientConfig(
        api_key=endpoint.api_key,
        base_url=endpoint.base_url,
        timeout_ms=settings.request_timeout_ms,
        retry_attempts=settings.retry_attempts,
        retry_initial_delay_ms=settings.retry_initial_delay_ms,
        endpoint=endpoint,
    )


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
        """Where requests go, for logs, the status bar tooltip and :checkhealth (never includes a key)."""
        if self._client is not None and self._client.config == self._current_config(start_fake=False):
            return self._client.label()  # knows a project read from the credentials
        endpoint = routes.resolve(self._session.settings)
        return "embedded fake Gemini" if endpoint is None else endpoint.label()

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
        return self._current_config(start_fake=True)

    def _current_config(self, *, start_fake: bool) -> ClientConfig:
        return client_config(
            self._session.settings, self._start_fake if start_fake else lambda: self.embedded_fake_url or ""
        )

    def _start_fake(self) -> str:
        if self._fake is None:
            from sidecar.fakegemini import FakeGemini

            self._fake = FakeGemini()
            self._fake.start()
            log.info("no API key: using the embedded fake Gemini at %s", self._fake.url)
            self._inform(
                "Sidecar: no Gemini backend is configured, so replies come from the embedded offline fake Gemini. "
                "Set sidecar.apiKey or GEMINI_API_KEY to talk to the Gemini API, or GOOGLE_GENAI_USE_VERTEXAI=true "
                "(or sidecar.backend \"vertex\") with a project for Vertex AI."
            )
        return str(self._fake.url)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._fake is not None:
            self._fake.stop()
            self._fake = None
