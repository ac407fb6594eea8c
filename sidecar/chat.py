"""The chat service: runs a user turn against the model, streams deltas, keeps history valid, reports usage."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from sidecar import errors
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, Part, text_content
from sidecar.model_client import Chunk, ModelClient, ModelError
from sidecar.settings import Settings
from sidecar.wire import SendMessageResult, TokenUsage

log = logging.getLogger(__name__)


class Notifier(Protocol):
    """What the chat service tells the editor while it works (implemented by the server)."""

    def message_delta(self, turn_id: str, text: str) -> None: ...
    def token_usage(self, usage: TokenUsage) -> None: ...
    def error(self, message: str) -> None: ...


class Progress(Protocol):
    def report(self, message: str) -> None: ...


@dataclass
class TurnOutcome:
    text: str
    finish_reason: str | None


class ChatService:
    """Owns the conversation; one turn or compaction at a time, in arrival order."""

    def __init__(
        self,
        settings: Callable[[], Settings],
        client: Callable[[], Awaitable[ModelClient]],
        notifier: Notifier,
    ) -> None:
        self._settings = settings
        self._client = client
        self._notify = notifier
        self.conversation = Conversation(new_session_id())
        #: Serialises turns and compactions on the history (asyncio.Lock wakes waiters in FIFO order).
        self.lock = asyncio.Lock()

    # -- usage ----------------------------------------------------------------------------------------
    def usage(self) -> TokenUsage:
        settings = self._settings()
        conv = self.conversation
        limit = settings.effective_token_limit()
        percent = round(100.0 * conv.last_prompt_tokens / limit, 1) if limit else 0.0
        return TokenUsage(
            session_id=conv.session_id,
            model=settings.model,
            prompt_token_count=conv.last_prompt_tokens,
            token_limit=limit,
            percent_used=percent,
            compression_threshold=settings.compression_threshold,
            source=conv.usage_source,
        )

    def push_usage(self) -> None:
        self._notify.token_usage(self.usage())

    # -- turns ----------------------------------------------------------------------------------------
    async def send_message(self, text: str, progress: Progress | None = None) -> SendMessageResult:
        turn_id = f"turn-{uuid.uuid4().hex[:12]}"
        async with self.lock:
            try:
                outcome = await self._run_turn(turn_id, text, progress)
            finally:
                self.push_usage()
        return SendMessageResult(
            turn_id=turn_id, text=outcome.text, finish_reason=outcome.finish_reason, usage=self.usage()
        )

    async def _run_turn(self, turn_id: str, text: str, progress: Progress | None) -> TurnOutcome:
        settings = self._settings()
        conv = self.conversation
        conv.append(text_content("user", text))
        client = await self._client()
        streamed: list[Part] = []
        finish: str | None = None
        prompt_tokens: int | None = None
        if progress is not None:
            progress.report("Waiting for Gemini…")
        try:
            async for chunk in client.stream(settings.model, conv.history):
                self._emit(turn_id, chunk)
                streamed.extend(chunk.parts)
                finish = chunk.finish_reason or finish
                if chunk.usage is not None and chunk.usage.prompt_token_count is not None:
                    prompt_tokens = chunk.usage.prompt_token_count
        except asyncio.CancelledError:
            # Keep what the user already saw; drop half-made calls so no call dangles without a response.
            self._keep_reply(streamed, text_only=True)
            log.info("turn %s cancelled after %d parts", turn_id, len(streamed))
            raise
        except ModelError as exc:
            # The user's message stays in the history: nothing they wrote is lost.
            self._keep_reply(streamed, text_only=True)
            self._notify.error(exc.message)
            raise errors.SidecarError(
                errors.MODEL_ERROR, exc.message, {"kind": exc.kind, "status": exc.status, "turnId": turn_id}
            ) from None
        reply = self._keep_reply(streamed, text_only=False)
        if prompt_tokens is not None:
            conv.record_api_usage(prompt_tokens)
        return TurnOutcome(text=_text_of(reply), finish_reason=finish)

    def _emit(self, turn_id: str, chunk: Chunk) -> None:
        if chunk.text:
            self._notify.message_delta(turn_id, chunk.text)

    def _keep_reply(self, parts: list[Part], *, text_only: bool) -> list[Part]:
        kept = merge_text_parts([p for p in parts if not text_only or (p.text is not None)])
        if kept:
            self.conversation.append(Content(role="model", parts=kept))
        return kept


def merge_text_parts(parts: list[Part]) -> list[Part]:
    """Join consecutive plain text chunks of a streamed reply into one part (as the reference does)."""
    merged: list[Part] = []
    for part in parts:
        plain = part.text is not None and not part.thought and part.thought_signature is None
        if plain and merged:
            last = merged[-1]
            if last.text is not None and not last.thought and last.thought_signature is None:
                merged[-1] = Part(text=last.text + (part.text or ""))
                continue
        merged.append(part)
    return [p for p in merged if not (p.text == "" and p.function_call is None and p.thought_signature is None)]


def _text_of(parts: list[Part]) -> str:
    return "".join(p.text for p in parts if p.text and not p.thought)


def new_session_id() -> str:
    return str(uuid.uuid4())
