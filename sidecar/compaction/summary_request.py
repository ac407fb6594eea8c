"""The summary request: the chat's own request (system instruction, tools, history prefix byte for byte) with the
compression prompt as its last user turn, so that the API's prompt cache of the chat serves it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sidecar.config.settings import Settings
from sidecar.core.content_json import encode_content
from sidecar.core.history import Content, Part, text_content
from sidecar.core.models import compression_model_alias
from sidecar.core.progress import Progress
from sidecar.core.prompts import summary_instruction, summary_turn_parts, verify_instruction
from sidecar.core.snapshot import extract_snapshot, has_snapshot, missing_facts
from sidecar.gemini.attempts import Attempts, RoundReply, stream_checked
from sidecar.gemini.client import ModelClient, ModelError

log = logging.getLogger(__name__)

#: Model-config alias (reference modelStringToModelConfigAlias) -> the model that alias resolves to.
ALIAS_MODELS = {
    "chat-compression-3-pro": "gemini-3-pro-preview",
    "chat-compression-3-flash": "gemini-3-flash-preview",
    "chat-compression-3.1-flash-lite": "gemini-3.1-flash-lite",
    "chat-compression-2.5-flash-lite": "gemini-2.5-flash-lite",
    "chat-compression-2.5-pro": "gemini-2.5-pro",
    "chat-compression-2.5-flash": "gemini-2.5-flash",
    "chat-compression-default": "gemini-3-pro-preview",
}


def compression_model(settings: Settings) -> str:
    """The summarizer model: the setting, else what the reference's alias for the chat model resolves to."""
    if settings.compression_model:
        return settings.compression_model
    return ALIAS_MODELS[compression_model_alias(settings.model)]


#: The retry after the model called a tool instead of writing the snapshot: function calling off for that request
#: (the tool declarations stay, so the prompt is still the chat's; no tool runs).
NO_FUNCTION_CALLS: dict[str, Any] = {"functionCallingConfig": {"mode": "NONE"}}


@dataclass(frozen=True)
class ChatFrame:
    """What a chat request sends beside its contents: the system instruction (agent prompt, memory, pinned facts)
    and the tool declarations, as the chat builds them now (sidecar.chat.live.LiveConversation.chat_frame)."""

    system_instruction: str | None
    tools: list[dict[str, Any]] | None


#: Where the compactor asks for the chat's frame; none wired (a bare compactor): no system instruction, no tools.
ChatFrameSource = Callable[[], ChatFrame]
BARE_FRAME = ChatFrame(None, None)


def summary_turn(texts: Sequence[str]) -> Content:
    """The last user turn of a summary request: one text part each (compression prompt, then the pass's ask)."""
    return Content(role="user", parts=[Part(text=t) for t in texts])


@dataclass
class SummaryAsker:
    """The two passes' requests on one prefix: pass 1 is prefix + summary turn; pass 2 is pass 1's request + the
    draft + the critique, so it too starts with the chat's prefix (its uncached part is only the draft and the
    critique). Once the model called a tool, every later request goes with function calling off."""

    client: ModelClient
    model: str
    frame: ChatFrame
    prefix: list[bytes]
    attempts: Attempts
    tool_config: dict[str, Any] | None = None
    #: Replies that called a tool instead of answering (none ran).
    tool_calls_refused: int = 0

    async def ask(self, tail: Sequence[Content]) -> str:
        """The reply's text to prefix + `tail` (thoughts left out). A reply calling a tool is not used and no tool
        runs: the same request goes once more with function calling off."""
        wire = [*self.prefix, *(encode_content(c) for c in tail)]
        reply = await self._send(wire)
        if any(p.function_call is not None for p in reply.parts) and self.tool_config is None:
            names = ", ".join(p.function_call.name or "?" for p in reply.parts if p.function_call is not None)
            log.warning(
                "the summarizer called a tool (%s) instead of writing the snapshot: asking again with "
                "function calling off (no tool ran)",
                names,
            )
            self.tool_calls_refused += 1
            self.tool_config = NO_FUNCTION_CALLS
            reply = await self._send(wire)
        return "".join(p.text for p in reply.parts if p.text and not p.thought)

    async def _send(self, wire: list[bytes]) -> RoundReply:
        reply = await stream_checked(
            self.client,
            self.model,
            wire,
            system_instruction=self.frame.system_instruction,
            tools=self.frame.tools,
            attempts=self.attempts,
            on_chunk=lambda _chunk: None,
            current=[],
            tool_config=self.tool_config,
        )
        usage = reply.usage
        if usage is not None and usage.prompt_token_count:
            log.info(
                "summary request: %d prompt tokens, %s cached",
                usage.prompt_token_count,
                usage.cached_content_token_count if usage.cached_content_token_count is not None else "none",
            )
        return reply


def model_turn(text: str) -> Content:
    return text_content("model", text)


async def two_passes(
    asker: SummaryAsker,
    to_compress: list[Content],
    approved_plan_path: str | None,
    instructions: str | None,
    progress: Progress | None,
    facts: str | None,
    rebuilt_head: bool,
) -> str | None:
    """Pass 1 asks for the snapshot; the deterministic check lists what it dropped of `to_compress`; pass 2 reviews
    it. The verified snapshot, else pass 1's; None when neither is valid. `facts`: the pinned facts both passes keep
    word for word. Raises ModelError (blocked, or no usable reply from pass 1)."""
    pinned = f"\n\n{facts}" if facts else ""
    if progress is not None:
        progress.report("Summarizing the oldest 70% of the conversation (pass 1 of 2)")
    ask = summary_instruction(has_snapshot(to_compress), instructions) + pinned
    turn = summary_turn(summary_turn_parts(approved_plan_path, ask, rebuilt_head=rebuilt_head))
    first = await asker.ask([turn])
    first_snapshot = extract_snapshot(first)
    if first_snapshot is None:
        log.warning("pass 1 returned no valid <state_snapshot> (%d chars)", len(first))
    missing = missing_facts(to_compress, first_snapshot or "")
    if progress is not None:
        progress.report("Verifying the summary (pass 2 of 2)")
    previous = first_snapshot or first.strip() or "(no snapshot was produced)"
    critique = text_content("user", verify_instruction(missing, instructions) + pinned)
    try:
        second = await asker.ask([turn, model_turn(previous), critique])
    except ModelError as exc:
        if first_snapshot is None or exc.kind not in ("invalidReply", "blocked"):
            raise
        log.warning("pass 2 gave no usable reply (%s); keeping pass 1's snapshot", exc.message)
        return first_snapshot
    second_snapshot = extract_snapshot(second)
    if second_snapshot is None and second.strip():
        log.warning("pass 2 returned no valid <state_snapshot>; keeping pass 1's")
    return second_snapshot or first_snapshot
