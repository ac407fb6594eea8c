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


#: How each editor sets the API key, in the notice that the embedded fake answers (each editor is told its own way).
KEY_HINTS = {
    "vscode": 'run "Sidecar: Set API Key" (or set GEMINI_API_KEY)',
    "neovim": "set GEMINI_API_KEY in the environment Neovim starts from (not settings.apiKey in setup(): config "
    "files get shared)",
    "other": "set the apiKey setting or GEMINI_API_KEY",
}


def key_hint(client_name: str | None) -> str:
    """The key hint for the editor named in initialize's clientInfo (VS Code, code-server, Neovim, …)."""
    name = (client_name or "").lower()
    if "vim" in name:
        return KEY_HINTS["neovim"]
    if "code" in name or "visual studio" in name:
        return KEY_HINTS["vscode"]
    return KEY_HINTS["other"]


def acp_key_hint(user_settings: object) -> str:
    """ACP: the agent's environment or its user settings file (editors start `sidecar acp` themselves)."""
    return f"set GEMINI_API_KEY in the environment your editor starts sidecar acp with, or apiKey in {user_settings}"


#: Why the model client is built after initialize, in the log ("model client for … built for the warm-up").
WARM_UP = "the warm-up after initialize"


class Backend:
    """Resolves settings to a ModelClient, rebuilding it when the connection settings change."""

    def __init__(self, session: Session, inform: Callable[[str], None]) -> None:
        self._session = session
        self._inform = inform
        self._client: ModelClient | None = None
        self._fake: Any = None
        self._lock = asyncio.Lock()
        self._warming: asyncio.Task[None] | None = None
        #: How this editor sets an API key, for the fake-Gemini notice (key_hint(); set after initialize).
        self.key_hint = KEY_HINTS["other"]

    @property
    def embedded_fake_url(self) -> str | None:
        return None if self._fake is None else str(self._fake.url)

    def describe(self) -> str:
        """Where requests go, for logs, the status bar tooltip and :checkhealth (never includes a key)."""
        if self._client is not None and self._client.config == self._current_config(start_fake=False):
            return self._client.label()  # knows a project read from the credentials
        endpoint = routes.resolve(self._session.settings)
        return "embedded fake Gemini" if endpoint is None else endpoint.label()

    async def client(self, *, why: str = "a request") -> ModelClient:
        async with self._lock:
            config = await asyncio.get_running_loop().run_in_executor(None, self._config)
            if self._client is None or self._client.config != config:
                old, self._client = self._client, None
                if old is not None:
                    await old.aclose()
                self._client = await asyncio.get_running_loop().run_in_executor(None, ModelClient, config)
                log.info("model client for %s built for %s", self._client.label(), why)
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
            # Shown once per server process; kept short (an editor may show it on one line), the key hint per editor.
            self._inform(
                "Sidecar: no Gemini backend set; the embedded offline fake Gemini answers. "
                f'For Gemini, {self.key_hint}; Vertex AI: backend "vertex".'
            )
        return str(self._fake.url)

    def warm_soon(self) -> None:
        """Build the model client for the current settings now, in the background (after initialize, off the
        critical path), so that the first prompt does not import google-genai and build its client (~0.5 s). With no
        backend configured the embedded fake is left to the first request, which tells the user about it."""
        if self._warming is None and routes.resolve(self._session.settings) is not None:
            self._warming = asyncio.get_running_loop().create_task(self._warm(), name="warm-model-client")

    async def warmed(self) -> None:
        """Wait for the warm-up warm_soon() started (if any); a failure is left to the first request to say."""
        if self._warming is not None and not self._warming.done():
            await asyncio.wait([self._warming])

    async def _warm(self) -> None:
        try:
            client = await self.client(why=WARM_UP)
            await asyncio.get_running_loop().run_in_executor(None, _import_transport)
            await asyncio.get_running_loop().run_in_executor(None, client.warm_count_tokens)
        except asyncio.CancelledError:
            raise
        except Exception:  # a backend that cannot be reached or configured says so at the first request
            log.debug("warming the model client failed", exc_info=True)

    async def aclose(self) -> None:
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
            await asyncio.wait([self._warming])
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._fake is not None:
            self._fake.stop()
            self._fake = None


def _import_transport() -> None:
    """What httpx2 imports when it opens its first connection (anyio's asyncio backend: ~0.1 s of the first turn)."""
    try:
        import anyio._backends._asyncio
        import anyio._core._sockets
        import anyio.streams.memory
        import anyio.streams.stapled  # noqa: F401
    except ImportError:  # another anyio layout: the first request pays instead
        log.debug("could not import anyio's asyncio backend ahead", exc_info=True)
