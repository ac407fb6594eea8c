"""The chat service: one user turn at a time — auto compaction, overflow guard, IDE context, the streamed reply."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from sidecar.chat.lazy_progress import LazyProgress
from sidecar.chat.live import ALREADY_COMPRESSING as ALREADY_COMPRESSING
from sidecar.chat.live import LiveConversation
from sidecar.chat.loop_guard import TurnLoops
from sidecar.chat.request_budget import RequestBudget, new_turn_tokens
from sidecar.chat.tool_runner import CallsCancelled, ToolRunner
from sidecar.compaction.masking import ToolOutputMasker
from sidecar.compaction.service import Compactor
from sidecar.config.settings import Settings
from sidecar.core.conversation import Conversation
from sidecar.core.history import Content, FunctionCall, FunctionResponse, Part, text_content
from sidecar.core.ide_context import context_turn_text
from sidecar.core.loop_detection import LoopFound, loop_nudge, loop_stop_message
from sidecar.core.outcome import Outcome, Status, Trigger
from sidecar.core.progress import Progress
from sidecar.core.recording import TOOL_TITLES, MessageKind
from sidecar.core.reply_check import INTERRUPTED, cut_short_notice
from sidecar.core.request_overhead import request_overhead_tokens
from sidecar.core.request_size import overhead_upper_tokens
from sidecar.core.todos import compacted_mid_turn_note
from sidecar.core.words import counted
from sidecar.gemini.attempts import Attempts, Retry, is_function_response, stream_checked, with_nudge
from sidecar.gemini.client import ModelClient, ModelError
from sidecar.gemini.stream import Chunk
from sidecar.hooks.output import HookOutput, hook_context_text
from sidecar.protocol import error_info, errors
from sidecar.protocol.ide import OpenFile
from sidecar.protocol.methods import ProgressKind
from sidecar.protocol.types import (
    CompressedParams,
    CompressResult,
    RetryParams,
    SendMessageResult,
    TokenUsage,
    ToolOutputsMaskedParams,
)

log = logging.getLogger(__name__)


class Notifier(Protocol):
    """What the chat service tells the editor while it works (implemented by sidecar.rpc.editor.Notifier)."""

    def message_delta(self, turn_id: str, text: str) -> None:
        """One streamed chunk of the reply's text."""

    def thought_delta(self, turn_id: str, text: str) -> None:
        """One streamed chunk of the model's thought summary."""

    def token_usage(self, usage: TokenUsage) -> None:
        """The usage changed (pushed once per change of state)."""

    def compressed(self, notice: CompressedParams) -> None:
        """A compaction attempt that was not NOOP ended: its outcome."""

    def masked(self, notice: ToolOutputsMaskedParams) -> None:
        """Old tool outputs were masked before a request (once per masking)."""

    def error(self, message: str) -> None:
        """A model error, in words (the turn fails with it too)."""

    def warning(self, message: str) -> None:
        """Something the user should know that did not stop the work."""

    def retry(self, notice: RetryParams) -> None:
        """An unusable reply is retried: the failed attempt's text is void."""

    async def progress(self, kind: ProgressKind) -> Progress:
        """Start showing a progress of this kind (only compactions ask for one here)."""


class TurnHooks(Protocol):
    """The user's hooks a turn runs (implemented by sidecar.hooks.service.HookService)."""

    async def before_agent(self, prompt: str) -> HookOutput:
        """BeforeAgent: block the turn (with a reason) or add context to it."""


#: Makes a manual compaction's outcome in place of the usual flow, under the lock, with the compaction's progress.
CompactionRun = Callable[[Progress], Awaitable[Outcome]]

#: finishReason of a turn a BeforeAgent hook blocked (nothing was sent to the model).
HOOK_BLOCKED = "HOOK_BLOCKED"


