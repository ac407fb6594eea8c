"""The one owner of the live conversation: its lock, the compressing flag, switching conversations, token usage."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Protocol

from sidecar.compaction.background import BackgroundCompaction
from sidecar.compaction.service import Compactor, compaction_due_next
from sidecar.compaction.summary_request import ChatFrame
from sidecar.core.content_json import decode_content
from sidecar.core.conversation import Conversation
from sidecar.core.history import FunctionCall
from sidecar.core.pins import with_pins
from sidecar.core.prompts import AGENT_SYSTEM_PROMPT
from sidecar.core.request_overhead import request_overhead_tokens
from sidecar.core.todos import TodoItem, todo_block
from sidecar.core.working_set import OPENING, REATTACHED_WHERE, reattached_contents
from sidecar.memory.session_context import SessionContext
from sidecar.protocol import errors
from sidecar.protocol.ide import OpenFile
from sidecar.protocol.types import EstimateReason, TokenUsage
from sidecar.recording.recorder import Recorder
from sidecar.session import IdeState, Session
from sidecar.tools.tool import EarlierResult

ALREADY_COMPRESSING = "Already compressing, wait for previous request to complete"


class UsageSink(Protocol):
    """Where usage pushes and warnings go (the chat Notifier; sidecar.rpc.editor.Notifier on the editor side)."""

    def token_usage(self, usage: TokenUsage) -> None:
        """Show the usage (the status bar; usage_update over ACP)."""

    def warning(self, message: str) -> None:
        """Show a warning in words."""


class LiveConversation:
    """The live conversation of one Session and everything that must change with it.

    Turns, compactions and history replacements (new, resume, fork, rewind, undo) take `lock`, so they run one at a
    time in arrival order (asyncio.Lock wakes waiters in FIFO order); `switch` is the only way to replace the
    conversation; `push_usage` the only way usage reaches the editor, once per change of state.
    """

    def __init__(
        self,
        session: Session,
        recorder: Recorder,
        compactor: Compactor,
        sink: UsageSink,
        *,
        declarations: Callable[[], list[dict[str, Any]]] | None = None,
        backend_label: Callable[[], str] | None = None,
        context: SessionContext | None = None,
        on_todos: Callable[[str, list[TodoItem]], None] | None = None,
    ) -> None:
        self.session = session
        #: Told the session id and its todo list whenever the list changes or another conversation takes over.
        self._on_todos = on_todos
        #: The context files and the <session_context> turn (None: neither, as some service tests run).
        self.context = context
        self._memory_check: asyncio.Future[bool] | None = None
        self.recorder = recorder
        self._sink = sink
        self._declarations = declarations
        #: Where requests go, for the status bar.
        self._backend_label = backend_label or (lambda: "")
        #: Serialises turns, compactions and history replacements.
        self.lock = asyncio.Lock()
        #: A manual compaction is running or waiting for the lock (a second one is refused, not queued).
        self.compressing = False
        #: cachedContentTokenCount of the last reply.
        self.cached_tokens: int | None = None
        #: The recorded id of the user message of the turn running (or last run) in this conversation: the turn a
        #: checkpoint belongs to (sidecar/checkpoints/). None until a turn of this conversation records its message.
        self.turn_message_id: str | None = None
        self._usage = TokenUsage(
            seq=0,
            session_id="",
            model="",
            prompt_token_count=0,
            token_limit=1,
            percent_used=0.0,
            compression_threshold=0.0,
            source="estimate",
        )
        self._pushed_seq = 0
        #: Summaries prepared before they are needed, so that no turn waits for one (docs/compaction.md).
        self.background = BackgroundCompaction(session, compactor, self.push_usage)

    def start(self) -> None:
        """Begin recording the conversation (Services.start, once the front-end is initialised): its file is
        created when the first record arrives."""
        self.recorder.start(self.session.conversation.session_id)
        self.turn_message_id = None
        self.session.conversation.estimate_reason = "newSession"  # counted on first use: the tools need the server

    @property
    def conversation(self) -> Conversation:
        """The conversation the model sees now."""
        return self.session.conversation

    @property
    def ide(self) -> IdeState:
        """What the editor last reported, and what the model last saw of it."""
        return self.session.ide

    # -- switching ------------------------------------------------------------------------------------
    def switch(self, conversation: Conversation) -> None:
        """Replace the conversation wholesale (caller holds the lock): the next turn sends the full IDE context,
        and a summary prepared for the old history is never applied to this one."""
        self.background.discard()
        self.turn_message_id = None  # the next turn of the new conversation names its own message
        had_todos = bool(self.conversation.todos)
        self.session.switch(conversation)
        if had_todos or conversation.todos:  # the front-end shows the list of the conversation now live
            self._tell_todos()

    def turn_started(self, message_id: str) -> None:
        """A turn recorded its user message: the files its tools change are checkpointed under `message_id`."""
        self.turn_message_id = message_id

    def settings_changed(self) -> None:
        """After a settings reload: e.g. another model makes a prepared summary stale; the context files are
        looked at again (other names, another trust)."""
        self.background.check(self.conversation)
        if self.context is not None and self.context.memory.loaded:
            self._memory_check = asyncio.ensure_future(self.context.memory.check(force=True))

    def set_todos(self, items: list[TodoItem]) -> None:
        """Replace the todo list (write_todos, or the user clears it): recorded, shown, counted in the usage."""
        self.conversation.set_todos(items)
        self.recorder.todos(list(items))
        self._tell_todos()
        self.push_usage()

    def _tell_todos(self) -> None:
        if self._on_todos is not None:
            conv = self.conversation
            self._on_todos(conv.session_id, list(conv.todos))

    def pins_changed(self) -> None:
        """After a pin or unpin: a summary prepared with other pinned facts is stale; the usage changed."""
        self.background.check(self.conversation)
        self.push_usage()

    @asynccontextmanager
    async def manual_compaction(self) -> AsyncIterator[None]:
        """The user's compaction: never two at once (the second is refused in words), under the lock."""
        if self.compressing:
            raise errors.SidecarError(errors.BUSY, ALREADY_COMPRESSING)
        self.compressing = True
        try:
            async with self.lock:
                yield
        finally:
            self.compressing = False

    # -- usage ----------------------------------------------------------------------------------------
    def usage(self) -> TokenUsage:
        """The current usage, stamped with the `seq` of its state (a new number only when the state changed)."""
        settings = self.session.settings
        conv = self.conversation
        if conv.estimate_reason is not None:
            self.fresh_estimate(conv.estimate_reason)  # its overhead follows the tools on offer (trust)
        limit = settings.effective_token_limit()
        state = TokenUsage(
            seq=self._usage.seq,
            session_id=conv.session_id,
            model=settings.model,
            prompt_token_count=conv.last_prompt_tokens,
            token_limit=limit,
            percent_used=round(100.0 * conv.last_prompt_tokens / limit, 1),
            compression_threshold=settings.compression_threshold,
            source=conv.usage_source,
            backend=self._backend_label(),
            cached_token_count=self.cached_tokens,
            estimate_reason=conv.estimate_reason,
            summary_preparation=self.background.state(conv),
            auto_compaction_paused_until=conv.auto_compaction_paused_until,
            compacts_at_next_message=compaction_due_next(conv, settings) and not conv.compaction_postponed,
            compaction_postponed=conv.compaction_postponed,
        )
        if state != self._usage:
            state.seq += 1
            self._usage = state
        return self._usage

    def push_usage(self) -> None:
        """Tell the editor the usage, once per change of state: a repeat of the last pushed state is not sent."""
        usage = self.usage()
        if usage.seq > self._pushed_seq:
            self._pushed_seq = usage.seq
            self._sink.token_usage(usage)

    def warn(self, message: str) -> None:
        """A warning the user sees in words."""
        self._sink.warning(message)

    def system_instruction(self, tools: bool) -> str | None:
        """A chat request's system instruction: the agent prompt (when tools are offered), the global memory
        (~/.gemini/GEMINI.md …), then the pinned facts and the todo list (outside the history: no compaction loses
        them)."""
        memory = self.context.memory.system_section() if self.context is not None else None
        base = "\n\n".join(t for t in (AGENT_SYSTEM_PROMPT if tools else None, memory) if t) or None
        pinned = with_pins(base, self.conversation.pins)
        todos = todo_block(self.conversation.todos)
        return "\n\n".join(t for t in (pinned, todos) if t) or None

    def chat_frame(self) -> ChatFrame:
        """What a chat request sends beside its contents: the system instruction and the tool declarations on
        offer. The one builder: the chat's requests and the summary requests both take it from here."""
        tools = self._declarations() if self._declarations is not None else None
        return ChatFrame(self.system_instruction(bool(tools)), tools or None)

    def results_in_view(self, tool: str) -> list[EarlierResult]:
        """`tool`'s calls whose output the model still sees verbatim in the next request, newest first: answered in
        the current history (not compacted away) with a string output. This is the question a tool asks before
        repeating itself (read_file's "unchanged since" note); anything that shows the model less than the full
        output (masking old outputs, truncation) must make this leave that result out."""
        found: list[EarlierResult] = []
        wire = self.conversation.wire()
        needle = tool.encode()
        for index in range(len(wire) - 1, 0, -1):
            if needle not in wire[index] or b"functionResponse" not in wire[index]:
                continue
            content, previous = decode_content(wire[index]), decode_content(wire[index - 1])
            calls = [p.function_call for p in previous.parts if p.function_call is not None]
            responses = [p.function_response for p in content.parts if p.function_response is not None]
            for position, response in enumerate(responses):
                output = response.response.get("output") if isinstance(response.response, dict) else None
                call = _call_for(calls, response.id, position)
                if response.name == tool and isinstance(output, str) and call is not None and call.name == tool:
                    found.append(EarlierResult(response.id or call.id or "", dict(call.args or {}), output))
        if tool == "read_file":  # the files re-attached after the last compaction are read_file's output too
            found += [
                EarlierResult("", {"path": shown}, text, REATTACHED_WHERE) for shown, text in self._reattached(wire)
            ]
        return found

    @staticmethod
    def _reattached(wire: list[bytes]) -> list[tuple[str, str]]:
        """The files re-attached after the snapshot of a compacted history (its second or third item)."""
        for item in wire[:3]:
            if OPENING.encode() in item:
                parts = decode_content(item).parts
                return [f for p in parts if p.text and p.text.startswith(OPENING) for f in reattached_contents(p.text)]
        return []

    def fresh_estimate(self, reason: EstimateReason | None) -> None:
        """After a history rewrite (new session, undo, resume without a count): estimate what the next request
        sends — history, system instruction (with the pinned facts) and tool declarations — and say why it is an
        estimate."""
        tools = self._declarations() if self._declarations is not None else None
        conv = self.conversation
        overhead = request_overhead_tokens(self.system_instruction(bool(tools)), tools)
        if self.context is not None:  # the session context the next turn puts at the head, when not there yet
            overhead += self.context.estimated_tokens(conv)
        conv.set_prompt_tokens(conv.estimated_tokens() + overhead, "estimate", reason)

    # -- editor context -------------------------------------------------------------------------------
    def set_ide_context(self, files: list[OpenFile], trusted: bool | None) -> bool:
        """Store what the editor reports; True when the workspace trust changed."""
        self.ide.current = files
        changed = trusted is not None and trusted != self.ide.trusted
        if trusted is not None:
            self.ide.trusted = trusted
        return changed

    def files_changed(self, paths: set[str]) -> None:
        """Changes seen on disk; tracked files not open in the editor are reported in the next context turn."""
        self.ide.note_changes(paths)
        if self.context is not None and self.context.memory.concerns(paths):
            self._memory_check = asyncio.ensure_future(self.context.memory.check())  # the editor's tooltip now


def _call_for(calls: list[FunctionCall], call_id: str | None, position: int) -> FunctionCall | None:
    """The call a response answers: by id when it has one, else the call at the same position."""
    if call_id:
        return next((c for c in calls if c.id == call_id), None)
    return calls[position] if position < len(calls) else None
