"""The check before every model request of a turn: automatic compaction, the overflow guard, responses cut to fit."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from sidecar.compaction.service import auto_compaction_due
from sidecar.config.settings import Settings
from sidecar.core.conversation import Conversation
from sidecar.core.history import Part
from sidecar.core.ide_context import context_turn_text
from sidecar.core.media_tokens import REQUEST_MAX_BYTES
from sidecar.core.request_size import SaveOutput, fit_responses, parts_upper_tokens, wire_upper_tokens
from sidecar.core.tokens import estimate_tokens
from sidecar.protocol import error_info, errors
from sidecar.protocol.ide import OpenFile
from sidecar.session import IdeState

log = logging.getLogger(__name__)

#: Kept free below the window: the local measure of the part not yet counted by the API is an approximation.
SAFETY_FRACTION = 0.02

Compact = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class _Counted:
    """The API's promptTokenCount for a request, and which history it counted (its length and last item)."""

    tokens: int
    length: int
    last: bytes | None


def overflow_error(estimated: int, remaining: int, limit: int) -> errors.SidecarError:
    """The reference's words for a message that cannot fit (docs/compaction.md)."""
    message = (
        f"Sending this message ({estimated:,} tokens) might exceed the context window limit "
        f"({max(remaining, 0):,} tokens left)."
    )
    if remaining < 0.75 * limit:
        message += ' Try a shorter message, or run "Compress conversation" to make room.'
    return errors.SidecarError(
        errors.CONTEXT_OVERFLOW,
        message,
        error_info.ContextOverflowData(estimated_request_token_count=estimated, remaining_token_count=remaining),
    )