class ChatService:
    """The turn loop: one user turn (and the compactions it needs) at a time, under the live conversation's lock."""

    def __init__(
        self,
        live: LiveConversation,
        client: Callable[[], Awaitable[ModelClient]],
        notifier: Notifier,
        compactor: Compactor,
        tools: ToolRunner | None = None,
        *,
        hooks: TurnHooks | None = None,
        tools_starting: Callable[[Callable[[str], None]], Awaitable[list[str]]] | None = None,
    ) -> None:
        self.live = live
        #: Waits (bounded) for the MCP servers still starting; returns what the turn goes on without
        #: (sidecar.mcp.manager.McpManager.wait_for_starting).
        self._tools_starting = tools_starting
        #: BeforeAgent runs before each turn (None: no hooks, as in the service tests).
        self.hooks = hooks
        self._client = client
        self._notify = notifier
        self.compactor = compactor
        self.tools = tools
        #: The check before every model request of a turn (sidecar/chat/request_budget.py).
        self.budget = RequestBudget(compactor.save_tool_output)
        #: Loop detection within a turn (sidecar/chat/loop_guard.py, sidecar/core/loop_detection.py).
        self.loops = TurnLoops()
        #: Old tool outputs masked before each request (sidecar/compaction/masking.py, docs/compaction.md).
        self.masker = ToolOutputMasker(compactor.save_tool_output)
        #: An automatic compaction ran inside the running turn: its next request says so (and names the todo item
        #: in progress), so that the model continues the task instead of starting over.
        self._compacted_mid_turn = False

    @property
    def _conversation(self) -> Conversation:
        return self.live.conversation

    def _settings(self) -> Settings:
        return self.live.session.settings

    # -- compaction -----------------------------------------------------------------------------------
    async def compress(self, instructions: str | None, run: CompactionRun | None = None) -> CompressResult:
        """The user's "Compress conversation": forced, never concurrent with another compaction. `run`: how the
        outcome is made instead of the usual flow (summarise up to a message, apply a previewed summary)."""
        outcome = await self.manual_compaction(instructions, run)
        limit = self._settings().effective_token_limit()
        return CompressResult(
            status=outcome.status.value,
            original_token_count=outcome.original,
            new_token_count=outcome.new,
            message=outcome.message(limit),
            compaction_id=self.live.recorder.last_compaction_id if outcome.status is not Status.NOOP else None,
        )

    async def manual_compaction(
        self, instructions: str | None, run: CompactionRun | None = None, *, apply: bool = True
    ) -> Outcome:
        """A compaction the user asked for, under the lock and never two at once; `apply` False: the outcome is
        only returned (a preview), the history and the recording stay as they are."""
        async with self.live.manual_compaction():
            if apply:
                self._conversation.auto_compaction_paused_until = None  # the user compresses: an undo pause ends
            outcome = await self._compact(force=True, trigger="manual", instructions=instructions, run=run, apply=apply)
        assert outcome is not None
        return outcome

    async def _compact(
        self,
        *,
        force: bool,
        trigger: Trigger,
        instructions: str | None = None,
        run: CompactionRun | None = None,
        apply: bool = True,
    ) -> Outcome | None:
        """One attempt under the lock: progress, model errors named, the outcome applied and announced."""
        # An automatic attempt shows progress only once it does some work (not for a NOOP or a latched turn).
        lazy = None if force else LazyProgress(lambda: self._notify.progress("compaction"))
        progress = lazy or await self._notify.progress("compaction")
        outcome: Outcome | None = None
        try:
            if run is not None:
                outcome = await run(progress)
            else:
                outcome = await self.live.background.compact(
                    self._conversation, force=force, trigger=trigger, instructions=instructions, progress=progress
                )
        except ModelError as exc:
            message = f"Compaction failed, the conversation is unchanged: {exc.message}"
            if trigger == "manual":
                data = error_info.ModelErrorData(
                    kind=exc.kind, status=exc.status, reason=exc.reason, block_reason=exc.block_reason
                )
                raise errors.SidecarError(errors.MODEL_ERROR, message, data) from None
            self._notify.warning(message)
            return None
        finally:
            if lazy is not None:
                await lazy.settle()  # its begin and reports are sent: end() goes out now, right before the outcome
            limit = self._settings().effective_token_limit()
            progress.end(outcome.message(limit) if outcome is not None and apply else None)
        if apply:
            self._apply(outcome, force=force)
        return outcome

    def _apply(self, outcome: Outcome, *, force: bool) -> None:
        conv = self._conversation
        new_ids = self.live.recorder.compaction(outcome, conv.ids)
        not_kept = (Status.COMPRESSION_FAILED_INFLATED_TOKEN_COUNT, Status.COMPRESSION_FAILED_INSUFFICIENT_REDUCTION)
        if outcome.status in not_kept:
            conv.has_failed_compression_attempt = conv.has_failed_compression_attempt or not force
        elif outcome.status is Status.COMPRESSED and outcome.new_history is not None:
            conv.replace(outcome.new_history, new_ids)
            conv.set_prompt_tokens(outcome.new, outcome.token_source)
            conv.has_failed_compression_attempt = False
        elif outcome.status is Status.CONTENT_TRUNCATED and outcome.new_history is not None:
            conv.replace(outcome.new_history, new_ids)  # usage becomes the local estimate, as in the reference
        if outcome.status is not Status.NOOP:
            limit = self._settings().effective_token_limit()
            self._notify.compressed(
                CompressedParams(
                    session_id=conv.session_id,
                    status=outcome.status.value,
                    original_token_count=outcome.original,
                    new_token_count=outcome.new,
                    trigger=outcome.trigger,
                    message=outcome.message(limit),
                    compaction_id=self.live.recorder.last_compaction_id,
                    edited=outcome.edited,
                )
            )
            self.live.push_usage()

    # -- turns ----------------------------------------------------------------------------------------
    async def send_message(
        self, text: str, progress: Progress | None = None, editor: list[OpenFile] | None = None
    ) -> SendMessageResult:
        """One user turn. `editor` is the editor context as it was when the message arrived (default: now):
        a turn waiting behind another must not show the model context the editor sent after it."""
        turn_id = f"turn-{uuid.uuid4().hex[:12]}"
        editor = self.live.ide.current if editor is None else editor
        async with self.live.lock:
            try:
                reply = await self._run_turn(turn_id, text, progress, editor)
            except asyncio.CancelledError:
                if self._conversation.usage_source == "estimate" and self._conversation.estimate_reason is None:
                    self.live.fresh_estimate(None)  # what the turn kept, with system prompt and tools, like every count
                raise
            finally:
                self.live.push_usage()  # the status bar first; the fsync can take milliseconds
                self.live.recorder.sync()
                self.live.background.maybe_start(self._conversation)
        return SendMessageResult(turn_id=turn_id, text=reply[0], finish_reason=reply[1], usage=self.live.usage())

    async def _run_turn(
        self, turn_id: str, text: str, progress: Progress | None, editor: list[OpenFile] | None
    ) -> tuple[str, str | None]:
        before = await self.hooks.before_agent(text) if self.hooks is not None else HookOutput()
        if before.blocked:
            return self._blocked(turn_id, text, before.reason)
        settings = self._settings()
        conv = self._conversation
        self._compacted_mid_turn = False
        self.answer_interrupted_calls()
        await self._memory_turns(turn_id)
        self.loops.start(settings.loop_detection)
        ide = self.live.ide
        message = text_content("user", text)
        if before.additional_context:  # for the model, and recorded: a resumed session sends the same
            message.parts.append(Part(text=hook_context_text(before.additional_context)))
        sent = "".join(p.text or "" for p in message.parts)
        await self._wait_for_tools(turn_id, progress)
        await self.budget.before_message(  # compaction if due; refused (nothing sent) when it cannot fit
            conv, settings, self._overhead(), lambda: new_turn_tokens(conv, ide, editor, sent), self._auto_compact
        )
        conv.compaction_postponed = False  # a postponement holds for one request
        self._add_ide_context(turn_id, editor)
        self.live.turn_started(self._append(message, "user", turn_id, shown=text if len(message.parts) > 1 else None))
        client = await self._client()
        texts: list[str] = []
        nudge: str | None = None
        for round_number in range(1, settings.max_tool_rounds + 2):
            self.budget.sending(conv)
            if self._compacted_mid_turn:
                self._compacted_mid_turn = False
                nudge = "\n\n".join(n for n in (compacted_mid_turn_note(conv.todos), nudge) if n)
            reply, finish = await self._stream_round(turn_id, client, settings, progress, "".join(texts), nudge)
            self.budget.answered(conv)
            texts.append(_text_of(reply))
            calls = [p.function_call for p in reply if p.function_call is not None]
            found = self.loops.after_round(calls)
            if found is not None and self.loops.stopping:
                return self._stop_for_loop(turn_id, calls, found, texts)
            nudge = loop_nudge(found) if found is not None else None
            if nudge is not None and not calls and round_number <= settings.max_tool_rounds:
                continue  # a text loop in the final reply: asked again, with the nudge
            if not calls or self.tools is None:
                return "".join(texts), finish
            if round_number > settings.max_tool_rounds:
                note = f"Stopped after {settings.max_tool_rounds} tool rounds (the maxToolRounds setting)."
                self._answer_calls(turn_id, [_error_response(c, note) for c in calls])
                self.live.recorder.note("info", note, turn_id)
                return "".join(texts), "MAX_TOOL_ROUNDS"
            if progress is not None:
                progress.report(f"Running {counted(len(calls), 'tool call')}…")
            try:
                parts = await self.tools.answer(turn_id, calls)
            except CallsCancelled as cancelled:
                self._answer_calls(turn_id, cancelled.answered)  # no call is left without a response
                self.live.recorder.note("info", "The turn was cancelled.", turn_id)
                raise
            await self._fit_continuation(turn_id, settings, parts)
        raise AssertionError("unreachable: the loop returns by the last round")

    def _blocked(self, turn_id: str, text: str, reason: str) -> tuple[str, str]:
        """A BeforeAgent hook blocked the turn: nothing is sent and the model's history is unchanged; the user is
        told why, and the transcript keeps the message in a note (it is not lost, and never sent later)."""
        self.live.recorder.note("info", f"Not sent (a BeforeAgent hook blocked it: {reason}): {text}", turn_id)
        self._notify.warning(f"Your message was not sent: a BeforeAgent hook blocked it: {reason}")
        return "", HOOK_BLOCKED

    async def _wait_for_tools(self, turn_id: str, progress: Progress | None) -> None:
        """The MCP servers still starting get a bounded wait before the first request, so that a prompt sent at
        once after start is offered their tools; the wait shows in the progress (no progress: as a thought)."""
        if self._tools_starting is None:
            return

        def report(text: str) -> None:
            if progress is not None:
                progress.report(text)
            else:
                self._notify.thought_delta(turn_id, f"{text}\n")

        for problem in await self._tools_starting(report):
            self.live.recorder.note("info", problem, turn_id)
            self._notify.warning(problem)

    def _stop_for_loop(
        self, turn_id: str, calls: list[FunctionCall], found: LoopFound, texts: list[str]
    ) -> tuple[str, str]:
        """The second loop in a turn: its calls are answered (not run), the user is told what repeated."""
        message = loop_stop_message(found)
        self._answer_calls(turn_id, [_error_response(c, message) for c in calls])
        self.live.recorder.note("info", message, turn_id)
        self._notify.warning(message)
        return "".join(texts), "LOOP_DETECTED"

    def _overhead(self) -> int:
        """The system instruction (with memory and pinned facts) and tool declarations of the next request."""
        frame = self.live.chat_frame()
        return overhead_upper_tokens(frame.system_instruction, frame.tools)

    async def _memory_turns(self, turn_id: str) -> None:
        """Before the user's message: a fresh <session_context> at the head of a history that has none yet (new,
        resumed, forked, rewound, undone), else a short turn naming the context files changed on disk since."""
        context = self.live.context
        if context is None:
            return
        await context.memory.check()

        def record(content: Content) -> str:
            return self.live.recorder.message(content, "env", turn_id)

        if await context.ensure(self._conversation, record) is not None:
            return
        changed = context.memory.take_changes()
        if changed is not None:
            self._append(text_content("user", changed), "env", turn_id)

    async def _auto_compact(self) -> None:
        await self._compact(force=False, trigger="auto")

    async def _auto_compact_mid_turn(self) -> None:
        outcome = await self._compact(force=False, trigger="auto")
        if outcome is not None and outcome.status is Status.COMPRESSED:
            self._compacted_mid_turn = True

    async def _fit_continuation(self, turn_id: str, settings: Settings, parts: list[Part]) -> list[Part]:
        """The check before a tool continuation (compaction if due, responses cut to fit), then the responses are
        added. A history too large even for the shortest responses ends the turn in words, nothing sent."""
        try:
            fitted, fits = await self.budget.before_continuation(
                self._conversation, settings, self._overhead(), parts, self._auto_compact_mid_turn
            )
        except asyncio.CancelledError:
            self._answer_calls(turn_id, parts)
            raise
        self._answer_calls(turn_id, fitted)
        if not fits:
            message = (
                "The conversation no longer fits the context window, even after compaction and with the tool "
                'results cut; nothing more was sent. Run "Compress conversation" or start a new session.'
            )
            self._append(text_content("model", INTERRUPTED), "model", turn_id)
            self.live.recorder.note("error", message, turn_id)
            raise errors.SidecarError(errors.CONTEXT_OVERFLOW, message)
        return fitted

    def answer_interrupted_calls(self) -> None:
        """Calls a previous process never answered (it was killed mid-call) get an error response before the next
        turn, so the history again satisfies the API rule that every functionCall turn is followed by its responses.
        (Resume itself only reads; the answer is recorded with the next turn.)"""
        conv = self._conversation
        if not conv.tool_call_pending():
            return
        last = conv.last()
        calls = [p.function_call for p in (last.parts if last else []) if p.function_call is not None]
        note = "The sidecar stopped before this tool call finished; it may or may not have taken effect."
        self._answer_calls("resume", [_error_response(c, note) for c in calls])

    def _answer_calls(self, turn_id: str, parts: list[Part]) -> None:
        """All responses to one model turn's calls go into one user turn, as the API requires."""
        titles = self.tools.take_titles() if self.tools is not None else {}
        if parts:
            meta = {TOOL_TITLES: titles} if titles else None
            self._append(Content(role="user", parts=parts), "toolResult", turn_id, meta=meta)

    async def _stream_round(
        self,
        turn_id: str,
        client: ModelClient,
        settings: Settings,
        progress: Progress | None,
        shown: str = "",
        nudge: str | None = None,
    ) -> tuple[list[Part], str | None]:
        """One model call: stream the reply into the history, checked and retried (sidecar/gemini/attempts.py);
        cancellations and errors leave the history valid. `shown`: the turn's text from earlier rounds; `nudge`:
        a note for this request only (not recorded), e.g. a loop warning."""
        conv = self._conversation
        self._mask_old_outputs(turn_id, settings)
        if progress is not None:
            progress.report("Waiting for Gemini…")
        current: list[Part] = []  # the attempt under way
        frame = self.live.chat_frame()  # the same frame a summary request takes (it reuses this request's cache)
        system, tools = frame.system_instruction, frame.tools
        # The reference's estimate of this very request, recorded next to the API's count (sessions stats).
        estimated = conv.estimated_tokens() + request_overhead_tokens(system, tools)

        def on_retry(retry: Retry) -> None:
            self._notify.retry(
                RetryParams(
                    turn_id=turn_id,
                    attempt=retry.attempt,
                    max_attempts=retry.max_attempts,
                    reason=retry.reason,
                    message=retry.message,
                    delay_ms=retry.delay_ms,
                    text=shown,
                )
            )
            if progress is not None:
                progress.report(f"Retrying ({retry.attempt}/{retry.max_attempts}): {retry.message}")

        attempts = Attempts(settings.retry_initial_delay_ms, on_retry=on_retry)
        try:
            round_reply = await stream_checked(
                client,
                settings.model,
                with_nudge(conv.wire(), conv.last(), nudge) if nudge else conv.wire(),
                system_instruction=system,
                tools=tools,
                attempts=attempts,
                on_chunk=lambda chunk: self._emit(turn_id, chunk),
                current=current,
            )
        except asyncio.CancelledError:
            # Keep what the user already saw; drop half-made calls so no call dangles without a response.
            self._keep_reply(current, turn_id, text_only=True)
            self.live.recorder.note("info", "The turn was cancelled.", turn_id)
            log.info("turn %s cancelled after %d parts", turn_id, len(current))
            raise
        except ModelError as exc:
            # The user's message stays in the history (unless the API refused it: then it would be refused again);
            # nothing a failed attempt produced is recorded as a reply.
            self._close_failed_round(exc, turn_id)
            self.live.recorder.note("error", exc.message, turn_id)
            self._notify.error(exc.message)
            data = error_info.ModelErrorData(
                kind=exc.kind, status=exc.status, turn_id=turn_id, reason=exc.reason, block_reason=exc.block_reason
            )
            raise errors.SidecarError(errors.MODEL_ERROR, exc.message, data) from None
        reply = self._keep_reply(round_reply.parts, turn_id, text_only=False)
        usage = round_reply.usage
        if usage is not None and usage.prompt_token_count is not None:
            conv.record_api_usage(usage.prompt_token_count)
            self.live.cached_tokens = usage.cached_content_token_count
            self.live.recorder.usage(
                usage.prompt_token_count,
                "api",
                conv.ids[-1] if conv.ids else None,
                None,
                paused_until=conv.auto_compaction_paused_until,
                estimated=estimated,
            )
        notice = cut_short_notice(round_reply.finish_reason, round_reply.finish_message) if reply else None
        if notice is not None:
            self.live.recorder.note("info", notice, turn_id)
            self._notify.warning(notice)
        return reply, round_reply.finish_reason

    def _mask_old_outputs(self, turn_id: str, settings: Settings) -> None:
        """Before a request: old tool outputs past the protected window become previews when a batch is due. The
        masking is recorded first (the messages keep their full outputs in the file), then applied and announced."""
        conv = self._conversation
        background = self.live.background
        if background.in_flight or background.state(conv) == "ready":
            return  # a summary being prepared for this history's first items would be discarded if one changed
        chosen = self.masker.decide(conv, settings.tool_output_masking)
        if not chosen:
            return
        masking = self.masker.mask(conv, chosen)
        if masking is None:
            return
        self.live.recorder.mask(
            {masking.ids[i]: c for i, c in masking.replacements.items()}, masking.count, masking.tokens_saved
        )
        conv.replace_items(masking.replacements)
        message = masking.message()
        self.live.recorder.note("info", message, turn_id)
        self._notify.masked(
            ToolOutputsMaskedParams(
                session_id=conv.session_id,
                turn_id=turn_id,
                masked_count=masking.count,
                tokens_saved=masking.tokens_saved,
                message=message,
            )
        )
        self.live.push_usage()

    def _close_failed_round(self, exc: ModelError, turn_id: str) -> None:
        """After a failed model call: a prompt the API refused leaves the history (the recording keeps it); after
        tool responses a closing model turn keeps the next user message its own turn."""
        conv = self._conversation
        last = conv.last()
        if last is None:
            return
        if is_function_response(last):
            closing = INTERRUPTED if exc.kind != "blocked" else f"[No reply: {exc.message}]"
            self._append(text_content("model", closing), "model", turn_id)
        elif exc.reason == "PROMPT_BLOCKED" and last.role == "user":
            self.live.recorder.rewind(conv.ids[-1])
            conv.truncate(len(conv) - 1)

    def _append(
        self,
        content: Content,
        kind: MessageKind,
        turn_id: str | None,
        shown: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> str:
        """Add to the model-facing history and to the recording, keeping the two in step (`shown`: the
        transcript's text, when it is not the content's; `meta`: recorded with it); the message's recorded id."""
        message_id = self.live.recorder.message(content, kind, turn_id, shown, meta)
        self._conversation.append(content, message_id)
        return message_id

    def _add_ide_context(self, turn_id: str | None = None, editor: list[OpenFile] | None = None) -> None:
        """Add the editor context turn (full after any history replacement, else a delta) unless a call is pending."""
        conv, ide = self._conversation, self.live.ide
        editor = ide.current if editor is None else editor
        if conv.tool_call_pending() or (editor is None and not ide.changed_on_disk):
            return  # deferred: the flag stays set and the next regular turn carries it
        current = editor if editor is not None else []
        text = context_turn_text(
            current,
            ide.last_sent,
            force_full=conv.force_full_ide_context or not len(conv),
            changed_on_disk=sorted(ide.changed_on_disk),
        )
        if text is not None:
            self._append(text_content("user", text), "ideContext", turn_id)
        ide.changed_on_disk.clear()
        ide.last_sent = current
        conv.force_full_ide_context = False

    def _emit(self, turn_id: str, chunk: Chunk) -> None:
        if chunk.text:
            self._notify.message_delta(turn_id, chunk.text)
            self.loops.on_text(chunk.text)
        thought = "".join(p.text for p in chunk.parts if p.thought and p.text)
        if thought:
            self._notify.thought_delta(turn_id, thought)

    def _keep_reply(self, parts: list[Part], turn_id: str, *, text_only: bool) -> list[Part]:
        kept = merge_text_parts([p for p in parts if not text_only or (p.text is not None)])
        if kept:
            kind: MessageKind = "toolCall" if any(p.function_call for p in kept) else "model"
            self._append(Content(role="model", parts=kept), kind, turn_id)
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


def _error_response(call: FunctionCall, message: str) -> Part:
    return Part(function_response=FunctionResponse(name=call.name, id=call.id, response={"error": message}))


def _text_of(parts: list[Part]) -> str:
    return "".join(p.text for p in parts if p.text and not p.thought)
