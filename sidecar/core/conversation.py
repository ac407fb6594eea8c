"""One session's model-facing history with incremental token accounting and the per-history flags."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from sidecar.core.compaction import measure_content
from sidecar.core.history import Content, has_function_call

UsageSource = Literal["api", "estimate"]


class Conversation:
    """The history sent to the model, plus what the status bar and compaction need to know about it.

    Token accounting is incremental: each content's estimate is computed once when it enters the
    history, so no per-turn work grows with the length of the conversation.
    """

    def __init__(
        self, session_id: str, history: Iterable[Content] = (), ids: Sequence[str] | None = None
    ) -> None:
        self.session_id = session_id
        self.history: list[Content] = []
        #: The recording's message id of each history item ("" when it was not recorded).
        self.ids: list[str] = []
        self._quarters: list[int] = []
        self._sizes: list[int] = []  # JSON.stringify length of each content, for the split point
        self._total_quarters = 0
        self.last_prompt_tokens = 0
        self.usage_source: UsageSource = "estimate"
        #: The next context turn must carry the full IDE context (set on every wholesale replacement).
        self.force_full_ide_context = True
        #: Gemini CLI's latch: after an auto compaction inflated, auto attempts only truncate.
        self.has_failed_compression_attempt = False
        self.replace(list(history), ids)

    # -- reading ------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.history)

    def estimated_tokens(self) -> int:
        """The reference's local estimate of the whole history (estimateTokenCountSync over all parts)."""
        return self._total_quarters // 4

    def content_tokens(self, index: int) -> int:
        return self._quarters[index] // 4

    def tool_call_pending(self) -> bool:
        """True when the last item is a model turn with a functionCall still waiting for its response."""
        return bool(self.history) and self.history[-1].role == "model" and has_function_call(self.history[-1])

    # -- changing ------------------------------------------------------------------------------------
    def json_sizes(self) -> list[int]:
        """Each content's JSON length (the split point's measure), computed once when it was added."""
        return list(self._sizes)

    def append(self, content: Content, msg_id: str = "") -> None:
        measure = measure_content(content)
        self.history.append(content)
        self.ids.append(msg_id)
        self._quarters.append(measure.quarters)
        self._sizes.append(measure.json_length)
        self._total_quarters += measure.quarters
        self._mark_estimate()

    def truncate(self, length: int) -> None:
        """Drop everything from `length` on (used to roll back a turn that must leave no trace)."""
        if length >= len(self.history):
            return
        self._total_quarters -= sum(self._quarters[length:])
        del self.history[length:]
        del self.ids[length:]
        del self._quarters[length:]
        del self._sizes[length:]
        self._mark_estimate()

    def replace(self, history: Sequence[Content], ids: Sequence[str] | None = None) -> None:
        """Replace the whole history (compaction, resume, undo): usage becomes an estimate again."""
        self.history = list(history)
        self.ids = list(ids) if ids is not None else [""] * len(self.history)
        if len(self.ids) != len(self.history):
            raise ValueError(f"{len(self.ids)} ids for {len(self.history)} history items")
        measures = [measure_content(c) for c in self.history]
        self._quarters = [m.quarters for m in measures]
        self._sizes = [m.json_length for m in measures]
        self._total_quarters = sum(self._quarters)
        self._mark_estimate()
        self.force_full_ide_context = True

    def record_api_usage(self, prompt_token_count: int) -> None:
        """The API's promptTokenCount of the request that just completed."""
        self.last_prompt_tokens = prompt_token_count
        self.usage_source = "api"

    def set_prompt_tokens(self, count: int, source: UsageSource) -> None:
        self.last_prompt_tokens = count
        self.usage_source = source

    def _mark_estimate(self) -> None:
        self.last_prompt_tokens = self._total_quarters // 4
        self.usage_source = "estimate"
