"""The compaction flow: Gemini CLI's chat compression (truncate, split, summarize, verify, recount) — made safer."""

from __future__ import annotations

import asyncio
import logging
import os
import platform
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from sidecar.compaction.summary_request import ALIAS_MODELS as ALIAS_MODELS
from sidecar.compaction.summary_request import BARE_FRAME, ChatFrame, ChatFrameSource, SummaryAsker, two_passes
from sidecar.compaction.summary_request import compression_model as compression_model
from sidecar.config.settings import Settings
from sidecar.core.compaction import (
    measure_content,
    tool_output_threshold,
    truncate_history_to_budget,
)
from sidecar.core.content_json import encode_content
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, Part, text_content
from sidecar.core.memory_text import is_session_context
from sidecar.core.outcome import Outcome, Status, Trigger
from sidecar.core.pins import summarizer_facts
from sidecar.core.progress import Progress
from sidecar.core.prompts import ACKNOWLEDGEMENT, compression_system_prompt
from sidecar.core.request_size import overhead_upper_tokens
from sidecar.core.tokens import estimate_history_tokens, text_quarters
from sidecar.core.turn_split import find_split_point_in_turn
from sidecar.core.working_set import FileBack, choose, reattached_text, worked_on
from sidecar.gemini.attempts import Attempts
from sidecar.gemini.client import ModelClient, ModelError
from sidecar.protocol.types import UsageSource
from sidecar.session import Session

log = logging.getLogger(__name__)

PRESERVE_FRACTION = 0.3
#: After an undo, automatic compaction holds off until the prompt grows by this share of the context window.
UNDO_PAUSE_FRACTION = 0.10
#: ... but never past this share of the window (the next message must still fit).
UNDO_PAUSE_CAP = 0.95
#: An automatic compaction must save at least this share of the tokens, or it counts as not beneficial.
MIN_AUTO_SAVINGS = 0.10


@dataclass(frozen=True)
class Summary:
    """A verified <state_snapshot> of a history's first `split` items."""

    split: int
    snapshot: str


#: A file read back as read_file shows it: (shown path, its text or None, why not).
ReadBack = Callable[[str], Awaitable[tuple[str, str | None, str]]]


class PreCompressHook(Protocol):
    async def __call__(self, trigger: Trigger) -> None: ...


def environment_turn(workspace: Sequence[str]) -> Content:
    """The <session_context> turn that opens a compacted history (date, OS, workspace folders)."""
    folders = ", ".join(workspace) or "(no workspace folder)"
    text = (
        "<session_context>\nThis is the sidecar, an agent working inside the user's editor. "
        f"Today's date is {datetime.now().strftime('%A, %B %d, %Y')}. "
        f"The operating system is {platform.system()}. The workspace folders are: {folders}.\n</session_context>"
    )
    return text_content("user", text)


