"""The chat hot path: streamGenerateContent over HTTP with the history's cached JSON bytes, SSE parsed by msgspec."""

# google-genai validates and re-serialises the whole history on every request (about 80 ms of CPU at 1M tokens,
# see docs/performance.md). A turn only ever adds to the history, so the Conversation keeps each content's JSON
# bytes and this module sends them as they are. The rest of the API (generateContent, countTokens) still goes
# through google-genai; both share its HTTP library (httpx2) and the same error naming (sidecar/gemini/client.py).

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from sidecar import __version__
from sidecar.core.history import Part
from sidecar.gemini.routes import Endpoint

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"


class ApiError(Exception):
    """An error answer of the Gemini API (HTTP status, or an error event inside a stream), as google-genai's
    APIError carries it: `code`, `status`, `message`, and `details` (the whole error JSON, with RetryInfo)."""

    def __init__(self, code: int, details: Any) -> None:
        error = details.get("error") if isinstance(details, dict) else None
        error = error if isinstance(error, dict) else (details if isinstance(details, dict) else {})
        self.code = code or _int(error.get("code"))
        self.status: str | None = _str(error.get("status"))
        self.message: str | None = _str(error.get("message"))
        self.details = details
        super().__init__(f"{self.code} {self.status}. {self.message}")


