"""Compaction without waiting: a summary of the history's fixed prefix is prepared in the background, then applied."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from sidecar.compaction.service import Compactor, Summary, compression_model
from sidecar.config.settings import Settings
from sidecar.core.conversation import Conversation
from sidecar.core.outcome import Outcome, Status, Trigger
from sidecar.core.progress import Progress
from sidecar.gemini.client import ModelError
from sidecar.protocol.types import SummaryPreparation
from sidecar.session import Session

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Basis:
    """What a preparation summarises: the history as it was when it started, and the settings it was made with."""

    frozen: Conversation
    key: tuple[str, str, str | None]


def _key(settings: Settings) -> tuple[str, str, str | None]:
    """The settings a prepared summary depends on: chat model, summarizer model, approved plan."""
    return settings.model, compression_model(settings), settings.approved_plan_path


class BackgroundCompaction:
    """Prepares at most one summary at a time, for the live conversation, while the user keeps chatting.

    History only grows at its end, so a summary of its first items stays valid as long as those items are still
    its first items (checked by content, not trusted). Everything that replaces the history (new session, resume,
    undo, a compaction, a rewind, a fork) or changes the models or the pinned facts discards the preparation.
    Nothing is recorded here: an applied summary is recorded by the chat service like any compaction.
    """

    def __init__(self, session: Session, compactor: Compactor, on_change: Callable[[], None]) -> None:
        self._session = session
        self._compactor = compactor
        #: Called when the state the editor shows changes ("preparing summary" / "summary ready").
        self._on_change = on_change
        self._task: asyncio.Task[None] | None = None
        self._basis: _Basis | None = None
        self._summary: Summary | None = None
        self._asking = False  # past the checks: the hooks ran, the model is being asked
        #: A preparation failed: the next compaction runs in the turn (latch rules as today); none starts before.
        self._failed = False
        #: (session, history length) where there was nothing worth summarising: not re-examined until it grows.
        self._nothing_at: tuple[str, int] | None = None

    def _settings(self) -> Settings:
        return self._session.settings

    # -- state -----------------------------------------------------------------------------------------
    def state(self, conv: Conversation) -> SummaryPreparation:
        """What the status bar says about the preparation for `conv`."""
        if not self._valid_for(conv):
            return "none"
        if self._summary is not None:
            return "ready"
        return "preparing" if self._asking else "none"

    @property
    def in_flight(self) -> bool:
        """A preparation is running (its model calls or hooks may be under way)."""
        return self._task is not None and not self._task.done()

    def _valid_for(self, conv: Conversation) -> bool:
        basis = self._basis
        if basis is None or basis.frozen.session_id != conv.session_id or basis.key != _key(self._settings()):
            return False
        if basis.frozen.pins != conv.pins:  # the summarizer was told to keep the pinned facts of that moment
            return False
        prefix = basis.frozen.wire()
        return conv.starts_with(prefix[: self._summary.split] if self._summary is not None else prefix)

    def check(self, conv: Conversation) -> None:
        """Discard a preparation that no longer fits `conv` or the settings (e.g. the model changed)."""
        if self._basis is not None and (not self._settings().background_compaction or not self._valid_for(conv)):
            log.info("discarding the summary prepared in the background: the history or the settings changed")
            self.discard()

    # -- starting ----------------------------------------------------------------------------------------
    def maybe_start(self, conv: Conversation) -> None:
        """After a turn: start preparing when usage reached the preparation point and nothing is prepared yet."""
        self.check(conv)
        settings = self._settings()
        if not settings.background_compaction or self._basis is not None or self._failed:
            return
        if not len(conv) or conv.has_failed_compression_attempt:  # latched: automatic attempts only truncate
            return
        point = settings.compression_prepare_ratio * settings.compression_threshold * settings.effective_token_limit()
        if conv.last_prompt_tokens < point or self._nothing_at == (conv.session_id, len(conv)):
            return
        basis = _Basis(conv.frozen_copy(), _key(settings))  # the prefix is fixed now, before the next turn adds
        self._basis = basis
        self._task = asyncio.create_task(self._prepare(basis), name="prepare-compaction-summary")

    async def _prepare(self, basis: _Basis) -> None:
        started = time.monotonic()

        def asking() -> None:
            self._asking = True
            self._on_change()

        try:
            result: Summary | Status = await self._compactor.prepare(basis.frozen, on_start=asking)
        except ModelError as exc:
            log.warning(
                "preparing a summary in the background failed (the next compaction runs in its turn): %s", exc.message
            )
            result = Status.COMPRESSION_FAILED_EMPTY_SUMMARY
        except asyncio.CancelledError:
            log.info("the summary being prepared in the background was cancelled")
            raise
        except Exception:
            log.exception("preparing a summary in the background failed")
            result = Status.COMPRESSION_FAILED_EMPTY_SUMMARY
        finally:
            if self._task is asyncio.current_task():
                self._task = None
        if self._basis is not basis:
            return  # discarded meanwhile
        was_asking, self._asking = self._asking, False
        if isinstance(result, Summary):
            self._summary = result
            log.info(
                "summary of the first %d messages prepared in the background in %.1f s",
                result.split,
                time.monotonic() - started,
            )
        else:
            self._basis = None
            if result is Status.NOOP:
                self._nothing_at = (basis.frozen.session_id, len(basis.frozen))
            else:
                self._failed = True
                log.warning("no valid summary was prepared in the background; the next compaction runs in its turn")
        if was_asking:
            self._on_change()

    # -- using ---------------------------------------------------------------------------------------------
    async def compact(
        self,
        conv: Conversation,
        *,
        force: bool,
        trigger: Trigger,
        instructions: str | None = None,
        progress: Progress | None = None,
    ) -> Outcome:
        """One compaction attempt (the caller holds the conversation's lock): a prepared summary when there is a
        valid one (awaited when still in flight), else the usual synchronous flow. Focus text always summarises
        afresh. Raises ModelError like Compactor.compress."""
        settings = self._settings()
        summary = await self._take(conv, progress) if settings.background_compaction and not instructions else None
        self.discard()  # the history is about to change (or be re-examined): a later preparation starts afresh
        if summary is not None:
            if progress is not None:
                progress.report("Applying the summary prepared in the background")
            outcome = await self._compactor.apply(conv, summary, force=force, trigger=trigger, progress=progress)
            limit = settings.compression_threshold * settings.effective_token_limit()
            accepted = outcome.status is Status.COMPRESSED and (force or outcome.new < limit)
            if accepted or outcome.status is Status.COMPRESSION_FAILED_TOKEN_COUNT_ERROR:
                return outcome
            # Not accepted (too little saved, or still over the threshold): the prepared prefix is smaller than
            # what the usual flow would summarise now, so that flow decides — with today's status and latch rules.
            log.info(
                "the prepared summary was not enough (%s, %d -> %d tokens); summarising afresh",
                outcome.status.value,
                outcome.original,
                outcome.new,
            )
        return await self._compactor.compress(
            conv, force=force, trigger=trigger, instructions=instructions, progress=progress
        )

    async def _take(self, conv: Conversation, progress: Progress | None) -> Summary | None:
        """The valid prepared summary for `conv`, waiting for one in flight; None when there is none."""
        self.check(conv)
        task = self._task
        if task is not None and self._basis is not None:
            log.info("the turn waits for the summary being prepared in the background")
            if progress is not None:
                progress.report("Waiting for the summary being prepared in the background")
            # asyncio.wait never cancels what it waits for: cancelling the turn leaves the preparation running.
            await asyncio.wait([task])
        return self._summary if self._valid_for(conv) else None

    # -- ending ----------------------------------------------------------------------------------------------
    def discard(self) -> None:
        """Forget the preparation (cancelling one in flight) and any failure; the next turn may start another."""
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
        self._basis, self._summary, self._asking, self._failed = None, None, False, False

    async def aclose(self) -> None:
        """Shutdown: cancel a preparation in flight and wait until its request and hooks are gone."""
        task = self._task
        self.discard()
        if task is not None:
            await asyncio.wait([task])