class Compactor:
    """Runs one compaction attempt over a Conversation. The caller holds the conversation's lock."""

    def __init__(
        self,
        session: Session,
        client: Callable[[], Awaitable[ModelClient]],
        save_tool_output: Callable[[str, str], str | os.PathLike[str]],
        pre_compress: PreCompressHook,
        session_context: Callable[[], Awaitable[Content]] | None = None,
        *,
        chat_frame: ChatFrameSource | None = None,
        read_back: ReadBack | None = None,
    ) -> None:
        self._session = session
        #: The fresh <session_context> turn a compacted history opens with (sidecar.memory: with the project memory
        #: and the folder tree); None: the short environment_turn.
        self._session_context = session_context
        self._client = client
        self._save = save_tool_output
        #: Saves a full tool output and returns its path (also used to cut responses to fit, chat/request_budget.py).
        self.save_tool_output = save_tool_output
        self._pre_compress = pre_compress
        #: The chat's system instruction and tools (the live conversation's): the summary request is the
        #: chat's own request, so that it reuses the chat's prompt cache.
        self.chat_frame = chat_frame
        #: Reads a file back as read_file would (when tools are offered): the working set after a compaction.
        self.read_back = read_back

    def _settings(self) -> Settings:
        return self._session.settings

    async def compress(
        self,
        conv: Conversation,
        *,
        force: bool,
        trigger: Trigger,
        instructions: str | None = None,
        progress: Progress | None = None,
    ) -> Outcome:
        settings = self._settings()
        if not len(conv):
            return Outcome(Status.NOOP, 0, 0, trigger)
        original = conv.last_prompt_tokens
        limit = settings.effective_token_limit()
        if not force and original < settings.compression_threshold * limit:
            return Outcome(Status.NOOP, original, original, trigger)
        if not force and _too_small_to_help(conv):
            return Outcome(Status.NOOP, original, original, trigger)

        history = conv.history  # decoded once per compaction
        truncated, replacements = self._truncate(history, limit, original)

        if conv.has_failed_compression_attempt and not force:
            # Truncation only. Unlike the reference, compare estimate with estimate, and only when something
            # was actually truncated (otherwise every latched turn would "succeed" with nothing changed).
            before, after = conv.estimated_tokens(), estimate_history_tokens(truncated)
            if replacements and after < before:
                await self._pre_compress(trigger)
                return Outcome(
                    Status.CONTENT_TRUNCATED,
                    before,
                    after,
                    trigger,
                    new_history=truncated,
                    replacements=replacements,
                )
            return Outcome(Status.NOOP, original, original, trigger)

        split = _split(conv, truncated, replacements)
        if split <= _rebuilt_head(history):
            return Outcome(Status.NOOP, original, original, trigger)
        await self._pre_compress(trigger)
        snapshot = await self._summarize_prefix(
            conv.wire(),
            history,
            truncated,
            split,
            limit,
            instructions,
            progress,
            summarizer_facts(conv.pins, conv.todos),
        )
        if snapshot is None:
            return Outcome(Status.COMPRESSION_FAILED_EMPTY_SUMMARY, original, original, trigger)
        return await self._finish(
            conv,
            history,
            truncated,
            replacements,
            Summary(split, snapshot),
            force=force,
            trigger=trigger,
            progress=progress,
        )

    async def prepare(
        self,
        frozen: Conversation,
        *,
        on_start: Callable[[], None] | None = None,
        up_to: int | None = None,
        instructions: str | None = None,
        trigger: Trigger = "auto",
        progress: Progress | None = None,
    ) -> Summary | Status:
        """Summarize the oldest ~70% of a frozen copy of the history, for `apply` later (background compaction).

        The same checks, hooks (`trigger`) and two passes as an automatic compaction, minus the threshold:
        NOOP when there is nothing worth compressing, EMPTY_SUMMARY when no valid snapshot came back. Raises
        ModelError like `compress`. Nothing is recorded and `frozen` is only read. `up_to`: summarise the items
        before this index instead (the caller checked it is a split point); a manual trigger is never too small."""
        if not len(frozen) or (trigger == "auto" and _too_small_to_help(frozen)):
            return Status.NOOP
        limit = self._settings().effective_token_limit()
        history = frozen.history
        truncated, replacements = self._truncate(history, limit, frozen.last_prompt_tokens)
        split = _split(frozen, truncated, replacements) if up_to is None else up_to
        if split <= _rebuilt_head(history):
            return Status.NOOP
        if on_start is not None:
            on_start()
        await self._pre_compress(trigger)
        facts = summarizer_facts(frozen.pins, frozen.todos)
        snapshot = await self._summarize_prefix(
            frozen.wire(), history, truncated, split, limit, instructions, progress, facts
        )
        if snapshot is None:
            return Status.COMPRESSION_FAILED_EMPTY_SUMMARY
        client = await self._client()  # applying it recounts with countTokens: that must not be slow the first time
        await asyncio.get_running_loop().run_in_executor(None, client.warm_count_tokens)
        return Summary(split, snapshot)

    async def apply(
        self, conv: Conversation, summary: Summary, *, force: bool, trigger: Trigger, progress: Progress | None = None
    ) -> Outcome:
        """A summary prepared for `conv`'s first `summary.split` items, applied to the history as it is now:
        everything after that prefix is kept verbatim; the usual recount and status rules decide."""
        limit = self._settings().effective_token_limit()
        history = conv.history
        truncated, replacements = self._truncate(history, limit, conv.last_prompt_tokens)
        return await self._finish(
            conv, history, truncated, replacements, summary, force=force, trigger=trigger, progress=progress
        )

    def _truncate(
        self, history: list[Content], limit: int, prompt_tokens: int
    ) -> tuple[list[Content], dict[int, Content]]:
        """The function-response budget: the truncated history and which items changed (index -> new item)."""
        truncated = truncate_history_to_budget(
            history, tool_output_threshold=tool_output_threshold(limit, prompt_tokens), save=self._save
        )
        replacements = {i: new for i, (old, new) in enumerate(zip(history, truncated, strict=True)) if old != new}
        return truncated, replacements

    async def _summarize_prefix(
        self,
        wire: Sequence[bytes],
        history: list[Content],
        truncated: list[Content],
        split: int,
        limit: int,
        instructions: str | None,
        progress: Progress | None,
        facts: str | None,
    ) -> str | None:
        """High fidelity: the untruncated older part goes to the summarizer when it fits the model's limit — as the
        bytes the chat sent (`wire`), so the summary request starts with the chat request's prefix.
        `facts`: the pinned facts the snapshot must keep word for word."""
        # A <session_context> at the head is rebuilt fresh for the new history: it stays in the request (the
        # prefix is the chat's), and the summarizer is told to leave it out of the snapshot.
        start = _rebuilt_head(history)
        to_compress = history[start:split]
        frame = self.chat_frame() if self.chat_frame is not None else BARE_FRAME
        # The request is the chat's (system instruction, tools) plus the compression prompt and, in pass 2, the
        # draft and the critique: all of it must fit the window, or the API refuses the summary with a 400.
        reserve = overhead_upper_tokens(frame.system_instruction, frame.tools) + summary_reserve_tokens()
        if estimate_history_tokens(to_compress) + reserve < limit:
            prefix = list(wire[:split])
        else:
            prefix = [encode_content(c) for c in truncated[:split]]
            if estimate_history_tokens(truncated[start:split]) + reserve >= limit:
                # Too close to the window for the chat's frame: the bare request (no tools, no agent prompt),
                # which shares no cache with the chat but fits.
                frame = BARE_FRAME
        return await self._summarize(
            prefix, to_compress, instructions, progress, facts, rebuilt_head=start > 0, frame=frame
        )

    async def _finish(
        self,
        conv: Conversation,
        history: list[Content],
        truncated: list[Content],
        replacements: dict[int, Content],
        summary: Summary,
        *,
        force: bool,
        trigger: Trigger,
        progress: Progress | None,
    ) -> Outcome:
        """New history from the snapshot and the kept tail; recount like with like; accept or refuse."""
        original = conv.last_prompt_tokens
        split, snapshot = summary.split, summary.snapshot
        kept = truncated[split:]
        if self._session_context is not None:
            env = await self._session_context()
        else:
            env = environment_turn(self._session.workspace_folders)
        ack = text_content("model", ACKNOWLEDGEMENT)
        if kept and kept[0].role == "model":
            # A tail kept from inside an agent turn starts with a tool round: the API refuses a call turn right after
            # a model turn, so the acknowledgement and that round's calls are one model turn (text, then the calls).
            ack = Content(role="model", parts=[*ack.parts, *kept[0].parts])
            kept, split = kept[1:], split + 1
        start = _rebuilt_head(history)
        compressed = history[start : summary.split]
        freed = estimate_history_tokens(compressed) - estimate_history_tokens([text_content("user", snapshot)])
        attached = await self._working_set(compressed, truncated[summary.split :], freed)
        snapshot_turn = text_content("user", snapshot)
        if attached is not None:  # the files worked on, current content, right after the snapshot (recorded with it)
            snapshot_turn.parts.append(Part(text=attached))
        new_history = [env, snapshot_turn, ack, *kept]
        if progress is not None:
            progress.report("Counting tokens")
        counted = await self._count(conv, history, new_history)
        if counted is None:
            return Outcome(Status.COMPRESSION_FAILED_TOKEN_COUNT_ERROR, original, original, trigger)
        before, after, source = counted
        # The histories are compared with one method. The counts reported (and shown in the status bar) add
        # back what the API counted beyond the history — system prompt and tool declarations — so that they
        # are prompt sizes like every other number the editor shows.
        # Pinned facts travel outside the history (in the system instruction): the API counted them in `original`;
        # the estimate adds them here.
        # An estimate compares history estimates; what the status showed beyond them (pins, and system prompt and
        # tools after a fresh estimate) is added back so the notice's percentages are of the count the status shows.
        overhead = max(0, original - before) if source == "api" else max(conv.pinned_tokens, original - before)
        if after > before:
            return Outcome(Status.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT, before + overhead, after + overhead, trigger)
        if not force and after + overhead > (before + overhead) * (1 - MIN_AUTO_SAVINGS):
            return Outcome(
                Status.COMPRESSION_FAILED_INSUFFICIENT_REDUCTION, before + overhead, after + overhead, trigger
            )
        return Outcome(
            Status.COMPRESSED,
            before + overhead,
            after + overhead,
            trigger,
            new_history=new_history,
            snapshot=snapshot,
            kept_from=split if kept else None,
            replacements={i: c for i, c in replacements.items() if i >= split},
            token_source=source,
        )

    async def _summarize(
        self,
        prefix: list[bytes],
        to_compress: list[Content],
        instructions: str | None,
        progress: Progress | None,
        facts: str | None = None,
        *,
        rebuilt_head: bool = False,
        frame: ChatFrame | None = None,
    ) -> str | None:
        """Two passes on the chat's own request (sidecar/compaction/summary_request.py): a summary, then a
        verification told which facts the first one dropped. `facts`: the pinned facts, which both passes are told
        to keep word for word."""
        settings = self._settings()
        if frame is None:
            frame = self.chat_frame() if self.chat_frame is not None else BARE_FRAME
        # Each pass is checked like a chat reply: empty, thoughts-only or cut replies are retried; a blocked one
        # fails the compaction with its reason (a ModelError), and the history is left as it was.
        asker = SummaryAsker(
            await self._client(), compression_model(settings), frame, prefix, Attempts(settings.retry_initial_delay_ms)
        )
        return await two_passes(
            asker, to_compress, settings.approved_plan_path, instructions, progress, facts, rebuilt_head
        )

    async def _working_set(self, compressed: list[Content], kept: list[Content], freed: int) -> str | None:
        """The files the summarised part read or edited, most recent first, their current text within the budget
        (sidecar/core/working_set.py: a share of the window and of the `freed` tokens); None without a reader or
        when no file was worked on."""
        if self.read_back is None:
            return None
        files = []
        for raw in worked_on(compressed, kept):
            shown, text, why = await self.read_back(raw)
            files.append(FileBack(shown, text, why))
        return reattached_text(choose(files, self._settings().effective_token_limit(), freed))

    async def _count(
        self, conv: Conversation, old: list[Content], new: list[Content]
    ) -> tuple[int, int, UsageSource] | None:
        """Before and after counted the same way: countTokens when the API counted last, else the estimate."""
        if conv.usage_source != "api":
            return conv.estimated_tokens(), estimate_history_tokens(new), "estimate"
        client = await self._client()
        model = self._settings().model
        # Both counts at once: one round trip to the API in the compacting turn, not two.
        before_count = asyncio.create_task(client.count_tokens(model, old))
        try:
            after = await client.count_tokens(model, new)
            before = await before_count
        except ModelError as exc:
            log.warning("countTokens failed during compaction: %s", exc.message)
            return None
        finally:
            if not before_count.done():
                before_count.cancel()
            before_count.add_done_callback(lambda task: task.cancelled() or task.exception())
        return before, after, "api"


