"""One session's model-facing history (as JSON bytes) with incremental token accounting and per-history flags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sidecar.core.compaction import ContentMeasure, measure_content
from sidecar.core.content_json import decode_content, decode_contents, encode_content
from sidecar.core.history import Content, has_function_call
from sidecar.core.memory_text import is_session_context
from sidecar.core.pins import Pin, pins_tokens
from sidecar.core.snapshot import FACT_CACHE
from sidecar.core.todos import TodoItem, todo_tokens
from sidecar.protocol.types import EstimateReason, UsageSource


class Conversation:
    """The history sent to the model, plus what the status bar and compaction need to know about it.

    Each content is held as its JSON bytes, encoded once when it enters the history: a request sends them as
    they are (no per-turn re-serialisation), and they take a quarter of the memory of decoded strings (CPython
    stores a whole string at 4 bytes per character once it holds one emoji). Token accounting is incremental
    too: each content's estimate and JSON length are computed once, so no per-turn work grows with the length
    of the conversation. `history` decodes the whole list and is for compaction, not for every turn.
    """

    def __init__(self, session_id: str, history: Iterable[Content] = (), ids: Sequence[str] | None = None) -> None:
        self.session_id = session_id
        self._wire: list[bytes] = []
        #: The recording's message id of each history item ("" when it was not recorded).
        self.ids: list[str] = []
        self._quarters: list[int] = []
        self._sizes: list[int] = []  # JSON.stringify length of each content, for the split point
        self._total_quarters = 0
        self.last_prompt_tokens = 0
        self.usage_source: UsageSource = "estimate"
        #: Why the usage is an estimate when it was set as a fresh one (newSession, undo, resume); None otherwise.
        self.estimate_reason: EstimateReason | None = None
        #: The next context turn must carry the full IDE context (set on every wholesale replacement).
        self.force_full_ide_context = True
        #: Gemini CLI's latch: after an auto compaction inflated, auto attempts only truncate.
        self.has_failed_compression_attempt = False
        #: The head of the history is a <session_context> built for this conversation (sidecar.memory): False for
        #: every new, resumed, forked or undone one, whose first turn puts a fresh one there.
        self.session_context_fresh = False
        #: After "Undo Last Compaction": automatic compaction waits until the prompt reaches this many tokens (or
        #: the user compresses), so the undo lasts (sidecar.compaction.service.auto_compaction_due).
        self.auto_compaction_paused_until: int | None = None
        #: The user postponed the automatic compaction due at the next message: that turn skips it (once; a request
        #: that would not fit the window still compacts).
        self.compaction_postponed = False
        #: The session's pinned facts: every request carries them (outside the history, so no rewrite drops them).
        self.pins: list[Pin] = []
        self.pinned_tokens = 0
        #: The model's todo list (write_todos): every request carries it, outside the history, like the pins.
        self.todos: list[TodoItem] = []
        self.todo_tokens = 0
        self.replace(list(history), ids)

    @classmethod
    def from_wire(cls, session_id: str, wire: Sequence[bytes], ids: Sequence[str] | None = None) -> Conversation:
        """A conversation over recorded contents' JSON (a resumed session), decoded one at a time to measure."""
        conv = cls(session_id)
        conv.replace_wire(wire, ids)
        return conv

    # -- reading ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._wire)

    @property
    def history(self) -> list[Content]:
        """The whole history, decoded (O(history): for compaction and inspection, not for every turn)."""
        return decode_contents(self._wire)

    def wire(self) -> list[bytes]:
        """Each content's JSON, as a request sends it. The live list: read it, never change it."""
        return self._wire

    def first_text(self) -> str | None:
        """The text of the history's first item (None when empty or not text)."""
        if not self._wire:
            return None
        parts = decode_content(self._wire[0]).parts
        return parts[0].text if parts else None

    def messages_shown(self) -> int:
        """How many messages the user is told of: the hidden <session_context> turn at the head is not counted."""
        return len(self._wire) - (1 if is_session_context(self.first_text()) else 0)

    def last(self) -> Content | None:
        return decode_content(self._wire[-1]) if self._wire else None

    def estimated_tokens(self) -> int:
        """The reference's local estimate of the whole history (estimateTokenCountSync over all parts)."""
        return self._total_quarters // 4

    def content_tokens(self, index: int) -> int:
        return self._quarters[index] // 4

    def tool_call_pending(self) -> bool:
        """True when the last item is a model turn with a functionCall still waiting for its response."""
        last = self.last()
        return last is not None and last.role == "model" and has_function_call(last)

    def frozen_copy(self) -> Conversation:
        """The history as it is now, for work that runs while the live one grows (a background summary).
        The contents' bytes are shared (they never change); the lists are copied, so later changes don't show."""
        copy = Conversation(self.session_id)
        copy._wire, copy.ids = list(self._wire), list(self.ids)
        copy._quarters, copy._sizes = list(self._quarters), list(self._sizes)
        copy._total_quarters = self._total_quarters
        copy.last_prompt_tokens, copy.usage_source = self.last_prompt_tokens, self.usage_source
        copy.estimate_reason = self.estimate_reason
        copy.force_full_ide_context = self.force_full_ide_context
        copy.has_failed_compression_attempt = self.has_failed_compression_attempt
        copy.session_context_fresh = self.session_context_fresh
        copy.auto_compaction_paused_until = self.auto_compaction_paused_until
        copy.compaction_postponed = self.compaction_postponed
        copy.pins, copy.pinned_tokens = list(self.pins), self.pinned_tokens
        copy.todos, copy.todo_tokens = list(self.todos), self.todo_tokens
        return copy

    def starts_with(self, prefix: Sequence[bytes]) -> bool:
        """Whether the history's first items are exactly `prefix` (the same contents, in order)."""
        if len(prefix) > len(self._wire):
            return False
        return all(a is b or a == b for a, b in zip(self._wire, prefix, strict=False))

    # -- changing ------------------------------------------------------------------------------------
    def json_sizes(self) -> list[int]:
        """Each content's JSON length (the split point's measure), computed once when it was added."""
        return list(self._sizes)

    def append(self, content: Content, msg_id: str = "") -> None:
        measure = measure_content(content)
        wire = encode_content(content)
        FACT_CACHE.facts(content, wire)  # the retention check's scan, once per content (compaction reads it)
        self._wire.append(wire)
        self.ids.append(msg_id)
        self._quarters.append(measure.quarters)
        self._sizes.append(measure.json_length)
        self._total_quarters += measure.quarters
        self._mark_estimate()

    def put_first(self, content: Content, *, replace: bool, msg_id: str = "") -> None:
        """Put `content` at the head of the history: in place of the first item (`replace`) or before it. The
        prompt's token count moves by the estimated difference and keeps its source (a resumed session's API count
        stays the basis of the compaction threshold)."""
        measure = measure_content(content)
        before = self._total_quarters
        if replace and self._wire:
            self._total_quarters -= self._quarters[0]
            self._wire[0] = encode_content(content)
            self._quarters[0], self._sizes[0] = measure.quarters, measure.json_length
            self.ids[0] = msg_id or self.ids[0]
        else:
            self._wire.insert(0, encode_content(content))
            self.ids.insert(0, msg_id)
            self._quarters.insert(0, measure.quarters)
            self._sizes.insert(0, measure.json_length)
        self._total_quarters += measure.quarters
        self.last_prompt_tokens = max(0, self.last_prompt_tokens + (self._total_quarters - before) // 4)

    def replace_items(self, replacements: Mapping[int, Content]) -> None:
        """Replace some items in place (masked tool outputs), ids kept; the prompt's token count moves by the
        estimated difference and keeps its source, as put_first does."""
        before = self._total_quarters
        for index, content in replacements.items():
            measure = measure_content(content)
            self._total_quarters += measure.quarters - self._quarters[index]
            self._wire[index] = encode_content(content)
            self._quarters[index], self._sizes[index] = measure.quarters, measure.json_length
        self.last_prompt_tokens = max(0, self.last_prompt_tokens + (self._total_quarters - before) // 4)

    def truncate(self, length: int) -> None:
        """Drop everything from `length` on (used to roll back a turn that must leave no trace)."""
        if length >= len(self._wire):
            return
        self._total_quarters -= sum(self._quarters[length:])
        del self._wire[length:]
        del self.ids[length:]
        del self._quarters[length:]
        del self._sizes[length:]
        self._mark_estimate()

    def replace(self, history: Sequence[Content], ids: Sequence[str] | None = None) -> None:
        """Replace the whole history (compaction, undo): usage becomes an estimate again."""
        measures = [measure_content(c) for c in history]
        wire = [encode_content(c) for c in history]
        for content, item in zip(history, wire, strict=True):
            FACT_CACHE.facts(content, item)  # kept contents are found by their bytes: no rescan
        self._set(wire, ids, measures)

    def replace_wire(self, wire: Sequence[bytes], ids: Sequence[str] | None = None) -> None:
        """Replace the whole history with recorded contents' JSON (resume), kept as recorded."""
        self._set(list(wire), ids, [measure_content(decode_content(item)) for item in wire])

    def _set(self, wire: list[bytes], ids: Sequence[str] | None, measures: list[ContentMeasure]) -> None:
        ids = list(ids) if ids is not None else [""] * len(wire)
        if len(ids) != len(wire):
            raise ValueError(f"{len(ids)} ids for {len(wire)} history items")
        self._wire, self.ids = wire, ids
        self._quarters = [m.quarters for m in measures]
        self._sizes = [m.json_length for m in measures]
        self._total_quarters = sum(self._quarters)
        self._mark_estimate()
        self.force_full_ide_context = True

    def set_pins(self, pins: Sequence[Pin]) -> None:
        """Replace the pinned facts; the prompt's token count follows (as an estimate of the change)."""
        before = self.pinned_tokens
        self.pins = list(pins)
        self.pinned_tokens = pins_tokens(self.pins)
        self.last_prompt_tokens = max(0, self.last_prompt_tokens + self.pinned_tokens - before)
        self.usage_source = "estimate"

    def set_todos(self, todos: Sequence[TodoItem]) -> None:
        """Replace the todo list; the prompt's token count follows (as an estimate of the change)."""
        before = self.todo_tokens
        self.todos = list(todos)
        self.todo_tokens = todo_tokens(self.todos)
        self.last_prompt_tokens = max(0, self.last_prompt_tokens + self.todo_tokens - before)
        self.usage_source = "estimate"

    def record_api_usage(self, prompt_token_count: int) -> None:
        """The API's promptTokenCount of the request that just completed."""
        self.last_prompt_tokens = prompt_token_count
        self.usage_source = "api"
        self.estimate_reason = None

    def set_prompt_tokens(self, count: int, source: UsageSource, reason: EstimateReason | None = None) -> None:
        self.last_prompt_tokens = count
        self.usage_source = source
        self.estimate_reason = reason if source == "estimate" else None

    def _mark_estimate(self) -> None:
        self.last_prompt_tokens = self._total_quarters // 4 + self.pinned_tokens + self.todo_tokens
        self.usage_source = "estimate"
        self.estimate_reason = None
