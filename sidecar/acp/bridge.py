"""The chat service's Notifier and Progress ports for ACP: chunks, usage and compaction as session updates."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from acp import update_agent_message_text, update_agent_thought_text

from sidecar.acp import updates
from sidecar.acp.outbox import Outbox
from sidecar.core.outcome import HISTORY_CHANGING, Status
from sidecar.protocol.methods import ProgressKind
from sidecar.protocol.types import CompressedParams, RetryParams, TokenUsage, ToolOutputsMaskedParams

log = logging.getLogger(__name__)


class Silent:
    """A Progress that shows nothing (ACP clients draw their own spinner while a prompt runs)."""

    def report(self, message: str) -> None:
        """Nothing to show."""

    def end(self, message: str | None = None) -> None:
        """Nothing to end."""


@dataclass
class Compaction:
    """One compaction attempt as the client sees it: announced, progressing, then finished exactly once."""

    compaction_id: str
    manual: bool
    message: str | None = None
    notice: CompressedParams | None = None
    problem: str | None = None
    finished: bool = False
    #: The usage after the compaction, held until its outcome is said (the message first, as docs/acp.md says).
    usage: TokenUsage | None = None


class CompactionProgress:
    """Progress of one compaction: steps as thought chunks; the outcome is sent by AcpNotifier.finish()."""

    def __init__(self, notifier: AcpNotifier, compaction: Compaction) -> None:
        self._notifier = notifier
        self._compaction = compaction

    def report(self, message: str) -> None:
        """A step of the compaction, as a thought chunk."""
        self._notifier.outbox.put(update_agent_thought_text(f"{message}…\n"))

    def end(self, message: str | None = None) -> None:
        """Keep the outcome message; an automatic compaction is finished once its outcome is announced."""
        self._compaction.message = message
        if not self._compaction.manual:
            # The outcome (sidecar/compressed, or a warning) is announced right after end() in the same step of
            # the event loop: finish once that has happened.
            asyncio.get_running_loop().call_soon(self._notifier.finish, self._compaction)


class AcpNotifier:
    """Implements sidecar.chat.service.Notifier for one ACP session."""

    def __init__(
        self,
        outbox: Outbox,
        compaction_events: Callable[[], bool],
        cancelled: Callable[[], bool],
        snapshot: Callable[[], str | None],
    ) -> None:
        self.outbox = outbox
        self._compaction_events = compaction_events
        self._cancelled = cancelled
        self._snapshot = snapshot
        self.current: Compaction | None = None
        self.manual_next = False
        #: Whether a usage_update went out since the last reset (ACP sends one after every turn and compaction
        #: attempt, also when the numbers did not change; the chat service pushes only changes).
        self.usage_sent = False
        #: The context files loaded and their tokens (sidecar.memory), for usage_update's `_meta`.
        self.memory: tuple[int, int] | None = None
        #: While a command's reply is being said: the usage it changed, sent after the reply (usage_after_reply).
        self._held_usage: list[TokenUsage] | None = None

    # -- Notifier -----------------------------------------------------------------------------------
    def message_delta(self, turn_id: str, text: str) -> None:
        """A chunk of the reply, as agent_message_chunk."""
        self.outbox.put(update_agent_message_text(text))

    def thought_delta(self, turn_id: str, text: str) -> None:
        """A chunk of the thought summary, as agent_thought_chunk."""
        self.outbox.put(update_agent_thought_text(text))

    def token_usage(self, usage: TokenUsage) -> None:
        """The usage as usage_update (used / size)."""
        self.usage_sent = True
        if self._held_usage is not None:
            self._held_usage.append(usage)
            return
        current = self.current
        if current is not None and not current.finished and current.notice is not None:
            current.usage = usage  # sent by finish(), right after "Chat history compressed…"
            return
        self.outbox.put(updates.usage_update(usage, self.memory))

    def compressed(self, notice: CompressedParams) -> None:
        """A compaction's outcome: kept for the running compaction's finish, else said in words."""
        if self.current is not None and not self.current.finished:
            self.current.notice = notice
        else:
            self.say(notice.message)

    def masked(self, notice: ToolOutputsMaskedParams) -> None:
        """Masked tool outputs, said once per masking as an agent message."""
        self.say(notice.message)

    def error(self, message: str) -> None:
        """Errors reach the client as the prompt's JSON-RPC error; only logged here."""
        log.info("error reported to the client as the prompt's JSON-RPC error: %s", message)

    def retry(self, notice: RetryParams) -> None:
        """Say in words that the reply is retried (ACP cannot take streamed text back)."""
        # ACP cannot take back streamed text: the retry is said in words, and the next attempt follows it.
        self.say(
            f"↻ Gemini's reply was unusable ({notice.message}); retrying, attempt {notice.attempt} of "
            f"{notice.max_attempts}."
        )

    def warning(self, message: str) -> None:
        """A warning: kept as the running compaction's problem, else said with ⚠."""
        if self.current is not None and not self.current.finished:
            self.current.problem = message
            return
        self.say(f"⚠ {message}")

    async def progress(self, kind: ProgressKind) -> CompactionProgress | Silent:
        """A compaction's progress becomes thought chunks and (if advertised) compaction_update; others are silent."""
        if kind != "compaction":
            return Silent()
        compaction = Compaction(f"compaction-{uuid.uuid4().hex[:12]}", manual=self.manual_next)
        self.current = compaction
        self.say("Compressing the conversation…")
        if self._compaction_events():
            self.outbox.put(updates.compaction_update(compaction.compaction_id, "in_progress"))
        return CompactionProgress(self, compaction)

    # -- helpers ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def usage_after_reply(self) -> Iterator[None]:
        """Within: a usage change (a /pin) waits until the command's reply is said; the last one is sent after."""
        self._held_usage = []
        try:
            yield
        finally:
            held, self._held_usage = self._held_usage, None
            if held:
                self.outbox.put(updates.usage_update(held[-1], self.memory))

    def say(self, text: str) -> None:
        """One agent message paragraph."""
        self.outbox.put(update_agent_message_text(f"\n\n{text}\n\n"))

    def finish(
        self, compaction: Compaction, *, error: str | None = None, cancelled: bool = False, preview: bool = False
    ) -> None:
        """Announce how a compaction ended (once): a message in words and, if advertised, compaction_update.
        `preview`: a summary was only proposed (the history is unchanged), unless it failed."""
        if compaction.finished:
            return
        compaction.finished = True
        if self.current is compaction:
            self.current = None
        notice = compaction.notice
        summary: str | None = None
        if notice is not None:
            text = notice.message
            status = "completed" if notice.status in HISTORY_CHANGING else "failed"  # else: a failed attempt
            summary = self._snapshot() if notice.status == Status.COMPRESSED else None
        elif cancelled or (error is None and compaction.problem is None and self._cancelled()):
            text, status = "Compression cancelled; the conversation is unchanged.", "cancelled"
        elif error is not None or compaction.problem is not None:
            text, status = (error or compaction.problem or ""), "failed"
        elif preview:
            text, status = "Summary proposed; the conversation is unchanged until you apply it.", "cancelled"
        else:  # nothing to compress (NOOP): the outcome message says so
            text, status = compaction.message or "Nothing to compress.", "failed"
        self.say(text)
        if self._compaction_events():
            failure = None if status in ("completed", "cancelled") else text
            self.outbox.put(updates.compaction_update(compaction.compaction_id, status, summary=summary, error=failure))
        if compaction.usage is not None:
            self.outbox.put(updates.usage_update(compaction.usage, self.memory))
