"""Talking to Gemini or Vertex AI: chat streams on the cached-bytes path, other calls through google-genai; retries,
credentials, named errors."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from sidecar.core.content_json import decode_contents, encode_content
from sidecar.core.history import Content, Part, dump_contents
from sidecar.core.request_repair import repair_wire, shape_hint
from sidecar.gemini.credentials import LOGIN_HINT, AdcAuth, CredentialsError, missing_project_message
from sidecar.gemini.routes import GEMINI_API_VERSION, GEMINI_URL, Endpoint
from sidecar.gemini.stream import ApiError, Chunk, GeminiStream, MalformedEvent, Usage

log = logging.getLogger(__name__)

API_VERSION = GEMINI_API_VERSION
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
MAX_RETRY_DELAY_S = 30.0

ErrorKind = Literal[
    "rateLimit",
    "auth",
    "notFound",
    "badRequest",
    "server",
    "timeout",
    "unreachable",
    "stream",
    "credentials",
    "blocked",
    "invalidReply",
    "config",
]
#: Failures worth another attempt of a chat round even after output arrived (Gemini CLI retries these mid-stream).
MID_STREAM_RETRYABLE = frozenset({"stream", "server", "rateLimit", "timeout", "unreachable"})


class ModelError(Exception):
    """A failed model call, with a message that names the cause and never contains the API key.
    `mid_stream`: the failure came after part of the reply had arrived. `reason` / `block_reason`: an unusable or
    blocked reply's type and policy (sidecar/gemini/attempts.py)."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        status: int | None = None,
        *,
        mid_stream: bool = False,
        reason: str | None = None,
        block_reason: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.mid_stream = mid_stream
        self.reason = reason
        self.block_reason = block_reason


@dataclass
class Reply:
    """A whole (non-streamed) reply."""

    parts: list[Part]
    finish_reason: str | None
    usage: Usage | None
    finish_message: str | None = None
    block_reason: str | None = None
    block_message: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.text and not p.thought)


@dataclass(frozen=True)
class ClientConfig:
    """How to reach the model. `endpoint` (Vertex AI, …) wins over `api_key` + `base_url` (the Gemini API)."""

    api_key: str | None
    base_url: str | None
    timeout_ms: int
    retry_attempts: int
    retry_initial_delay_ms: int
    endpoint: Endpoint | None = None

    def resolved_endpoint(self) -> Endpoint:
        if self.endpoint is not None:
            return self.endpoint
        return Endpoint(
            "gemini", self.base_url or GEMINI_URL, API_VERSION, api_key=self.api_key, custom_url=bool(self.base_url)
        )


