"""Talking to Gemini: chat streams on the cached-bytes path, other calls through google-genai; retries, named errors."""

from __future__ import annotations

import asyncio
import logging
import random
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from sidecar.core.history import Content, Part, dump_contents
from sidecar.gemini.stream import ApiError, Chunk, GeminiStream, MalformedEvent, Usage

log = logging.getLogger(__name__)

API_VERSION = "v1beta"
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})
MAX_RETRY_DELAY_S = 30.0

ErrorKind = Literal["rateLimit", "auth", "notFound", "badRequest", "server", "timeout", "unreachable", "stream"]


class ModelError(Exception):
    """A failed model call, with a message that names the cause and never contains the API key."""

    def __init__(self, kind: ErrorKind, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status


@dataclass
class Reply:
    """A whole (non-streamed) reply."""

    parts: list[Part]
    finish_reason: str | None
    usage: Usage | None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.text and not p.thought)


@dataclass(frozen=True)
class ClientConfig:
    api_key: str
    base_url: str | None
    timeout_ms: int
    retry_attempts: int
    retry_initial_delay_ms: int


class ModelClient:
    """Chat streams on our HTTP path (sidecar/gemini/stream.py), other calls on one google-genai async client;
    every call retried on 408/429/5xx/timeouts before any output arrived."""

    def __init__(self, config: ClientConfig) -> None:
        from google import genai
        from google.genai import types

        self.config = config
        self._types = types
        options = types.HttpOptions(api_version=API_VERSION, timeout=config.timeout_ms)
        if config.base_url:
            options.base_url = config.base_url
        self._client = genai.Client(api_key=config.api_key, http_options=options)
        self._stream = GeminiStream(config.api_key, config.base_url, API_VERSION, config.timeout_ms)
        self._redact_key = _redactor(config.api_key)

    @property
    def where(self) -> str:
        return self.config.base_url or "https://generativelanguage.googleapis.com"

    async def aclose(self) -> None:
        for close in (self._stream.aclose, self._client.aio.aclose):
            try:
                await close()
            except Exception:  # closing is best effort
                log.debug("closing an HTTP client failed", exc_info=True)

    # -- calls ------------------------------------------------------------------------------------
    async def stream(
        self,
        model: str,
        contents: Sequence[bytes],
        *,
        system_instruction: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> AsyncIterator[Chunk]:
        """Stream a reply to `contents`, each a content's JSON bytes (Conversation.wire()). Retries happen only
        before the first chunk; a later failure raises ModelError."""
        attempt = 0
        while True:
            started = False
            iterator: Any = None
            try:
                iterator = self._stream.stream(model, contents, system_instruction, tools)
                async for chunk in iterator:
                    started = True
                    yield chunk
                return
            except (asyncio.CancelledError, GeneratorExit):
                raise
            except Exception as exc:
                error = self._name_error(exc, during_stream=started, retried=attempt)
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
        payload = dump_contents(contents)

        async def call() -> Reply:
            response = await self._client.aio.models.generate_content(
                model=model, contents=payload, config=config
            )
            chunk = _chunk(response)
            return Reply(chunk.parts, chunk.finish_reason, chunk.usage)

        reply: Reply = await self._with_retries(call)
        return reply

    async def count_tokens(self, model: str, contents: Sequence[Content]) -> int:
        payload = dump_contents(contents)

        async def call() -> int:
            response = await self._client.aio.models.count_tokens(model=model, contents=payload)
            if response.total_tokens is None:
                raise ModelError("badRequest", "Gemini countTokens returned no totalTokens")
            return int(response.total_tokens)

        total: int = await self._with_retries(call)
        return total

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
        while True:
            try:
                return await call()
            except (asyncio.CancelledError, ModelError):
                raise
            except Exception as exc:
                error = self._name_error(exc, during_stream=False, retried=attempt)
                if not self._should_retry(error, attempt):
                    raise error from None
                attempt += 1
                await self._backoff(attempt, exc)

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
            if status == 429:
                return ModelError("rateLimit", f"Gemini API rate limit (429){retries}: {detail}", status)
            if status in (401, 403):
                return ModelError("auth", f"Gemini API refused the API key ({status}): {detail}", status)
            if status == 404:
                return ModelError("notFound", f"Gemini API: model or endpoint not found (404): {detail}", status)
            if status is not None and status >= 500:
                return ModelError("server", f"Gemini API server error ({status}){retries}: {detail}", status)
            return ModelError("badRequest", f"Gemini API rejected the request ({status}): {detail}", status)
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
            return ModelError("stream", f"The Gemini stream ended unexpectedly: {name}: {text}")
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
        usage = Usage(meta.prompt_token_count, meta.candidates_token_count, meta.total_token_count)
    return Chunk(parts=parts, finish_reason=finish, usage=usage)


async def _close_quietly(iterator: Any) -> None:
    close = getattr(iterator, "aclose", None)
    if close is None:
        return
    try:
        await close()
    except Exception:
        log.debug("closing the stream failed", exc_info=True)