class Usage(msgspec.Struct, rename="camel"):
    """usageMetadata. Fields the sidecar does not use (promptTokensDetails, …) are ignored, never an error."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None
    cached_content_token_count: int | None = None
    thoughts_token_count: int | None = None
    tool_use_prompt_token_count: int | None = None


class _Content(msgspec.Struct):
    parts: list[Part] | None = None


class _Candidate(msgspec.Struct, rename="camel"):
    """A candidate; citationMetadata, groundingMetadata, safetyRatings and the like are ignored."""

    content: _Content | None = None
    finish_reason: str | None = None
    finish_message: str | None = None


class _PromptFeedback(msgspec.Struct, rename="camel"):
    block_reason: str | None = None
    block_reason_message: str | None = None


class _Event(msgspec.Struct, rename="camel"):
    """One SSE event of streamGenerateContent: a GenerateContentResponse, or an error object."""

    candidates: list[_Candidate] | None = None
    prompt_feedback: _PromptFeedback | None = None
    usage_metadata: Usage | None = None
    response_id: str | None = None
    model_version: str | None = None
    error: dict[str, Any] | None = None


_EVENT = msgspec.json.Decoder(_Event)
_encode = msgspec.json.encode


@dataclass
class Chunk:
    """One streamed piece of a reply (an event's first candidate): its parts, and on the last chunk the finish
    reason and usage."""

    parts: list[Part] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    finish_message: str | None = None
    #: promptFeedback.blockReason: the prompt was refused, and no candidate follows.
    block_reason: str | None = None
    block_message: str | None = None
    response_id: str | None = None
    model_version: str | None = None

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if p.text and not p.thought)


def request_pieces(
    contents: Sequence[bytes],
    system_instruction: str | None,
    tools: list[dict[str, Any]] | None,
    generation_config: dict[str, Any] | None = None,
    tool_config: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    """The request body in pieces: the contents' cached JSON, joined by commas, inside the request object.
    `generation_config` is REST JSON (camelCase), as google-genai writes a GenerateContentConfig's fields;
    `tool_config` too (e.g. {"functionCallingConfig": {"mode": "NONE"}})."""
    yield b'{"contents":['
    for index, item in enumerate(contents):
        if index:
            yield b","
        yield item
    tail: dict[str, Any] = {}
    if system_instruction is not None:
        tail["systemInstruction"] = {"parts": [{"text": system_instruction}], "role": "user"}
    if tools:
        tail["tools"] = tools
    if tool_config:
        tail["toolConfig"] = tool_config
    tail["generationConfig"] = generation_config or {}
    yield b"]," + _encode(tail)[1:]


def models_path(model: str) -> str:
    """`models/<name>` (as google-genai names a Gemini API model), unless the name already says where it is."""
    from sidecar.gemini.routes import GEMINI_API_VERSION

    return Endpoint("gemini", DEFAULT_BASE_URL, GEMINI_API_VERSION).model_path(model)


class GeminiStream:
    """One HTTP connection pool for streamed chat requests to one endpoint."""

    def __init__(self, endpoint: Endpoint, timeout_ms: int) -> None:
        self.endpoint = endpoint
        self._headers = {"content-type": "application/json", "user-agent": f"sidecar/{__version__}"}
        if endpoint.api_key is not None:
            self._headers["x-goog-api-key"] = endpoint.api_key
        import httpx2  # with google-genai, after initialize: not a start-up cost

        self._client = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout_ms / 1000.0))

    async def aclose(self) -> None:
        await self._client.aclose()

    async def stream(
        self,
        model: str,
        contents: Sequence[bytes],
        system_instruction: str | None,
        tools: list[dict[str, Any]] | None,
        *,
        auth_headers: dict[str, str] | None = None,
        generation_config: dict[str, Any] | None = None,
        tool_config: dict[str, Any] | None = None,
    ) -> AsyncIterator[Chunk]:
        """POST the request and yield its events. Raises ApiError for an error answer, httpx errors as they are."""
        # One joined body, written at once: measured faster than passing the cached pieces to the socket one by
        # one (each write waits for the socket to drain), the copy included (bench target 2, docs/performance.md).
        body = b"".join(request_pieces(contents, system_instruction, tools, generation_config, tool_config))
        url = self.endpoint.url(model, "streamGenerateContent") + "?alt=sse"
        headers = self._headers if not auth_headers else {**self._headers, **auth_headers}
        request = self._client.build_request("POST", url, headers=headers, content=body)
        response = await self._client.send(request, stream=True)
        try:
            if response.status_code != 200:
                body = await response.aread()
                raise ApiError(response.status_code, _error_json(body, response.reason_phrase))
            async for event in sse_events(response.aiter_bytes()):
                yield event
        finally:
            await response.aclose()


async def sse_events(chunks: AsyncIterator[bytes]) -> AsyncIterator[Chunk]:
    """Server-sent events: `data:` lines up to a blank line make one JSON event. Other lines (an error the server
    wrote as plain JSON instead of SSE) are gathered and read as one error object at the end."""
    pending = b""
    data: list[bytes] = []
    other: list[bytes] = []
    async for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            event = _line(line.rstrip(b"\r"), data, other)
            if event is not None:
                yield event
    for line in (pending.rstrip(b"\r"), b""):
        event = _line(line, data, other)
        if event is not None:
            yield event
    if any(part.strip() for part in other):
        raise ApiError(0, _error_json(b"\n".join(other), "a response that is not a stream of events"))


def _line(line: bytes, data: list[bytes], other: list[bytes]) -> Chunk | None:
    if not line:
        if not data:
            return None
        payload = b"\n".join(data)
        data.clear()
        return _event(payload)
    if line.startswith(b"data:"):
        data.append(line[6:] if line.startswith(b"data: ") else line[5:])
    elif not line.startswith((b":", b"event:", b"id:", b"retry:")):
        other.append(line)
    return None


def _event(payload: bytes) -> Chunk:
    try:
        event = _EVENT.decode(payload)
    except msgspec.DecodeError as exc:
        raise MalformedEvent(f"Gemini sent an event that is not a response ({exc}): {payload[:200]!r}") from None
    if event.error is not None:
        raise ApiError(_int(event.error.get("code")), {"error": event.error})
    chunk = Chunk(usage=event.usage_metadata, response_id=event.response_id, model_version=event.model_version)
    if event.candidates:
        first = event.candidates[0]
        chunk.finish_reason, chunk.finish_message = first.finish_reason, first.finish_message
        if first.content is not None and first.content.parts:
            chunk.parts = first.content.parts
    feedback = event.prompt_feedback
    if feedback is not None and feedback.block_reason and not event.candidates:
        # No candidates: the prompt was blocked. The finish reason says so too (ACP turns it into a refusal).
        chunk.block_reason, chunk.block_message = feedback.block_reason, feedback.block_reason_message
        chunk.finish_reason = f"PROMPT_BLOCKED_{feedback.block_reason}"
    return chunk


class MalformedEvent(Exception):
    """An SSE event whose JSON is not a GenerateContentResponse."""


def _error_json(body: bytes, fallback: str) -> Any:
    try:
        return msgspec.json.decode(body)
    except msgspec.DecodeError:
        text = body.decode("utf-8", "replace").strip()
        return {"message": text[:500] or fallback, "status": fallback}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
