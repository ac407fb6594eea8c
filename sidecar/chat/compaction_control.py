"""Steering a compaction: summarise up to a chosen message, preview and edit a summary before it applies, rate one."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from sidecar.chat.service import ChatService
from sidecar.compaction.service import Summary, compression_model
from sidecar.core.memory_text import is_session_context
from sidecar.core.outcome import Outcome, Status
from sidecar.core.pins import Pin
from sidecar.core.progress import Progress
from sidecar.protocol import errors
from sidecar.protocol.compaction import (
    ApplyCompactionResult,
    CompactionRating,
    PreviewCompactionResult,
    RateCompactionResult,
)
from sidecar.protocol.sessions import TranscriptCompaction
from sidecar.protocol.types import CompressResult
from sidecar.recording.branches import turn_start
from sidecar.recording.store import RecordingError

#: The longest rating note kept (a note is a sentence or two, not a document).
MAX_NOTE_CHARS = 2_000
_OPEN, _CLOSE = "<state_snapshot>", "</state_snapshot>"
_WRAPPED = re.compile(r"\A\s*<state_snapshot>(.*)</state_snapshot>\s*\Z", re.DOTALL)


@dataclass(frozen=True)
class _Preview:
    """A proposed summary and the exact state it was made for (applying it to any other state is refused)."""

    preview_id: str
    session_id: str
    wire: list[bytes]
    pins: list[Pin]
    summary: Summary


def edited_snapshot(text: str) -> str:
    """The user's edit of a proposed summary as the snapshot to apply: one `<state_snapshot>` block with nothing
    around it is kept as it is, text without the tags is wrapped in them; ValueError in words for anything else
    (empty, tags that do not pair up, text outside the block). The seven sections are not required: the user may
    drop one on purpose."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("the edited summary is empty; discard the preview instead, or write what to keep")
    opens, closes = stripped.count(_OPEN), stripped.count(_CLOSE)
    if opens == 0 and closes == 0:
        return f"{_OPEN}\n{stripped}\n{_CLOSE}"
    if opens == 1 and closes == 1 and _WRAPPED.match(stripped):
        return stripped
    raise ValueError(
        f"the edited summary must be one {_OPEN}…{_CLOSE} block with nothing outside it (found {opens} opening and "
        f"{closes} closing tags), or plain text without the tags, which is wrapped in them"
    )