class ModelClient:
    """Chat streams on our HTTP path (sidecar/gemini/stream.py), other calls on one google-genai async client;
    every call retried on 408/429/5xx/timeouts before any output arrived."""

    def __init__(self, config: ClientConfig) -> None:
        from google.genai import types

        self.config = config
        self.endpoint = config.resolved_endpoint()
        self._types = types
        self._count_warm = False
        self._auth = AdcAuth() if self.endpoint.uses_adc else None
        self._stream = GeminiStream(self.endpoint, config.timeout_ms)
        self._redact_key = _redactor(self.endpoint.api_key or "")
        # google-genai's client takes ~200 ms to build: here (the Backend builds ModelClients in a worker thread),
        # or with ADC in a worker thread once the credentials are loaded (`_sdk`), never on the event loop.
        self._client: Any = self._build_sdk() if self._auth is None and self.endpoint.problem is None else None
        self._sdk_lock = asyncio.Lock()
        self._repairs_logged: set[tuple[str, ...]] = set()

    def _repaired(self, model: str, contents: Sequence[bytes]) -> Sequence[bytes]:
        """The request contents with every rule the API enforces satisfied (sidecar.core.request_repair); a
        history that needed fixing is logged once per kind of fix, and never sent as it was."""
        if os.environ.get("SIDECAR_REQUEST_REPAIR") == "off":  # the test suites: the strict fake sees every shape
            return contents
        repaired, fixes = repair_wire(contents, model)
        key = tuple(sorted(set(fixes)))
        if fixes and key not in self._repairs_logged:
            self._repairs_logged.add(key)
            log.warning("request to %s repaired before sending: %s", model, "; ".join(key))
        return repaired

    @property
    def where(self) -> str:
        return self.endpoint.base_url

    @property
    def service(self) -> str:
        return "Vertex AI" if self.endpoint.kind == "vertex" else "Gemini API"

    def label(self) -> str:
        return self.endpoint.label()

    async def aclose(self) -> None:
        closes = [self._stream.aclose] + ([self._client.aio.aclose] if self._client is not None else [])
        for close in closes:
            try:
                await close()
            except Exception:  # closing is best effort
                log.debug("closing an HTTP client failed", exc_info=True)

    # -- credentials ------------------------------------------------------------------------------
    async def _auth_headers(self) -> dict[str, str] | None:
        """Bearer headers for Vertex AI with ADC (refreshed when due); None when a key authorises requests."""
        if self.endpoint.problem is not None:
            raise ModelError("config", self.endpoint.problem)
        if self._auth is None:
            return None
        try:
            headers = await self._auth.headers()
        except CredentialsError as exc:
            raise ModelError("unreachable" if exc.retryable else "credentials", exc.message) from None
        if self.endpoint.project is None:
            if not self._auth.project:
                raise ModelError("config", missing_project_message(self._auth.source))
            self.endpoint = self.endpoint.with_project(self._auth.project)
            self._stream.endpoint = self.endpoint
        return headers

    async def _sdk(self) -> Any:
        """The google-genai client for this endpoint (its credentials refreshed by `_auth_headers` before each call)."""
        await self._auth_headers()
        if self._client is None:
            async with self._sdk_lock:
                if self._client is None:
                    self._client = await asyncio.to_thread(self._build_sdk)
        return self._client

    def _build_sdk(self) -> Any:
        from google import genai

        types, ep = self._types, self.endpoint
        options = types.HttpOptions(api_version=ep.api_version, timeout=self.config.timeout_ms)
        if ep.kind != "vertex":
            if ep.custom_url:
                options.base_url = ep.base_url
            return genai.Client(vertexai=False, api_key=ep.api_key, http_options=options)
        options.base_url = ep.base_url
        if ep.api_key is not None:
            return genai.Client(vertexai=True, api_key=ep.api_key, http_options=options)
        assert self._auth is not None and self._auth.credentials is not None
        return genai.Client(
            vertexai=True,
            project=ep.project,
            location=ep.location,
            credentials=self._auth.credentials,
            http_options=options,
        )

    # -- calls ------------------------------------------------------------------------------------
    async def stream(
        self,
        model: str,
        contents: Sequence[bytes],
        *,
        system_instruction: str | None = None,
        tools: list[dict[str, Any]] | None = None,
        generation_config: dict[str, Any] | None = None,
        tool_config: dict[str, Any] | None = None,
    ) -> AsyncIterator[Chunk]:
        """Stream a reply to `contents`, each a content's JSON bytes (Conversation.wire()). Retries happen only
        before the first chunk; a later failure raises ModelError."""
        contents = self._repaired(model, contents)
        attempt = 0
        refreshed = False
        while True:
            started = False
            iterator: Any = None
            try:
                headers = await self._auth_headers()
                iterator = self._stream.stream(
                    model,
                    contents,
                    system_instruction,
                    tools,
                    auth_headers=headers,
                    generation_config=generation_config,
                    tool_config=tool_config,
                )
                async for chunk in iterator:
                    started = True
                    yield chunk
                return
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except Exception as exc:
                error = self._name_error(exc, during_stream=started, retried=attempt)
                error.mid_stream = started
                if not started and not refreshed and self._token_refused(error):
                    refreshed = True
                    continue
                if started or not self._should_retry(error, attempt):
                    raise error from None
                attempt += 1
                await self._backoff(attempt, exc)
            finally:
                if iterator is not None:
                    await _close_quietly(iterator)

    async def generate(
        self,
        model: str,
        contents: Sequence[Content],
        *,
        system_instruction: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> Reply:
        config = self._config(system_instruction, tools)
        payload = dump_contents(decode_contents(self._repaired(model, [encode_content(c) for c in contents])))

        async def call() -> Reply:
            client = await self._sdk()
            response = await client.aio.models.generate_content(model=model, contents=payload, config=config)
            chunk = _chunk(response)
            return Reply(
                chunk.parts,
                chunk.finish_reason,
                chunk.usage,
                chunk.finish_message,
                chunk.block_reason,
                chunk.block_message,
            )

        reply: Reply = await self._with_retries(call)
        return reply

    async def count_tokens(self, model: str, contents: Sequence[Content]) -> int:
        payload = dump_contents(contents)

        async def call() -> int:
            client = await self._sdk()
            response = await client.aio.models.count_tokens(model=model, contents=payload)
            if response.total_tokens is None:
                raise ModelError("badRequest", "Gemini countTokens returned no totalTokens")
            return int(response.total_tokens)

        total: int = await self._with_retries(call)
        return total

    async def list_models(self) -> list[tuple[str, str, int | None, list[str]]]:
        """The backend's base models (GET models): resource name, display name, input token limit and supported
        generation methods (empty where the backend does not say, as Vertex AI's publisher list)."""

        async def call() -> list[tuple[str, str, int | None, list[str]]]:
            client = await self._sdk()
            pager = await client.aio.models.list(config={"page_size": 100, "query_base": True})
            found: list[tuple[str, str, int | None, list[str]]] = []
            async for model in pager:
                methods = list(model.supported_actions or [])
                found.append((model.name or "", model.display_name or "", model.input_token_limit, methods))
            return found

        listed: list[tuple[str, str, int | None, list[str]]] = await self._with_retries(call)
        return listed

    def warm_count_tokens(self) -> None:
        """Build google-genai's countTokens models now: pydantic builds them on first use (~100 ms of CPU), which
        would otherwise land in the first compacting turn. Blocking: run it off the event loop."""
        if self._count_warm:
            return
        self._count_warm = True
        types = self._types
        try:
            types._CountTokensParameters(model="m", contents=[types.Content(role="user", parts=[types.Part(text="x")])])
            types.CountTokensResponse(total_tokens=1)
        except Exception:  # another google-genai version: the first real call pays instead
            log.debug("could not warm the countTokens models", exc_info=True)

    # -- internals --------------------------------------------------------------------------------
    def _config(self, system_instruction: str | None, tools: list[dict[str, Any]] | None) -> Any:
        types = self._types
        return types.GenerateContentConfig(
            system_instruction=system_instruction,
            tools=tools,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

    async def _with_retries(self, call: Callable[[], Any]) -> Any:
        attempt = 0
        refreshed = False
        while True:
            try:
                return await call()
            except asyncio.CancelledError:
                raise
            except ModelError as exc:
                if not self._should_retry(exc, attempt):
                    raise
                attempt += 1
                await self._backoff(attempt, exc)
            except Exception as exc:
                error = self._name_error(exc, during_stream=False, retried=attempt)
                if not refreshed and self._token_refused(error):
                    refreshed = True
                    continue
                if not self._should_retry(error, attempt):
                    raise error from None
                attempt += 1
                await self._backoff(attempt, exc)

    def _token_refused(self, error: ModelError) -> bool:
        """A 401 with ADC: the token was revoked or expired early. Fetch a new one and try once more."""
        if error.status != 401 or self._auth is None:
            return False
        self._auth.invalidate()
        return True

    def _should_retry(self, error: ModelError, attempt: int) -> bool:
        if attempt >= self.config.retry_attempts:
            return False
        return error.kind in ("timeout", "unreachable") or (error.status in RETRYABLE_STATUS)

    async def _backoff(self, attempt: int, exc: Exception) -> None:
        hinted = _retry_delay_hint(exc)
        base = self.config.retry_initial_delay_ms / 1000.0
        delay = hinted if hinted is not None else base * (2 ** (attempt - 1)) * (0.75 + random.random() / 2)
        delay = min(delay, MAX_RETRY_DELAY_S)
        log.info("model call failed (%s); retry %d in %.2fs", type(exc).__name__, attempt, delay)
        await asyncio.sleep(delay)

    def _name_error(self, exc: Exception, *, during_stream: bool, retried: int) -> ModelError:
        """A ModelError naming the cause; `retried` is how many retries were already made before this failure."""
        if isinstance(exc, ModelError):
            return exc
        from google.genai import errors as genai_errors

        redact = self._redact_key
        if isinstance(exc, genai_errors.APIError | ApiError):
            status = int(exc.code) if exc.code else None
            detail = redact(str(exc.message or exc.status or "no details"))
            retries = f" after {retried} {'retry' if retried == 1 else 'retries'}" if retried else ""
            api = self.service
            if status == 429:
                return ModelError("rateLimit", f"{api} rate limit (429){retries}: {detail}", status)
            if status in (401, 403) and self._auth is not None:
                return ModelError(
                    "auth",
                    f"Vertex AI refused the Application Default Credentials from {self._auth.source} ({status}): "
                    f"{detail}. Check that the account may use Vertex AI in project {self.endpoint.project}, or "
                    f"{LOGIN_HINT}.",
                    status,
                )
            if status in (401, 403):
                return ModelError("auth", f"{api} refused the API key ({status}): {detail}", status)
            if status == 404:
                return ModelError("notFound", f"{api}: model or endpoint not found (404): {detail}", status)
            if status is not None and status >= 500:
                return ModelError("server", f"{api} server error ({status}){retries}: {detail}", status)
            hint = shape_hint(detail) if status == 400 else None
            fix = f" {hint}" if hint else ""
            return ModelError("badRequest", f"{api} rejected the request ({status}): {detail}{fix}", status)
        name = type(exc).__name__
        text = redact(str(exc)) or name
        if isinstance(exc, MalformedEvent):
            return ModelError("stream" if during_stream else "badRequest", text)
        if "Timeout" in name or isinstance(exc, TimeoutError):
            return ModelError(
                "timeout",
                f"Gemini did not answer within {self.config.timeout_ms} ms (requestTimeoutMs) at {self.where}",
            )
        if "Connect" in name or isinstance(exc, ConnectionError | OSError):
            return ModelError("unreachable", f"cannot reach Gemini at {self.where}: {text}")
        dropped = "Protocol" in name or "Incomplete" in name or "Read" in name or "Disconnect" in name
        if during_stream:
            return ModelError("stream", f"The Gemini stream ended unexpectedly: {name}: {text}", mid_stream=True)
        if dropped:  # before any answer arrived: like an unreachable server, worth a retry
            return ModelError(
                "unreachable", f"The connection to Gemini at {self.where} dropped before an answer: {name}: {text}"
            )
        return ModelError("badRequest", f"Gemini call failed: {name}: {text}")


def _redactor(secret: str) -> Callable[[str], str]:
    if not secret or len(secret) < 4:
        return lambda text: text
    pattern = re.compile(re.escape(secret))
    return lambda text: pattern.sub("<redacted>", text)


def _retry_delay_hint(exc: Exception) -> float | None:
    """The server's RetryInfo.retryDelay (e.g. "1.5s") of a 429, if it sent one."""
    details = getattr(exc, "details", None)
    try:
        for item in details["error"]["details"]:  # type: ignore[index]
            delay = item.get("retryDelay")
            if isinstance(delay, str) and delay.endswith("s"):
                return max(0.0, float(delay[:-1]))
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    return None


def _chunk(response: Any) -> Chunk:
    parts: list[Part] = []
    finish: str | None = None
    candidates = response.candidates or []
    if candidates:
        cand = candidates[0]
        if cand.finish_reason is not None:
            finish = str(getattr(cand.finish_reason, "value", cand.finish_reason))
        if cand.content is not None and cand.content.parts:
            raw = [p.model_dump(mode="json", by_alias=True, exclude_none=True) for p in cand.content.parts]
            parts = msgspec.convert(raw, list[Part])
    usage = None
    meta = response.usage_metadata
    if meta is not None:
        usage = Usage(
            meta.prompt_token_count,
            meta.candidates_token_count,
            meta.total_token_count,
            meta.cached_content_token_count,
            meta.thoughts_token_count,
            meta.tool_use_prompt_token_count,
        )
    chunk = Chunk(parts=parts, finish_reason=finish, usage=usage)
    if candidates:
        chunk.finish_message = candidates[0].finish_message
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason is not None and not candidates:
        chunk.block_reason = str(getattr(feedback.block_reason, "value", feedback.block_reason))
        chunk.block_message = feedback.block_reason_message
    return chunk


async def _close_quietly(iterator: Any) -> None:
    close = getattr(iterator, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:
        log.debug("closing the stream failed", exc_info=True)