#: Room a summary request needs beyond the history and the chat's frame, besides the compression prompt: pass 2's
#: draft and critique.
DRAFT_RESERVE_TOKENS = 4_000


def summary_reserve_tokens() -> int:
    """The compression prompt (with the plan section) and pass 2's draft and critique, in tokens."""
    return text_quarters(compression_system_prompt("plan")) // 4 + DRAFT_RESERVE_TOKENS


def pause_after_undo(conv: Conversation, settings: Settings) -> int:
    """After "Undo Last Compaction": no automatic compaction until the prompt grows by a further
    UNDO_PAUSE_FRACTION of the window (or the user compresses). Returns the token count where the pause ends."""
    limit = settings.effective_token_limit()
    until = min(conv.last_prompt_tokens + int(UNDO_PAUSE_FRACTION * limit), int(UNDO_PAUSE_CAP * limit))
    conv.auto_compaction_paused_until = until
    return until


def auto_compaction_due(conv: Conversation, settings: Settings, prompt_tokens: int | None = None) -> bool:
    """An automatic compaction is due: the prompt (`prompt_tokens`, default the last reported size) is at the
    threshold and no undo pause holds (a pause ends for good once the prompt reaches its end)."""
    size = conv.last_prompt_tokens if prompt_tokens is None else prompt_tokens
    paused = conv.auto_compaction_paused_until
    if paused is not None and size >= paused:
        conv.auto_compaction_paused_until = paused = None
    threshold = settings.compression_threshold * settings.effective_token_limit()
    return paused is None and size >= threshold