class CompactionControl:
    """The user's controls over compaction, on top of the chat service's manual compaction (one at a time)."""

    def __init__(self, chat: ChatService) -> None:
        self._chat = chat
        self._live = chat.live
        #: The latest preview (one at a time: a new preview replaces it, applying or discarding it ends it).
        self._preview: _Preview | None = None

    # -- summarise up to a message ---------------------------------------------------------------------
    async def compress(self, instructions: str | None, up_to_message_id: str | None) -> CompressResult:
        """sidecar/compress: the usual flow, or everything before a user message summarised, the rest verbatim."""
        if up_to_message_id is None:
            return await self._chat.compress(instructions)

        async def run(progress: Progress) -> Outcome:
            summary = await self._summarize(instructions, up_to_message_id, progress)
            if isinstance(summary, Status):
                return self._nothing(summary)
            self._live.background.discard()  # prepared for another split; the history is about to change
            return await self._chat.compactor.apply(
                self._live.conversation, summary, force=True, trigger="manual", progress=progress
            )

        return await self._chat.compress(instructions, run)

    async def _summarize(self, instructions: str | None, up_to: str | None, progress: Progress) -> Summary | Status:
        """A summary of the live history (before `up_to`'s turn, when given), not applied; the caller holds the
        lock. A summary prepared in the background stays (nothing changes the history here)."""
        conv = self._live.conversation
        split = self.split_before(up_to) if up_to is not None else None
        return await self._chat.compactor.prepare(
            conv, up_to=split, instructions=instructions, trigger="manual", progress=progress
        )

    def _nothing(self, status: Status) -> Outcome:
        tokens = self._live.conversation.last_prompt_tokens
        return Outcome(status, tokens, tokens, "manual")

    def split_before(self, message_id: str) -> int:
        """Where the live history splits before user message `message_id`'s turn (its editor context included);
        SidecarError in words when that is not a user message of the history the model sees."""
        live, recorder = self._live, self._live.recorder
        conv = live.conversation
        cannot = f"Cannot summarise up to message {message_id}"
        if not recorder.recording:
            reason = recorder.problem or "nothing has been recorded in this session yet"
            raise errors.SidecarError(errors.SESSION_ERROR, f"{cannot}: {reason}.")
        recorder.sync()
        try:
            first, entry = turn_start(recorder.reload().transcript, message_id)
        except (RecordingError, ValueError) as exc:
            raise errors.SidecarError(errors.INVALID_PARAMS, f"{cannot}: {exc}.") from None
        if entry.rewound or first not in conv.ids:
            why = "it was rewound" if entry.rewound else "an earlier compaction already summarised it"
            raise errors.SidecarError(
                errors.INVALID_PARAMS, f"{cannot}: the model no longer sees it ({why}); pick a later message of yours."
            )
        index = conv.ids.index(first)
        history = conv.history
        head = 1 if history and history[0].parts and is_session_context(history[0].parts[0].text) else 0
        if index <= head:
            raise errors.SidecarError(
                errors.INVALID_PARAMS, f"{cannot}: nothing comes before it to summarise; pick a later message."
            )
        before = history[index - 1]
        if before.role == "model" and any(p.function_call is not None for p in before.parts):
            # Never between a call and its response (a user message cannot follow unanswered calls in a valid history).
            raise errors.SidecarError(
                errors.INVALID_PARAMS, f"{cannot}: it would separate a tool call from its response."
            )
        return index

    # -- preview, edit, apply --------------------------------------------------------------------------
    async def preview(self, instructions: str | None, up_to_message_id: str | None) -> PreviewCompactionResult:
        """sidecar/previewCompaction: the summary a manual compaction would apply now, with the sizes before and
        after; nothing changes (the PreCompress hooks run, as for any compaction the user starts)."""
        made: list[Summary] = []

        async def run(progress: Progress) -> Outcome:
            summary = await self._summarize(instructions, up_to_message_id, progress)
            if isinstance(summary, Status):
                return self._nothing(summary)
            made.append(summary)
            progress.report("Counting tokens")
            return await self._chat.compactor.apply(
                self._live.conversation, summary, force=True, trigger="manual", progress=progress
            )

        outcome = await self._chat.manual_compaction(instructions, run, apply=False)
        limit = self._live.session.settings.effective_token_limit()
        model = compression_model(self._live.session.settings)
        conv = self._live.conversation
        if not made or outcome.status is not Status.COMPRESSED:
            return PreviewCompactionResult(
                preview_id=None,
                status=outcome.status.value,
                snapshot=made[0].snapshot if made else None,
                original_token_count=outcome.original,
                new_token_count=outcome.new,
                summarized_count=0,
                kept_count=len(conv),
                message=outcome.message(limit),
                model=model,
            )
        summary = made[0]
        preview = _Preview(f"p{os.urandom(5).hex()}", conv.session_id, list(conv.wire()), list(conv.pins), summary)
        self._preview = preview
        kept = len(conv) - summary.split
        return PreviewCompactionResult(
            preview_id=preview.preview_id,
            status=outcome.status.value,
            snapshot=summary.snapshot,
            original_token_count=outcome.original,
            new_token_count=outcome.new,
            summarized_count=summary.split,
            kept_count=kept,
            model=model,
            message=(
                f"Proposed summary by {model} of {summary.split} history items ({kept} kept verbatim): "
                f"{outcome.original:,} → {outcome.new:,} tokens. Nothing changed yet: apply it (edited or not) "
                "or discard it."
            ),
        )

    async def apply(self, preview_id: str, snapshot: str | None) -> ApplyCompactionResult:
        """sidecar/applyCompaction: the previewed summary (or the user's edit of it) replaces the history it
        summarises, recorded and undoable like any compaction; refused when the history changed since."""
        preview = self._preview
        if preview is None or preview.preview_id != preview_id:
            known = f"the latest is {preview.preview_id}" if preview is not None else "there is none"
            raise errors.SidecarError(
                errors.INVALID_PARAMS,
                f"No compaction preview {preview_id!r} ({known}; a preview ends when it is applied, replaced or "
                "the history changes). Preview again.",
            )
        text = preview.summary.snapshot
        if snapshot is not None:
            try:
                text = edited_snapshot(snapshot)
            except ValueError as exc:
                raise errors.SidecarError(errors.INVALID_PARAMS, f"Cannot apply the summary: {exc}.") from None
        edited = text != preview.summary.snapshot

        async def run(progress: Progress) -> Outcome:
            conv = self._live.conversation
            if conv.session_id != preview.session_id or conv.pins != preview.pins or conv.wire() != preview.wire:
                self._preview = None
                raise errors.SidecarError(
                    errors.SESSION_ERROR,
                    "The conversation changed since this summary was previewed (a message, a compaction, a rewind, "
                    "a pin or another session); it was not applied. Preview again.",
                )
            self._preview = None
            self._live.background.discard()
            outcome = await self._chat.compactor.apply(
                conv, Summary(preview.summary.split, text), force=True, trigger="manual", progress=progress
            )
            outcome.edited = edited and outcome.status is Status.COMPRESSED
            return outcome

        result = await self._chat.compress(None, run)
        return ApplyCompactionResult(
            status=result.status,
            original_token_count=result.original_token_count,
            new_token_count=result.new_token_count,
            message=result.message + (" (with your edited summary)" if edited and result.compaction_id else ""),
            compaction_id=result.compaction_id,
            edited=edited,
        )

    def discard(self) -> None:
        """Forget the preview (the editor closed it)."""
        self._preview = None

    @property
    def latest_preview_id(self) -> str | None:
        """The preview `apply` would take (ACP's `/compress --apply`)."""
        return self._preview.preview_id if self._preview is not None else None

    # -- rating ----------------------------------------------------------------------------------------
    def rate(self, compaction_id: str | None, rating: CompactionRating, note: str | None) -> RateCompactionResult:
        """sidecar/rateCompaction: the user's rating of a compaction of the live session (default: the latest),
        recorded with it; a later rating of the same compaction replaces the earlier one."""
        recorder = self._live.recorder
        note = (note or "").strip() or None
        if note is not None and len(note) > MAX_NOTE_CHARS:
            raise errors.SidecarError(
                errors.INVALID_PARAMS, f"The note is {len(note):,} characters; at most {MAX_NOTE_CHARS:,} are kept."
            )
        if not recorder.recording:
            reason = recorder.problem or "nothing has been recorded in this session yet"
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rate a compaction: {reason}.")
        recorder.sync()
        try:
            entries = recorder.reload().transcript
        except RecordingError as exc:
            raise errors.SidecarError(errors.SESSION_ERROR, f"Cannot rate a compaction: {exc}") from None
        compactions = [e for e in entries if isinstance(e, TranscriptCompaction)]
        if compaction_id is None:
            if not compactions:
                raise errors.SidecarError(errors.SESSION_ERROR, "There is no compaction to rate in this session.")
            compaction_id = compactions[-1].id
        elif all(e.id != compaction_id for e in compactions):
            raise errors.SidecarError(
                errors.INVALID_PARAMS, f"There is no compaction {compaction_id!r} in this session to rate."
            )
        recorder.rate_compaction(compaction_id, rating, note)
        if recorder.problem:
            raise errors.SidecarError(errors.SESSION_ERROR, f"The rating was not recorded: {recorder.problem}")
        said = "its summary kept what mattered" if rating == "good" else "its summary lost something"
        return RateCompactionResult(
            compaction_id=compaction_id,
            rating=rating,
            message=f"Rating recorded with the compaction: {said}" + (f" ({note})" if note else "") + ". Thank you.",
        )