class RequestBudget:
    """Sizes each request before it is sent: the last prompt size the API reported plus what was added since
    (measured from above), else the whole request measured from above. One instance per conversation owner."""

    def __init__(self, save_output: SaveOutput) -> None:
        self._save = save_output
        self._counted: _Counted | None = None
        self._sending: tuple[int, bytes | None] = (0, None)

    # -- what the API counted ---------------------------------------------------------------------------
    def sending(self, conv: Conversation) -> None:
        """Call right before a model request with `conv` as the request's contents."""
        wire = conv.wire()
        self._sending = (len(wire), wire[-1] if wire else None)

    def answered(self, conv: Conversation) -> None:
        """Call after the request's reply was kept: its promptTokenCount (if the API gave one) becomes the base."""
        if conv.usage_source == "api":
            length, last = self._sending
            self._counted = _Counted(conv.last_prompt_tokens, length, last)

    def history_tokens(self, conv: Conversation, overhead: int) -> int:
        """What the next request's history, system instruction and tools take, measured from above."""
        wire = conv.wire()
        counted = self._counted
        if counted is not None and 0 < counted.length <= len(wire) and wire[counted.length - 1] is counted.last:
            start, total = counted.length, counted.tokens
        elif conv.usage_source == "api":  # counted by the API (a resumed count, a recount): for the whole history
            return conv.last_prompt_tokens
        else:  # never counted, or the history was replaced since (compaction, undo, resume)
            start, total = 0, overhead + 1
        for i in range(start, len(wire)):
            total += wire_upper_tokens(wire[i], conv.content_tokens(i))
        # The conversation's own figure may know more (a count recorded before a resume, an adjustment for pins).
        return max(total, conv.last_prompt_tokens)

    # -- the checks -------------------------------------------------------------------------------------
    async def _maybe_compact(
        self, conv: Conversation, settings: Settings, overhead: int, new: int, compact: Compact, *, mid_turn: bool
    ) -> int:
        """At most one automatic compaction: at the threshold, or when the request would not fit otherwise.
        Returns the history's size afterwards."""
        limit = settings.effective_token_limit()
        history = self.history_tokens(conv, overhead)
        # at the threshold (unless a pause after an undo holds), or when the request would not fit otherwise
        due = auto_compaction_due(conv, settings, history) and not conv.compaction_postponed
        if due or history + new > self._room(limit):
            # The compactor starts from the request's size. Mid-turn it counts locally: the history ends with calls
            # whose responses are not in yet, which countTokens need not accept.
            before = (conv.wire(), conv.last_prompt_tokens, conv.usage_source, conv.estimate_reason)
            if mid_turn or conv.last_prompt_tokens < settings.compression_threshold * limit:
                source = "estimate" if mid_turn else conv.usage_source
                conv.set_prompt_tokens(max(conv.last_prompt_tokens, history + new), source)
            await compact()
            if conv.wire() is before[0]:  # nothing was replaced: the usage is what it was
                conv.set_prompt_tokens(before[1], before[2], before[3])
            history = self.history_tokens(conv, overhead)
        return history

    @staticmethod
    def _room(limit: int) -> int:
        return int(limit * (1 - SAFETY_FRACTION))

    async def before_message(
        self,
        conv: Conversation,
        settings: Settings,
        overhead: int,
        new_tokens: Callable[[], tuple[int, int]],
        compact: Compact,
    ) -> None:
        """Before a turn's first request: `new_tokens()` is what the turn adds (its IDE context turn and the user's
        message; recomputed after a compaction, which makes the next context turn a full one), measured from
        above and as the reference estimates it (the number the user is shown). Raises a CONTEXT_OVERFLOW
        SidecarError, with nothing sent, when the message cannot fit even after compaction."""
        limit = settings.effective_token_limit()
        new, shown = new_tokens()
        if overhead + new > self._room(limit):  # no compaction could make room: refuse at once, nothing sent
            raise overflow_error(shown, limit - self.history_tokens(conv, overhead), limit)
        history = await self._maybe_compact(conv, settings, overhead, new, compact, mid_turn=False)
        new, shown = new_tokens()
        if history + new > self._room(limit):
            raise overflow_error(shown, limit - history, limit)

    async def before_continuation(
        self,
        conv: Conversation,
        settings: Settings,
        overhead: int,
        responses: Sequence[Part],
        compact: Compact,
    ) -> tuple[list[Part], bool]:
        """Before a tool continuation, with the responses not yet in the history (it ends with their calls):
        compaction if due, then the responses cut to what is left. Returns (responses, fits)."""
        limit = settings.effective_token_limit()
        new = parts_upper_tokens("user", responses)
        history = await self._maybe_compact(conv, settings, overhead, new, compact, mid_turn=True)
        room_bytes = media_room_bytes(conv, overhead)
        fitted, fits = fit_responses(responses, self._room(limit) - history, self._save, room_bytes)
        if fitted != list(responses):
            log.info("tool responses cut to fit the context window (%d tokens left)", self._room(limit) - history)
        return fitted, fits


def media_room_bytes(conv: Conversation, overhead: int) -> int:
    """What the API's request size limit leaves for the media of the next request: 90% of it, less the history's
    JSON and the system instruction and tools (their tokens × 4, from above)."""
    return int(REQUEST_MAX_BYTES * 0.9) - sum(len(item) for item in conv.wire()) - 4 * overhead


def new_turn_tokens(conv: Conversation, ide: IdeState, editor: list[OpenFile] | None, text: str) -> tuple[int, int]:
    """What a turn adds before its first request, from above and as the reference estimates it: the IDE context
    turn it will carry (as the chat service adds it: full after a history replacement, else a delta; none while a
    call is pending) and the user's message."""
    upper, estimate = parts_upper_tokens("user", [Part(text=text)]), estimate_tokens([Part(text=text)])
    editor = ide.current if editor is None else editor
    if conv.tool_call_pending() or (editor is None and not ide.changed_on_disk):
        return upper, estimate
    context = context_turn_text(
        editor if editor is not None else [],
        ide.last_sent,
        force_full=conv.force_full_ide_context or not len(conv),
        changed_on_disk=sorted(ide.changed_on_disk),
    )
    if context is None:
        return upper, estimate
    return upper + parts_upper_tokens("user", [Part(text=context)]), estimate + estimate_tokens([Part(text=context)])