def compaction_due_next(conv: Conversation, settings: Settings) -> bool:
    """Whether the next message starts with an automatic compaction, as far as the last prompt's size tells (what
    `auto_compaction_due` will say, without ending a pause)."""
    size = conv.last_prompt_tokens
    paused = conv.auto_compaction_paused_until
    threshold = settings.compression_threshold * settings.effective_token_limit()
    return (paused is None or size >= paused) and size >= threshold


def _too_small_to_help(conv: Conversation) -> bool:
    """The history is too small a part of the prompt (system prompt and tool declarations fill it): even
    summarising all of it to nothing could not save enough, so the model is not asked."""
    return (1 - PRESERVE_FRACTION) * conv.estimated_tokens() < MIN_AUTO_SAVINGS * conv.last_prompt_tokens


def _rebuilt_head(history: list[Content]) -> int:
    """1 when the history opens with a <session_context> turn (the new history gets a fresh one), else 0."""
    first = history[0].parts if history else []
    return 1 if first and is_session_context(first[0].text) else 0


def _split(conv: Conversation, truncated: list[Content], replacements: dict[int, Content]) -> int:
    """The split point over the truncated history (cached JSON sizes for the items truncation left alone)."""
    cached = conv.json_sizes()
    sizes = [measure_content(c).json_length if i in replacements else cached[i] for i, c in enumerate(truncated)]
    # The 70/30 split is of the conversation: a <session_context> at the head is rebuilt, neither kept nor summarised.
    head = _rebuilt_head(truncated)
    # Inside an agent turn (the history ends with calls awaiting responses) an earlier round may start the kept part.
    split = find_split_point_in_turn(truncated[head:], 1 - PRESERVE_FRACTION, sizes[head:])
    return split + head if split else 0
